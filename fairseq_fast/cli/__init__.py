"""The command-line tools' side: the post-processing pipeline (async_cli.py, pipeline.py,
postprocess.py), output and input faults (output.py, interactive_input.py), batching that loses
no sentence (batching.py), option checks (checks.py), and one job over many processes
(distributed.py, chunks.py; the command is fairseq_fast/generate.py). The top layer below
overrides.py."""

"""The peak resident set of one fairseq engine alone, as a fairseq-generate run of it would hold
it, in a process of its own: load the target (and the draft, for the engines that use one),
build the engine's generator (benchmarks.engines.build_generator), decode the row's longest
batch (or every batch, or every batch streamed through generate_stream with the batch size as
the rows in flight), print the process's peak RSS in MiB.

    python -m benchmarks.engine_rss JOB.json

JOB.json: {engine, target, data, draft (or null), draft_vocab, counts, draft_len, beam,
batch_size, sentences, threads, decode: "longest", "all" or "stream"}. `alone` writes such a
job from its arguments and runs this module on it.
"""
import json
import os
import sys

from benchmarks.harness import run_module
from benchmarks.probes import peak_rss_mib


def alone(engine, target, data, *, batch_size, sentences, threads, folder, draft=None,
          draft_vocab=0, counts=None, draft_len=None, beam=1, decode="longest",
          prefix="benchmarks"):
    """Peak RSS MiB of `engine` (benchmarks.engines' name) in a process of its own: the job
    above from these arguments, its paths made absolute, written in `folder`."""
    def absolute(path):
        return path and os.path.abspath(path)

    job = {"engine": engine, "target": absolute(target), "data": absolute(data),
           "draft": absolute(draft), "draft_vocab": draft_vocab, "counts": absolute(counts),
           "draft_len": draft_len, "beam": beam, "batch_size": batch_size,
           "sentences": sentences, "threads": threads, "decode": decode}
    path = os.path.join(folder, "rss-probe.json")
    with open(path, "w") as f:
        json.dump(job, f)
    out = run_module("benchmarks.engine_rss", [path], f"peak RSS of {job['engine']} alone",
                     prefix)
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    import torch

    import fairseq_fast  # noqa: F401  (the plugin's overrides, as --user-dir loads them)
    from benchmarks.engines import SPECULATIVE_ENGINES, build_generator
    from benchmarks.models import batches, decode_all, load_target
    from fairseq_fast.speculative.draft_loading import load_draft
    from fairseq_fast.speculative.draft_vocab import shortlist

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: python -m benchmarks.engine_rss JOB.json")
    with open(argv[0]) as f:
        job = json.load(f)
    torch.set_grad_enabled(False)
    torch.set_num_threads(job["threads"])
    target, cfg, task = load_target(job["target"], job["data"])
    draft = vocab = None
    if job["draft"]:
        draft = load_draft(task, job["draft"], target)
    if job["engine"] in SPECULATIVE_ENGINES:
        vocab = shortlist(task.target_dictionary, job["draft_vocab"], job["counts"])
    generator = build_generator(job["engine"], task, target, cfg, draft, vocab, job["beam"],
                                job["draft_len"])
    samples, _ = batches(task, job["sentences"], job["batch_size"])
    decode = job["decode"]
    if decode not in ("longest", "all", "stream"):
        sys.exit(f"engine_rss: decode must be longest, all or stream, not {decode!r}")
    if decode == "stream":
        for _ in generator.generate_stream(((s, None) for s in samples), job["batch_size"]):
            pass
    else:  # sorted by length: the last batch is the longest
        decode_all(generator, target, samples if decode == "all" else samples[-1:], seed=0)
    print(json.dumps(peak_rss_mib()))


if __name__ == "__main__":
    main()

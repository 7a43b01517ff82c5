"""The model-shapes benchmark's own parts: the shapes build the models they name, with the
dictionary sizes of the released models; checkpoints store tied weights once; a step's weights
are counted as a step reads them; fairseq's log lines are read as fairseq writes them."""
import os
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import benchmark_shapes  # noqa: E402
from benchmarks import shapes  # noqa: E402


def _task_and_args(shape, folder):
    from fairseq import options, tasks

    names = ["dict.txt"] + ([f"dict.{lang}.txt" for lang in shape.langs]
                            if shape.task == shapes.TRANSLATION else [])
    for name in names:
        shapes.dictionary_file(os.path.join(folder, name), shape.words)
    args = options.parse_args_and_arch(options.get_training_parser(),
                                       shapes.model_options(shape, str(folder)))
    return tasks.setup_task(args), args


@pytest.mark.parametrize("shape", shapes.SHAPES, ids=lambda s: s.name)
def test_a_shape_has_its_models_dictionary_and_architecture(shape, tmp_path):
    task, args = _task_and_args(shape, tmp_path)
    assert len(task.target_dictionary) == shape.symbols
    options = dict(shapes._pairs(shape.options))
    for flag, value in options.items():
        name = flag[2:].replace("-", "_")
        if value is not None and hasattr(args, name):
            got = getattr(args, name)
            assert str(got) == value or float(got) == float(value), flag
    if shape.task == shapes.MULTILINGUAL:
        assert task.target_dictionary.index("__de__") != task.target_dictionary.unk()
        assert args.encoder_normalize_before and args.decoder_normalize_before


@pytest.mark.parametrize("name", ["m2m100_418M", "xglm-564M"])
def test_a_tiny_shape_builds_and_saves_its_tied_weights_once(name, tmp_path):
    shape = shapes.tiny(shapes.find(name))
    task, args = _task_and_args(shape, tmp_path)
    assert args.decoder_embed_dim == 64 and args.decoder_layers == 2
    model = task.build_model(args)
    path = str(tmp_path / "model.pt")
    shapes.save_float16(model, args, path)
    state = torch.load(path, map_location="cpu", weights_only=False)["model"]
    embed = state["decoder.embed_tokens.weight"]
    assert embed.dtype == torch.float16
    assert state["decoder.output_projection.weight"].data_ptr() == embed.data_ptr()
    layers = sum(v.numel() for k, v in model.state_dict().items()
                 if k.startswith("decoder.layers.") and ".encoder_attn.k_proj." not in k
                 and ".encoder_attn.v_proj." not in k)
    final = sum(v.numel() for k, v in model.state_dict().items()
                if k.startswith("decoder.layer_norm."))
    assert shapes.step_parameters(path) == layers + final + embed.numel()


def test_fairseqs_log_lines_are_read_as_it_writes_them():
    line = ("2026-01-01 | INFO | fairseq_cli.generate | Translated 1,206 sentences (29,112 "
            "tokens) in 8.0s (0.75 sentences/s, 36.96 tokens/s)")
    assert benchmark_shapes.GENERATED.findall(line) == [("1,206", "29,112", "0.75", "36.96")]
    line = "INFO:fairseq_cli.interactive:Total time: 0.292 seconds; translation time: 0.188"
    assert benchmark_shapes.INTERACTIVE.findall(line) == ["0.188"]
    assert benchmark_shapes.repeats_ngram("a b c a b c", 3)
    assert not benchmark_shapes.repeats_ngram("a b c b a c", 3)


@pytest.mark.parametrize("name", ["m2m100_418M", "xglm-564M"])
def test_ctranslate2_decodes_a_shape_as_fairseq_generate_does(name, tmp_path):
    """CTranslate2's column translates what stock fairseq translates, with its settings: the
    converted checkpoint (a language model's through a copy with legacy args), the language
    tokens, the length limits and the token counts match stock's hypotheses in float32 on a tiny
    shape."""
    pytest.importorskip("ctranslate2")
    shape = shapes.tiny(shapes.find(name))
    setting = shape.settings[0]
    folder = str(tmp_path / shape.name)
    torch.manual_seed(0)
    shapes.make(shape, folder, log=lambda *a: None)
    lines = shapes.sentences(shape, setting.sentences)
    stock = benchmark_shapes.run_once(shape, setting, folder, benchmark_shapes.STOCK, 1, lines)
    model_dir = benchmark_shapes.ct2_models(shape, folder, ["float32"])["float32"]
    job = benchmark_shapes.ct2_job(shape, setting, model_dir, "float32", 1, lines)
    ct2 = benchmark_shapes.run_ct2(job, str(tmp_path / "job.json"), lines)
    assert len(stock.outputs) == setting.sentences
    assert ct2.outputs == stock.outputs
    assert ct2.tokens == stock.tokens
    assert not os.path.exists(model_dir.rstrip("/") + ".fairseq.pt")

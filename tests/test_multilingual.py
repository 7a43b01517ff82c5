"""translation_multi_simple_epoch, as M2M-100 and NLLB users run it (--encoder-langtok src
--decoder-langtok): the task forces the target language's token as a prefix and names it to be
left out of the text. Through the task, the plugin's default generator and its speculative
generator (a model draft on the same dictionary, n-gram lookup, the target's own layers) give
stock fairseq's tokens and scores (float64), and the same text."""
import pytest
import torch
from fairseq import options, tasks
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
from fairseq.tasks import FairseqTask
from fairseq_cli.generate import get_symbols_to_strip_from_output

import fairseq_fast  # noqa: F401  (applies the overrides)
from fairseq_fast.draft.export import write_half
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from model_factory import source_batch, translation_model
from test_fast_defaults import assert_same

TASK = "translation_multi_simple_epoch"
# the stock parser: the plugin's command-line handling is not what this test is about
parse = getattr(options.parse_args_and_arch, "__wrapped__", options.parse_args_and_arch)


def task_options(folder):
    return [str(folder), "--task", TASK, "--lang-pairs", "en-de", "--fixed-dictionary",
            str(folder / "dict.txt"), "--encoder-langtok", "src", "--decoder-langtok"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multilingual")
    (folder / "dict.txt").write_text("".join(f"w{i} 1\n" for i in range(24)))
    return folder


@pytest.fixture(scope="module")
def task(folder):
    args = parse(options.get_generation_parser(default_task=TASK),
                 task_options(folder) + ["--source-lang", "en", "--target-lang", "de"])
    return tasks.setup_task(args)


@pytest.fixture(scope="module")
def draft_path(folder):
    """A one-layer draft for the same task, written as the draft exporter writes one."""
    args = parse(options.get_training_parser(), task_options(folder) + [
        "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1",
        "--encoder-embed-dim", "8", "--decoder-embed-dim", "8", "--encoder-ffn-embed-dim", "16",
        "--decoder-ffn-embed-dim", "16", "--encoder-attention-heads", "2",
        "--decoder-attention-heads", "2", "--share-all-embeddings"])
    cfg = convert_namespace_to_omegaconf(args)
    model = tasks.setup_task(cfg.task).build_model(cfg.model)
    path = str(folder / "draft.pt")
    write_half(model.state_dict(), cfg, path)
    return path


def generation_args(folder, **kw):
    args = parse(options.get_generation_parser(default_task=TASK),
                 task_options(folder) + ["--source-lang", "en", "--target-lang", "de"])
    for k, v in kw.items():  # as the hub sets its keyword arguments
        setattr(args, k, v)
    return args


def batch(task, lengths, seed):
    """Sources as the task's dataset gives them: the source language's token first."""
    sample = source_batch(task.source_dictionary, lengths, seed=seed)
    src = sample["net_input"]["src_tokens"]
    langtok = task.source_dictionary.index("__en__")
    for i, n in enumerate(lengths):
        src[i, src.size(1) - n - 1] = langtok
    return sample


def stock_generator(task, models, args, monkeypatch):
    """The task's own build_generator over stock fairseq's."""
    with monkeypatch.context() as m:
        m.setattr(FairseqTask, "build_generator", FairseqTask.build_generator.__wrapped__)
        return task.build_generator(models, args)


CASES = {
    "default beam 5": dict(beam=5),
    "default greedy": dict(beam=1),
    "speculative, model draft": dict(beam=1, generator="speculative", draft_len=3),
    "speculative, ngram": dict(beam=1, generator="speculative", draft_method="ngram"),
    "speculative, layers": dict(beam=1, generator="speculative", draft_method="layers",
                                draft_layers=1),
}


@pytest.mark.parametrize("lengths", [[7], [3, 9, 5]], ids=["batch 1", "ragged"])
@pytest.mark.parametrize("case", list(CASES))
def test_multilingual_task_equals_stock(folder, task, draft_path, case, lengths, monkeypatch):
    model = translation_model(task, layers=2, dim=16, eos_bias=-1.0, seed=3)
    kw = dict(CASES[case], max_len_b=10, min_len=3)
    if case.endswith("model draft"):
        kw["draft_path"] = draft_path
    args = generation_args(folder, **kw)
    ours = task.build_generator([model], args)
    if "generator" in kw:
        assert isinstance(ours, SpeculativeSequenceGenerator)
    stock = stock_generator(task, [model], args, monkeypatch)
    sample = batch(task, lengths, seed=len(lengths))
    expected = task.inference_step(stock, [model], sample)
    got = task.inference_step(ours, [model], sample)
    if "generator" in kw:  # tokens and scores (speculative decoding keeps no attention)
        for want, have in zip(expected, got):
            assert have[0]["tokens"].tolist() == want[0]["tokens"].tolist()
            assert torch.allclose(have[0]["positional_scores"], want[0]["positional_scores"],
                                  atol=1e-9, rtol=0)
            assert abs(float(have[0]["score"]) - float(want[0]["score"])) < 1e-9
    else:
        assert_same(expected, got, nbest=1)
    langtok = task.target_dictionary.index("__de__")
    assert all(h[0]["tokens"][0] == langtok for h in got)  # the task's prefix was forced
    strip = get_symbols_to_strip_from_output(ours)
    assert strip == get_symbols_to_strip_from_output(stock) and langtok in strip
    for want, have in zip(expected, got):
        text = task.target_dictionary.string(have[0]["tokens"], extra_symbols_to_ignore=strip)
        assert text == task.target_dictionary.string(want[0]["tokens"],
                                                     extra_symbols_to_ignore=strip)
        assert "__de__" not in text and text


SCRIPT = """
import sys
from fairseq import options
import fairseq_fast
from fairseq_fast.errors import UserError

data, fixed = sys.argv[1:3]
common = ["--beam", "1", "--generator", "speculative", "--draft-method", "ngram"]
options.parse_args_and_arch(options.get_generation_parser(), [
    data, "--task", "translation_multi_simple_epoch", "--lang-pairs", "en-de", "-s", "en", "-t",
    "de", "--fixed-dictionary", fixed, "--encoder-langtok", "src", "--decoder-langtok", *common])
try:  # a task whose generator is its own, not fairseq's through build_generator
    options.parse_args_and_arch(options.get_generation_parser(), [
        data, "--task", "translation_lev", *common])
except UserError as e:
    print("refused:", e)
"""


def test_the_command_line_takes_speculative_decoding_for_the_multilingual_task_only(folder):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder), str(folder / "dict.txt")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: --generator speculative is not supported for task translation_lev" in \
        done.stdout

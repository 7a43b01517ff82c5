"""The plugin in the real command-line tools, on a tiny pair trained with fairseq-train.

Stock runs get TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 (fairseq 0.12 cannot load its own checkpoints on
torch >= 2.6 otherwise); plugin runs get nothing: the plugin's allowlist loads them. Stock
fairseq-generate runs also get --required-batch-size-multiple 1: with the default 8 stock drops a
last batch whose size is not a multiple of 8, which the plugin keeps (batching.py); at the batch
sizes these tests use (below 8, or multiples of 8) the batches are otherwise the same.

In float32 the verify pass multiplies several positions at once, so scores can differ from stock's
one-position steps in the last digits (~1e-7 relative); hypotheses must be identical and scores
equal to 1e-4.
"""
import atexit
import os
import re
import subprocess
import sys

import pytest
import torch

import fairseq_fast
from cli_server import Tools

BIN = os.path.dirname(sys.executable)
USER_DIR = fairseq_fast.user_dir()
FAULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faults.py")
TOOLS = Tools()
atexit.register(TOOLS.close)


def run(tool, args, plugin=True, stdin=None, env=None, as_module=False, fault=None):
    """fairseq's console script `tool`, or with as_module `python -m fairseq_cli.<name>`;
    fault: (name, spec) of tests/faults.py, which then runs the console script."""
    full_env = dict(os.environ)
    full_env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    if not plugin:
        full_env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    full_env.update(env or {})
    if not plugin and tool == "fairseq-generate" and "--required-batch-size-multiple" not in args:
        args = args + ["--required-batch-size-multiple", "1"]
    start = ([sys.executable, "-m", tool.replace("fairseq-", "fairseq_cli.")] if as_module
             else [os.path.join(BIN, tool)])
    if fault:
        assert not as_module
        start = [sys.executable, FAULTS, *fault, *start]
    cmd = start + (["--user-dir", USER_DIR] if plugin else []) + args
    return TOOLS.run(cmd, input=stdin, env=full_env, timeout=300)  # python -m: a real process


def hypotheses(stdout):
    """{id: (score, text)} from H- lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("H-"):
            ident, score, text = line.split("\t")
            out[ident] = (float(score), text)
    return out


def assert_same(stock, plugin):
    assert stock.returncode == 0, stock.stderr[-2000:]
    assert plugin.returncode == 0, plugin.stderr[-2000:]
    want, got = hypotheses(stock.stdout), hypotheses(plugin.stdout)
    assert want and want.keys() == got.keys()
    for k in want:
        assert got[k][1] == want[k][1], k
        assert abs(got[k][0] - want[k][0]) <= 1e-4 * max(1.0, abs(want[k][0])), k


def generate_args(pair, *extra):
    return [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
            "--gen-subset", "test", "--beam", "1", *extra]


SPEC = lambda pair, *extra: ["--generator", "speculative", "--draft-path",  # noqa: E731
                             os.path.join(pair, "draft.pt"), *extra]


@pytest.mark.parametrize("extra,ours", [
    (["--batch-size", "1"], []),
    (["--batch-size", "16"], ["--draft-len", "3", "--no-fast-linear"]),
    (["--batch-size", "7", "--max-len-b", "6", "--min-len", "2"], ["--adaptive-draft-len"]),
    (["--batch-size", "5", "--prefix-size", "1", "--unkpen", "0.5"], ["--draft-len", "6"]),
    (["--batch-size", "4"], ["--draft-vocab", "8"]),
])
def test_generate_matches_stock(tiny_pair, extra, ours):
    stock = run("fairseq-generate", generate_args(tiny_pair, *extra), plugin=False)
    plugin = run("fairseq-generate", generate_args(tiny_pair, *extra) + SPEC(tiny_pair, *ours))
    assert_same(stock, plugin)
    log = plugin.stdout + plugin.stderr
    translated = re.search(r"Translated (\d+) sentences", log).group(1)
    assert f"speculative decoding: {translated} sentences, target calls" in log


def interactive_input(pair, n, beam):
    """(stdin text of the first n test sources, fairseq-interactive arguments)"""
    with open(os.path.join(pair, "raw", "test.src")) as f:
        text = "".join(f.readlines()[:n])
    return text, [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
                  "--beam", str(beam), "--source-lang", "src", "--target-lang", "tgt",
                  "--buffer-size", "4", "--batch-size", "4"]


def test_interactive_matches_stock(tiny_pair):
    text, args = interactive_input(tiny_pair, 12, beam=1)
    stock = run("fairseq-interactive", args, plugin=False, stdin=text)
    plugin = run("fairseq-interactive", args + SPEC(tiny_pair), stdin=text)
    assert_same(stock, plugin)
    assert len(hypotheses(plugin.stdout)) == 12


def test_eval_lm_loads_plugin():
    result = run("fairseq-eval-lm", ["--help"])
    assert result.returncode == 0, result.stderr


def test_user_dir_command_prints_package_folder():
    out = subprocess.run([os.path.join(BIN, "fairseq-fast-user-dir")], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert os.path.isfile(os.path.join(out, "__init__.py"))
    assert os.path.basename(out) == "fairseq_fast"


def assert_one_line_error(result, *needles):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    ours = [l for l in result.stderr.splitlines() if l.startswith("fairseq_fast: error:")]
    assert len(ours) == 1, result.stderr[-3000:]
    assert result.stderr.rstrip().splitlines()[-1] == ours[0]
    for needle in needles:
        assert needle in ours[0], ours[0]


@pytest.mark.parametrize("case,needles", [
    (["--draft-path", "/nonexistent/draft.pt"], ["no such file"]),
    (["--draft-len", "0"], ["--draft-len must be >= 1"]),
    (["--generator", "bogus"], ["unknown --generator 'bogus'"]),
    (["--beam", "5"], ["--beam 1"]),
    (["--nbest", "2", "--beam", "1"], ["--nbest 1"]),
    (["--match-source-len"], ["--match-source-len"]),
    (["--diverse-beam-groups", "2"], ["--diverse-beam-groups"]),
    (["--print-alignment"], ["--print-alignment"]),
    (["--constraints"], ["--constraints"]),
    (["--draft-vocab", "-1"], ["--draft-vocab must be >= 0"]),
    (["--draft-vocab", "8", "--draft-vocab-counts", "/nonexistent/dict.txt"], ["no such file"]),
])
def test_bad_flags_fail_with_one_line(tiny_pair, case, needles):
    args = generate_args(tiny_pair) + SPEC(tiny_pair) + case
    assert_one_line_error(run("fairseq-generate", args), *needles)


@pytest.mark.parametrize("ours", [["--draft-method", "ngram", "--adaptive-draft-len"],
                                  ["--draft-method", "layers", "--draft-len", "3"]])
def test_generate_without_a_draft_model_matches_stock(tiny_pair, ours):
    extra = ["--batch-size", "8"]
    stock = run("fairseq-generate", generate_args(tiny_pair, *extra), plugin=False)
    plugin = run("fairseq-generate", generate_args(tiny_pair, *extra)
                 + ["--generator", "speculative", *ours])
    assert_same(stock, plugin)
    assert "speculative decoding: 40 sentences" in plugin.stderr


def _without_timings(stdout):
    return [line for line in stdout.splitlines() if not line.startswith("Generate ")]


@pytest.mark.parametrize("workers,ours", [("0", ["--draft-path"]),
                                          ("2", ["--draft-method", "ngram"]), ("0", [])])
def test_inflight_batching_prints_what_batches_print(tiny_pair, workers, ours):
    """--inflight-batching at batch 3 (40 sentences): the same output, line for line and in the
    same order, as the same generator batch by batch (speculative with a draft, with n-gram
    lookup; the default generator's greedy search)."""
    extra = ["--batch-size", "3", "--postprocess-workers", workers]
    spec = (SPEC(tiny_pair) if ours == ["--draft-path"]
            else ["--generator", "speculative", *ours] if ours else [])
    batches = run("fairseq-generate", generate_args(tiny_pair, *extra) + spec)
    inflight = run("fairseq-generate", generate_args(tiny_pair, *extra) + spec
                   + ["--inflight-batching"])
    assert batches.returncode == 0 and inflight.returncode == 0, inflight.stderr[-2000:]
    assert _without_timings(inflight.stdout) == _without_timings(batches.stdout)
    assert len(hypotheses(inflight.stdout)) == 40
    assert "in-flight batching, up to 3 sentences at a time" in inflight.stderr


def test_inflight_batching_in_interactive_answers_as_batches_do(tiny_pair, tmp_path):
    """fairseq-interactive --inflight-batching, --buffer-size chunks of 5 lines, batches of 4,
    from an --input file, whose next chunk joins the rows in flight (reading a file never
    waits; when the next chunk would have to be waited for: test_inflight.py). Every line but
    the timings as without the flag (from standard input), in order."""
    text, args = interactive_input(tiny_pair, 12, beam=1)
    args = args + ["--buffer-size", "5"] + SPEC(tiny_pair)
    source = tmp_path / "input.txt"
    source.write_text(text)
    batches = run("fairseq-interactive", args, stdin=text)
    inflight = run("fairseq-interactive", args + ["--inflight-batching", "--input", str(source)])
    assert batches.returncode == 0 and inflight.returncode == 0, inflight.stderr[-2000:]
    untimed = lambda out: [l for l in out.splitlines() if not l.startswith("W-")]  # noqa: E731
    assert untimed(inflight.stdout) == untimed(batches.stdout)
    assert len(hypotheses(inflight.stdout)) == 12
    assert "up to 4 sentences at a time across --buffer-size chunks" in inflight.stderr


@pytest.mark.parametrize("tool,case,needles", [
    ("fairseq-generate", ["--batch-size", "4", "--beam", "5"], ["needs --beam 1"]),
    ("fairseq-generate", ["--batch-size", "4", "--sampling"], ["greedy search only"]),
    ("fairseq-generate", ["--max-tokens", "400"] + ["{spec}"], ["needs --batch-size"]),
    ("fairseq-interactive", ["--beam", "5"], ["needs --beam 1"]),
])
def test_inflight_batching_refusals(tiny_pair, tool, case, needles):
    spec = SPEC(tiny_pair)
    args = [a for c in case for a in (spec if c == "{spec}" else [c])] + ["--inflight-batching"]
    if tool == "fairseq-generate":
        result = run(tool, generate_args(tiny_pair) + args)
    else:
        text, base = interactive_input(tiny_pair, 2, beam=1)
        result = run(tool, base + args, stdin=text)
    assert_one_line_error(result, *needles)


@pytest.mark.parametrize("case,needles", [
    (["--draft-method", "ngram", "--draft-path", "{draft}"], ["uses no draft model"]),
    (["--draft-method", "layers", "--draft-layers", "5"], ["between 1 and 1"]),
    (["--generator", "bild", "--draft-method", "ngram"], ["BiLD's fallback needs"]),
])
def test_draft_method_refusals(tiny_pair, case, needles):
    """Through the tool: one line, before and after the model is loaded (the rest of the
    refusals: test_draft_method_flags_are_checked)."""
    draft = os.path.join(tiny_pair, "draft.pt")
    args = generate_args(tiny_pair) + ["--generator", "speculative"] + [
        a.format(draft=draft) for a in case]
    assert_one_line_error(run("fairseq-generate", args), *needles)


@pytest.mark.parametrize("flags,needle", [
    (dict(draft_method="ngram", draft_vocab=8), "--draft-vocab is for a draft model"),
    (dict(draft_method="ngram", ngram_min=3, ngram_max=2), "--ngram-max"),
    (dict(draft_method="ngram", ngram_min=0), "--ngram-min"),
    (dict(draft_method="bogus"), "unknown --draft-method 'bogus'"),
    (dict(draft_method="layers", draft_path="{draft}"), "drop --draft-path"),
    (dict(draft_method="layers", draft_layers=-1), "--draft-layers must be"),
    (dict(draft_layers=2, draft_path="{draft}"), "--draft-layers is for"),
    (dict(ngram_max=4, draft_path="{draft}"), "--ngram-min / --ngram-max are for"),
    (dict(generator="default", draft_method="ngram"), "--draft-method ngram is for"),
])
def test_draft_method_flags_are_checked(tiny_pair, flags, needle):
    from argparse import Namespace

    from fairseq_fast import options
    from fairseq_fast.errors import UserError

    draft = os.path.join(tiny_pair, "draft.pt")
    given = dict(dict(generator="speculative"), **{
        k: v.format(draft=draft) if isinstance(v, str) else v for k, v in flags.items()})
    with pytest.raises(UserError, match=re.escape(needle)):
        options.resolve(Namespace(**given))


def test_draft_without_path(tiny_pair):
    args = generate_args(tiny_pair) + ["--generator", "speculative"]
    assert_one_line_error(run("fairseq-generate", args), "--draft-path")


def test_ensemble_refused(tiny_pair):
    target = os.path.join(tiny_pair, "target.pt")
    args = generate_args(tiny_pair) + SPEC(tiny_pair) + ["--path", f"{target}:{target}"]
    assert_one_line_error(run("fairseq-generate", args), "ensemble")


@pytest.mark.parametrize("name,needles", [
    ("other_dict/draft.pt", ["different target dictionary", "first difference at index 4"]),
    ("bigger_vocab.pt", ["does not fit the target's dictionaries"]),
    ("garbage.pt", ["cannot read draft checkpoint"]),
])
def test_bad_draft_fails_with_one_line(tiny_pair, bad_drafts, name, needles):
    args = generate_args(tiny_pair) + ["--generator", "speculative", "--draft-path",
                                       str(bad_drafts / name)]
    assert_one_line_error(run("fairseq-generate", args), *needles)


class NotAllowed:
    """A type no allowlist contains: unpickling it could run arbitrary code."""


def test_untrusted_checkpoint_type_needs_opt_in(tiny_pair, tmp_path):
    state = torch.load(os.path.join(tiny_pair, "target.pt"), weights_only=False)
    state["extra_state"] = {"surprise": NotAllowed()}
    bad = tmp_path / "target.pt"
    torch.save(state, bad)
    args = [os.path.join(tiny_pair, "data-bin"), "--path", str(bad), "--gen-subset", "test",
            "--beam", "1", "--max-sentences", "2"]
    env = {"PYTHONPATH": os.path.dirname(__file__)}
    refused = run("fairseq-generate", args, env=env)
    assert_one_line_error(refused, "test_cli.NotAllowed", "FAIRSEQ_FAST_TRUST_CHECKPOINTS=1")
    trusted = run("fairseq-generate", args, env=dict(env, FAIRSEQ_FAST_TRUST_CHECKPOINTS="1"))
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert "H-0" in trusted.stdout or "H-1" in trusted.stdout


@pytest.mark.parametrize("tool", ["generate", "interactive"])
def test_python_m_runs_get_the_plugins_flags_too(tiny_pair, tool):
    """`python -m fairseq_cli.generate` runs the tool as __main__, not as the module the plugin
    finds in sys.modules: its flags must still take effect (speculative decoding here, with its
    summary line), not be accepted and ignored."""
    if tool == "generate":
        text, args = None, generate_args(tiny_pair, "--batch-size", "4")
    else:
        text, args = interactive_input(tiny_pair, 6, beam=1)
    plugin = run(f"fairseq-{tool}", args + SPEC(tiny_pair), stdin=text, as_module=True)
    stock = run(f"fairseq-{tool}", args, plugin=False, stdin=text)
    assert_same(stock, plugin)
    assert "speculative decoding: " in plugin.stdout + plugin.stderr

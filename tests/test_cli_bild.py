"""--generator bild in the real command-line tools and the hub, on the tiny trained pair."""
import os
import re

import pytest
from fairseq.models.transformer import TransformerModel

import fairseq_fast
from fairseq_fast.errors import UserError
from test_cli import (assert_one_line_error, assert_same, generate_args, hypotheses,
                      interactive_input, run)


def BILD(pair, *extra):
    return ["--generator", "bild", "--draft-path", os.path.join(pair, "draft.pt"), *extra]


def test_generate_rollback_zero_equals_stock_greedy(tiny_pair):
    args = generate_args(tiny_pair, "--batch-size", "8")
    stock = run("fairseq-generate", args, plugin=False)
    bild = run("fairseq-generate", args + BILD(tiny_pair, "--bild-rollback-threshold", "0",
                                               "--bild-fallback-threshold", "0.3"))
    assert_same(stock, bild)


def test_generate_default_thresholds_prints_summary(tiny_pair):
    result = run("fairseq-generate", generate_args(tiny_pair, "--batch-size", "8")
                 + BILD(tiny_pair))
    assert result.returncode == 0, result.stderr[-2000:]
    log = result.stdout + result.stderr
    n = re.search(r"Translated (\d+) sentences", log).group(1)
    summary = re.search(r"BiLD: (\d+) sentences, large-model calls (\d+), small-model calls "
                        r"(\d+), fallbacks (\d+), rollbacks (\d+), tokens by the small model "
                        r"([\d.]+)%", log)
    assert summary and summary.group(1) == n
    assert len(hypotheses(result.stdout)) == int(n)


def test_interactive(tiny_pair):
    text, args = interactive_input(tiny_pair, 12, beam=1)
    stock = run("fairseq-interactive", args, plugin=False, stdin=text)
    bild = run("fairseq-interactive", args + BILD(tiny_pair, "--bild-fallback-threshold", "1"),
               stdin=text)
    assert_same(stock, bild)  # fallback 1: the large model writes every token


@pytest.mark.parametrize("case,needles", [
    (["--bild-fallback-threshold", "1.2"], ["--bild-fallback-threshold must be in [0, 1]"]),
    (["--bild-rollback-threshold", "-0.5"], ["--bild-rollback-threshold must be >= 0"]),
    (["--bild-max-small-steps", "0"], ["--bild-max-small-steps must be an integer >= 1"]),
    (["--beam", "5"], ["--beam 1"]),
    (["--sampling"], ["greedy only"]),
    (["--adaptive-draft-len"], ["--adaptive-draft-len is for --generator speculative"]),
    (["--draft-path", "/nonexistent/small.pt"], ["no such file"]),
    (["--draft-vocab", "8"], ["--draft-vocab / --draft-vocab-counts are for --generator "
                              "speculative (BiLD's output depends"]),
])
def test_bad_flags_fail_with_one_line(tiny_pair, case, needles):
    args = generate_args(tiny_pair) + BILD(tiny_pair) + case
    assert_one_line_error(run("fairseq-generate", args), *needles)


def test_mismatched_dictionary(tiny_pair, bad_drafts):
    args = generate_args(tiny_pair) + BILD(tiny_pair, "--draft-path",
                                           str(bad_drafts / "other_dict" / "draft.pt"))
    assert_one_line_error(run("fairseq-generate", args), "different target dictionary")


def test_hub(tiny_pair):
    hub = TransformerModel.from_pretrained(
        tiny_pair, checkpoint_file="target.pt", data_name_or_path="./data-bin",
        user_dir=fairseq_fast.user_dir(), source_lang="src", target_lang="tgt").eval()
    with open(os.path.join(tiny_pair, "raw", "test.src")) as f:
        src = [line.strip() for line in f][:10]
    draft = os.path.join(tiny_pair, "draft.pt")
    stock = hub.translate(src, beam=1, no_fast_cache=True, no_fast_ngram=True)
    exact = hub.translate(src, beam=1, generator="bild", draft_path=draft,
                          bild_rollback_threshold=0.0)
    assert exact == stock
    loose = hub.translate(src, beam=1, generator="bild", draft_path=draft)
    assert len(loose) == len(src) and all(isinstance(s, str) for s in loose)
    with pytest.raises(UserError, match="must be in"):
        hub.translate(src, beam=1, generator="bild", draft_path=draft,
                      bild_fallback_threshold=2.0)

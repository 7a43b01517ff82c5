"""The plugin's default generator in the real command-line tools: same output as stock fairseq.

Float32 on a tiny trained pair: hypotheses (and alignments) identical, scores equal to 1e-4.
"""
import os

import pytest

from fairseq_fast.kernels import small_gemm
from fairseq_fast.kernels.packed_linear import onednn_available
from test_cli import assert_same, interactive_input, run


def args(pair, *extra):
    return [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
            "--gen-subset", "test", *extra]


def lines(stdout, prefix):
    return sorted(line for line in stdout.splitlines() if line.startswith(prefix))


@pytest.mark.parametrize("extra", [
    ["--beam", "5", "--batch-size", "8"],
    ["--beam", "5", "--nbest", "3", "--lenpen", "0.6", "--batch-size", "16"],
    ["--beam", "4", "--print-alignment", "--batch-size", "8"],
    ["--beam", "3", "--prefix-size", "2", "--batch-size", "8"],
    ["--beam", "2", "--nbest", "2", "--sampling", "--sampling-topk", "5", "--seed", "3",
     "--batch-size", "8"],
    # (--diverse-beam-groups: below; stock fairseq-generate fails with it)
    ["--beam", "3", "--diversity-rate", "0.5", "--batch-size", "8"],
    ["--beam", "3", "--match-source-len", "--batch-size", "8"],
])
def test_generate_defaults_match_stock(tiny_pair, extra):
    stock = run("fairseq-generate", args(tiny_pair, *extra), plugin=False)
    plugin = run("fairseq-generate", args(tiny_pair, *extra))
    assert_same(stock, plugin)
    assert "FastSequenceGenerator" in plugin.stderr and "fast cache" in plugin.stderr
    assert "packed linears (" in plugin.stderr or not (onednn_available()
                                                       or small_gemm.available())
    if "--print-alignment" in extra:
        assert lines(plugin.stdout, "A-") == lines(stock.stdout, "A-")
        assert lines(plugin.stdout, "A-")


def test_diverse_beam_groups_run_where_stock_fails(tiny_pair):
    """fairseq's DiverseBeamSearch looks a sentence's group overlap up by its dataset id, which
    fails (IndexError) on batches of other ids; the plugin's finds it by place
    (test_fast_defaults.py checks its output against stock's where stock is right)."""
    extra = ("--beam", "4", "--nbest", "2", "--diverse-beam-groups", "2", "--batch-size", "8")
    stock = run("fairseq-generate", args(tiny_pair, *extra), plugin=False)
    assert stock.returncode != 0 and "IndexError" in stock.stderr
    plugin = run("fairseq-generate", args(tiny_pair, *extra))
    assert plugin.returncode == 0, plugin.stderr[-2000:]
    assert "diverse beam search by place" in plugin.stderr
    sources = lines(plugin.stdout, "S-")
    assert len(sources) > 8  # more than one batch
    assert len(lines(plugin.stdout, "H-")) == 2 * len(sources)
    off = run("fairseq-generate", args(tiny_pair, *extra, "--no-fast-diverse"))
    assert off.returncode != 0 and "IndexError" in off.stderr


def test_switches_off(tiny_pair):
    off = run("fairseq-generate", args(tiny_pair, "--beam", "5", "--no-fast-cache",
                                       "--no-fast-ngram"))
    assert off.returncode == 0, off.stderr[-2000:]
    assert "FastSequenceGenerator" not in off.stderr  # fairseq's own generator
    assert_same(run("fairseq-generate", args(tiny_pair, "--beam", "5"), plugin=False), off)


def test_no_fast_linear(tiny_pair):
    extra = ("--beam", "5", "--batch-size", "8")
    off = run("fairseq-generate", args(tiny_pair, *extra, "--no-fast-linear"))
    assert off.returncode == 0, off.stderr[-2000:]
    assert "fast cache" in off.stderr and "packed linears" not in off.stderr
    assert_same(run("fairseq-generate", args(tiny_pair, *extra), plugin=False), off)


def test_interactive_beam_matches_stock(tiny_pair):
    text, common = interactive_input(tiny_pair, 10, beam=5)
    assert_same(run("fairseq-interactive", common, plugin=False, stdin=text),
                run("fairseq-interactive", common, stdin=text))

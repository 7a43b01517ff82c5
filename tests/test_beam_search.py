"""beam_search.py's candidate step: the C kernel (csrc/beam_step.c) chooses what the torch rule
(`candidates_torch`: fairseq's edits followed by search.BeamSearch.step) chooses, value for value,
whatever the edits (NaN, pad, unk penalty of either sign, only EOS at max_len, no EOS before
min_len), the float type, the vocabulary size (chunks of 32 and a ragged end), step 0 (first
beam only) and dead beams (cumulative score -inf). The loop around it is compared with stock
fairseq in test_fast_defaults.py."""
import math
from unittest import mock

import pytest
import torch

from fairseq_fast.generators import beam_search
from fairseq_fast.kernels import loader
from fairseq_fast.generators.beam_search import NO_EOS, NO_RULE, ONLY_EOS, candidates, candidates_torch

needs_kernel = pytest.mark.skipif(loader.function("bs_candidates_f32") is None,
                                  reason="kernels not buildable here")
PAD, EOS = 1, 2


def _inputs(sentences, beam, vocab, dtype, seed, nan=False, dead=False):
    g = torch.Generator().manual_seed(seed)
    lprobs = torch.randn(sentences * beam, vocab, generator=g, dtype=torch.float64)
    lprobs = lprobs.log_softmax(-1).to(dtype)
    if nan:
        lprobs[0, 5 % vocab] = math.nan
        lprobs[-1, vocab - 1] = math.nan
    prev = (torch.randn(sentences * beam, generator=g, dtype=torch.float64) * 3).to(dtype)
    if dead:
        prev[1::beam] = -math.inf  # the second beam of every sentence is dead
    return lprobs, prev


def _check(got, want):
    """Finite candidates equal (values to the bit, beams, tokens); filler candidates (-inf, only
    when fewer finite ones exist) are -inf in both and name a real (beam, token)."""
    (gs, gb, gt), (ws, wb, wt) = got, want
    assert gs.shape == ws.shape and gs.dtype == ws.dtype
    finite = torch.isfinite(ws)
    assert torch.equal(torch.isfinite(gs), finite)
    assert torch.equal(gs[finite], ws[finite])
    assert torch.equal(gb[finite], wb[finite]) and torch.equal(gt[finite], wt[finite])
    assert bool((gs[~finite] == -math.inf).all())


@needs_kernel
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("vocab,unk", [(9, 3), (70, 3), (200, 65)])  # unk in a later chunk
@pytest.mark.parametrize("beam", [1, 2, 5])
@pytest.mark.parametrize("mode", [NO_RULE, ONLY_EOS, NO_EOS])
def test_kernel_chooses_what_the_torch_rule_chooses(dtype, vocab, unk, beam, mode):
    for seed, (first_step, unk_penalty, nan, dead) in enumerate([
            (True, 0.0, False, False), (False, 0.0, False, False), (False, 1.5, True, False),
            (False, -4.0, False, True), (True, -4.0, True, False)]):
        lprobs, prev = _inputs(3, beam, vocab, dtype, seed, nan, dead and beam > 1)
        if unk_penalty < 0:  # unk just below each row's best: the negative penalty lifts it
            lprobs[:, unk] = lprobs.nan_to_num(-math.inf).max(-1).values - 1
        if first_step:
            prev = None
        k = min(2 * beam, (1 if prev is None else beam) * vocab - 1)
        want = candidates_torch(lprobs.clone(), prev, 3, beam, k, PAD, unk, unk_penalty, EOS,
                                mode)
        with mock.patch.object(beam_search, "candidates_torch",
                               side_effect=AssertionError("torch path taken")):
            got = candidates(lprobs.clone(), prev, 3, beam, PAD, unk, unk_penalty, EOS, mode)
        _check(got, want)
        if mode == NO_RULE and unk_penalty < 0 and prev is None:
            assert got[2][:, 0].tolist() == [unk] * 3  # the lifted unk wins


def test_torch_rule_is_taken_where_the_kernel_is_not(monkeypatch):
    """Another dtype (float16) or a non-CPU device, or no kernel: the torch rule answers."""
    lprobs, prev = _inputs(2, 2, 40, torch.float32, 0)
    want = candidates_torch(lprobs.clone(), prev, 2, 2, 4, PAD, 3, 0.0, EOS, NO_RULE)
    monkeypatch.setattr(loader, "function", lambda name: None)
    with mock.patch.object(beam_search, "candidates_torch",
                           wraps=beam_search.candidates_torch) as torch_rule:
        _check(candidates(lprobs.clone(), prev, 2, 2, PAD, 3, 0.0, EOS, NO_RULE), want)
    assert torch_rule.called


def test_torch_rule_is_beam_search_step():
    """candidates_torch is fairseq's edits followed by search.BeamSearch.step, checked here
    against fairseq's own BeamSearch (the loop's equality with stock rests on it)."""
    from fairseq import search
    from fairseq.data import Dictionary

    d = Dictionary()
    for i in range(30):
        d.add_symbol(f"w{i}")
    lprobs, prev = _inputs(3, 4, len(d), torch.float64, 1, nan=True)
    ref = lprobs.clone()
    ref[ref != ref] = -math.inf
    ref[:, d.pad()] = -math.inf
    ref[:, d.unk()] -= 0.5
    scores = torch.zeros(12, 3, dtype=torch.float64)
    scores[:, 1] = prev
    want = search.BeamSearch(d).step(2, ref.view(3, 4, -1), scores.view(3, 4, -1)[:, :, :2])
    got = candidates_torch(lprobs.clone(), prev, 3, 4, 8, d.pad(), d.unk(), 0.5, d.eos(),
                           NO_RULE)
    assert torch.equal(got[0], want[0])
    assert torch.equal(got[1], want[2]) and torch.equal(got[2], want[1])

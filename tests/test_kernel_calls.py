"""The typed kernel calls (kernels/calls.py): strict mode refuses what the C code would misread.

The suite runs in strict mode (conftest.py), so every kernel call in every other test is checked.
Here each check is shown to fire, on arguments that would make the kernel read or write out of
bounds, and the same calls with valid arguments are shown to agree with torch's ops.
"""
import pytest
import torch

from fairseq_fast.decoding.ngram_blocker import block_repeated_ngrams
from fairseq_fast.kernels import calls, loader
from fairseq_fast.speculative.acceptance import GreedyAcceptance, Verdict
from fairseq_fast.speculative.commit import commit_torch
from fairseq_fast.speculative.ngram import lookup_torch

pytestmark = pytest.mark.skipif(loader.library() is None, reason="C kernels not built here")
V = 11


def test_the_suite_runs_in_strict_mode():
    assert calls.STRICT


@pytest.fixture
def verify_args():
    torch.manual_seed(0)
    lprobs = torch.randn(3, 4, V).log_softmax(-1)
    drafts = torch.randint(4, V, (3, 3))
    gamma = torch.tensor([3, 1, 0])
    return lprobs, drafts, gamma, torch.zeros(3)


def test_greedy_verify_agrees_with_torch_and_refuses_a_draft_past_the_vocabulary(verify_args):
    lprobs, drafts, gamma, prev = verify_args
    accepted, tokens, cum, ties = calls.greedy_verify(lprobs, drafts, gamma, prev,
                                                      threshold=None)
    want = GreedyAcceptance().verify_torch(lprobs, drafts, gamma, prev)
    assert not ties and torch.equal(accepted, want.accepted)
    for b, a in enumerate(accepted.tolist()):
        assert torch.equal(tokens[b, :a + 1], want.tokens[b, :a + 1])
    drafts[1, 0] = V
    with pytest.raises(calls.KernelArgumentError, match="sd_greedy_verify: drafts holds"):
        calls.greedy_verify(lprobs, drafts, gamma, prev, threshold=None)
    with pytest.raises(calls.KernelArgumentError, match="gamma holds"):
        calls.greedy_verify(lprobs, drafts.clamp(max=V - 1), gamma + 1, prev, threshold=None)


def test_commit_agrees_with_torch_and_refuses_to_write_past_the_buffer():
    tokens = torch.zeros(2, 6, dtype=torch.long)
    cum = torch.zeros(2, 6)
    n_tokens = torch.tensor([1, 3])
    chosen = torch.tensor([[5, 6, 2], [7, 8, 9]])
    scores = -torch.rand(2, 3)
    accepted = torch.tensor([2, 1])
    got = calls.commit(tokens, cum, n_tokens, chosen, scores, accepted, eos=2, max_len=10)
    t2, c2 = torch.zeros(2, 6, dtype=torch.long), torch.zeros(2, 6)
    want = commit_torch(t2, c2, n_tokens, Verdict(accepted, chosen, scores), 2, 10)
    assert all(torch.equal(g, w) for g, w in zip(got[:3], want[:3])) and got[3] == want[3]
    assert torch.equal(tokens, t2) and torch.equal(cum, c2)
    with pytest.raises(calls.KernelArgumentError, match="sd_commit: the places written"):
        calls.commit(tokens, cum, torch.tensor([1, 4]), chosen, scores, torch.tensor([2, 2]),
                     eos=2, max_len=10)
    with pytest.raises(calls.KernelArgumentError, match="accepted holds"):
        calls.commit(tokens, cum, n_tokens, chosen, scores, torch.tensor([3, 0]), eos=2,
                     max_len=10)


def test_block_ngrams_agrees_with_torch_and_refuses_a_token_past_the_vocabulary():
    tokens = torch.tensor([[0, 4, 5, 4], [0, 6, 6, 6]])
    lprobs = torch.zeros(2, V)
    assert calls.block_ngrams(lprobs, tokens, n=2) is lprobs
    want = block_repeated_ngrams(torch.zeros(2, 1, V), tokens, None, 2)[:, 0]
    assert torch.equal(lprobs, want) and lprobs.isinf().any()
    with pytest.raises(calls.KernelArgumentError, match="ng_block: tokens holds"):
        calls.block_ngrams(lprobs, torch.tensor([[0, V, 5, V]]).expand(2, 4), n=2)


def test_ngram_lookup_agrees_with_torch_and_refuses_lengths_past_the_buffer():
    tokens = torch.tensor([[0, 4, 5, 6, 4, 5, 1, 1]])
    n_tokens = torch.tensor([6])
    got = calls.ngram_lookup(tokens, n_tokens, None, ngram_min=1, ngram_max=2, k=3, pad=1,
                             eos=2)
    want = lookup_torch(tokens, n_tokens, None, 1, 2, 3, 1, 2)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    with pytest.raises(calls.KernelArgumentError, match="nl_lookup: n_tokens holds"):
        calls.ngram_lookup(tokens, torch.tensor([9]), None, ngram_min=1, ngram_max=2, k=3,
                           pad=1, eos=2)
    with pytest.raises(calls.KernelArgumentError, match="n-gram sizes 0..2"):
        calls.ngram_lookup(tokens, n_tokens, None, ngram_min=0, ngram_max=2, k=3, pad=1, eos=2)


def test_beam_candidates_refuses_more_candidates_than_the_kernel_holds():
    lprobs = torch.randn(2 * 40, V).log_softmax(-1)
    prev = torch.zeros(2 * 40)
    assert calls.beam_candidates(lprobs.clone(), prev, sentences=2, beam=40, k=8, pad=1, unk=3,
                                 unk_penalty=0.0, eos=2, mode=calls.RULES[0]) is not None
    with pytest.raises(calls.KernelArgumentError, match="bs_candidates: k = 80"):
        calls.beam_candidates(lprobs, prev, sentences=2, beam=40, k=80, pad=1, unk=3,
                              unk_penalty=0.0, eos=2, mode=calls.RULES[0])
    with pytest.raises(calls.KernelArgumentError, match="lprobs is"):
        calls.beam_candidates(lprobs[:70], prev, sentences=2, beam=40, k=8, pad=1, unk=3,
                              unk_penalty=0.0, eos=2, mode=calls.RULES[0])


def test_head_mean_is_the_mean_over_heads():
    probs = torch.rand(2, 4, 3, 5)
    torch.testing.assert_close(calls.head_mean(probs), probs.mean(1))

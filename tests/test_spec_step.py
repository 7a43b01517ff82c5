"""The speculative loop's verdict and commit in C (csrc/spec_step.c): GreedyAcceptance and
BiLDRollback reach the verdict their torch rule reaches (accepted counts, and the kept tokens and
running scores to the bit), for windows accepted to every depth, capped gammas, no drafts,
float32 and float64, vocabularies that are not a multiple of the vector width; a tied best
score hands the window to the torch rule; and commit writes what commit_torch writes (EOS cuts,
the max_len rule). The loop around them is compared with stock fairseq in
test_speculative_equality.py and test_bild.py."""
import pytest
import torch

from fairseq_fast.kernels import loader
from fairseq_fast.speculative.acceptance import BiLDRollback, GreedyAcceptance, Verdict
from fairseq_fast.speculative.commit import commit, commit_torch

pytestmark = pytest.mark.skipif(loader.function("sd_greedy_verify_f32") is None,
                                reason="kernels not buildable here")
EOS = 2


def window(bsz, k, vocab, dtype, seed, depth=None):
    """Edited log-probs [B, k+1, V], drafts [B, k] that follow the target's own choices for
    `depth[b]` positions (then a token it does not choose), prev scores [B]."""
    g = torch.Generator().manual_seed(seed)
    lprobs = torch.randn(bsz, k + 1, vocab, generator=g, dtype=torch.float64)
    lprobs = (lprobs * 3).log_softmax(-1).to(dtype)
    lprobs[:, :, 1] = float("-inf")  # pad
    prev = (-torch.rand(bsz, generator=g, dtype=torch.float64) * 20).to(dtype)
    if depth is None:
        depth = torch.randint(0, k + 1, (bsz,), generator=g).tolist()
    drafts = torch.empty(bsz, k, dtype=torch.long)
    for b in range(bsz):
        before = prev[b]
        for j in range(k):
            best = int((lprobs[b, j] + before).argmax())
            drafts[b, j] = best if j < depth[b] else (best + 1 + j) % vocab
            before = lprobs[b, j, drafts[b, j]] + before
    return lprobs, drafts, prev


def check_same(got: Verdict, want: Verdict):
    assert torch.equal(got.accepted, want.accepted)
    for b, a in enumerate(want.accepted.tolist()):
        assert torch.equal(got.tokens[b, :a + 1], want.tokens[b, :a + 1])
        assert torch.equal(got.cum_scores[b, :a + 1], want.cum_scores[b, :a + 1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("vocab", [37, 64, 1003])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_kernel_verdict_is_the_torch_verdict(dtype, vocab, k):
    for seed in range(4):
        lprobs, drafts, prev = window(6, k, vocab, dtype, seed)
        gamma = torch.tensor([k, k, max(k - 1, 0), k, 1 if k else 0, k])
        rule = GreedyAcceptance()
        got = rule._verify_kernel(lprobs, drafts, gamma, prev)
        assert got is not None
        want = rule.verify_torch(lprobs, drafts, gamma, prev)
        check_same(got, want)
        check_same(rule.verify(lprobs, drafts, gamma, prev), want)


def test_windows_are_accepted_to_every_depth_and_capped_by_gamma():
    k = 5
    lprobs, drafts, prev = window(k + 1, k, 50, torch.float32, 7, depth=list(range(k + 1)))
    full = torch.full((k + 1,), k)
    got = GreedyAcceptance()._verify_kernel(lprobs, drafts, full, prev)
    assert got.accepted.tolist() == list(range(k + 1))
    capped = GreedyAcceptance()._verify_kernel(lprobs, drafts, torch.full((k + 1,), 2), prev)
    assert capped.accepted.tolist() == [0, 1, 2, 2, 2, 2]
    check_same(capped, GreedyAcceptance().verify_torch(lprobs, drafts,
                                                        torch.full((k + 1,), 2), prev))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("threshold", [0.0, 2.0, 5.0])
def test_bild_rollback_kernel_is_its_torch_rule(dtype, threshold):
    for seed in range(4):
        lprobs, drafts, prev = window(8, 4, 20, dtype, seed, depth=[0] * 8)
        rule = BiLDRollback(threshold)
        gamma = torch.full((8,), 4)
        got = rule._verify_kernel(lprobs, drafts, gamma, prev)
        want = rule.verify_torch(lprobs, drafts, gamma, prev)
        check_same(got, want)
    if threshold == 5.0:  # some drafts the target does not choose are kept
        assert int(got.accepted.sum()) > 0


def test_a_tie_at_the_best_score_is_left_to_torch():
    lprobs, drafts, prev = window(3, 3, 40, torch.float32, 3, depth=[3, 3, 3])
    row = lprobs[1, 0]
    best = int(row.argmax())
    row[(best + 5) % 40] = row[best]  # two tokens share row 1's best score at position 0
    rule = GreedyAcceptance()
    gamma = torch.full((3,), 3)
    assert rule._verify_kernel(lprobs, drafts, gamma, prev) is None
    check_same(rule.verify(lprobs, drafts, gamma, prev),
               rule.verify_torch(lprobs, drafts, gamma, prev))
    # a tie after the first rejection is never read
    lprobs, drafts, prev = window(1, 3, 40, torch.float32, 4, depth=[0])
    last = lprobs[0, 2]
    last[(int(last.argmax()) + 1) % 40] = last.max()
    assert rule._verify_kernel(lprobs, drafts, torch.full((1,), 3), prev) is not None


def test_a_subclass_with_its_own_rule_is_not_given_the_kernel():
    class Everything(GreedyAcceptance):
        def tolerates(self, draft_lprobs):
            return torch.ones_like(draft_lprobs, dtype=torch.bool)

    lprobs, drafts, prev = window(2, 3, 30, torch.float32, 1, depth=[0, 0])
    got = Everything().verify(lprobs, drafts, torch.full((2,), 3), prev)
    assert got.accepted.tolist() == [3, 3]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kernel_commit_is_commit_torch(dtype):
    g = torch.Generator().manual_seed(0)
    bsz, m, length, max_len = 7, 5, 24, 12
    for trial in range(20):
        chosen = torch.randint(3, 9, (bsz, m), generator=g)
        chosen[torch.rand(bsz, m, generator=g) < 0.15] = EOS
        scores = -torch.rand(bsz, m, generator=g, dtype=torch.float64).to(dtype).cumsum(1)
        accepted = torch.randint(0, m, (bsz,), generator=g)
        n_tokens = torch.randint(1, max_len + 1, (bsz,), generator=g)  # rows at max_len too
        verdict = Verdict(accepted, chosen, scores)
        tokens = torch.randint(3, 9, (bsz, length), generator=g)
        cum = torch.randn(bsz, length, generator=g, dtype=torch.float64).to(dtype)
        t1, c1, t2, c2 = tokens.clone(), cum.clone(), tokens.clone(), cum.clone()
        got = commit(t1, c1, n_tokens, verdict, EOS, max_len)
        want = commit_torch(t2, c2, n_tokens, Verdict(accepted, chosen.clone(), scores),
                            EOS, max_len)
        assert torch.equal(t1, t2) and torch.equal(c1, c2)
        for a, b in zip(got, want):
            assert torch.equal(torch.as_tensor(a), torch.as_tensor(b))
        assert not torch.equal(t1, tokens)  # something was written


def test_commit_cuts_at_eos_and_at_max_len():
    tokens = torch.zeros(2, 10, dtype=torch.long)
    cum = torch.zeros(2, 10)
    verdict = Verdict(torch.tensor([3, 3]), torch.tensor([[5, EOS, 6, 7], [5, 6, 7, 8]]),
                      torch.tensor([[-1., -2., -3., -4.], [-1., -2., -3., -4.]]))
    n_tokens = torch.tensor([1, 4])
    n_out, keep, has_eos, ended = commit(tokens, cum, n_tokens, verdict, EOS, max_len=5)
    assert n_out.tolist() == [3, 7] and keep.tolist() == [2, 3]
    assert has_eos.tolist() == [True, True] and ended == 2
    assert tokens[0, 1:3].tolist() == [5, EOS]
    assert tokens[1, 4:7].tolist() == [5, 6, EOS]  # step 5 = max_len: EOS, its score kept
    assert cum[1, 4:7].tolist() == [-1., -2., -3.]
    assert n_tokens.tolist() == [1, 4]  # not changed

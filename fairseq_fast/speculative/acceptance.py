"""Acceptance rules: given the target's scores for a window, decide what each row keeps.

Terms (as in Leviathan et al. 2023 and vLLM's rejection sampler):
    p        the target's distribution at a window position
    q        the draft's distribution at the same position
    drafts   d_1..d_K proposed by the draft; window position j scores the token after d_j
             (position 0 scores d_1)
    accepted a: the number of leading drafts kept (0..gamma)
    next     the token at position a: the target's own choice after a rejection ("recovered"),
             or after all gamma drafts were kept ("bonus")
Every rule returns `Verdict(accepted [B], tokens [B, m], cum_scores [B, m])` where tokens[:, :a+1]
are the kept drafts followed by `next`, and cum_scores are stock fairseq's cumulative float32
scores for those tokens (what `SequenceGenerator` stores in its `scores` buffer).
"""
from dataclasses import dataclass
from typing import Optional, Protocol

import torch
from torch import Tensor

from fairseq_fast.decoding.step_rules import sampling_distribution
from fairseq_fast.kernels import calls


@dataclass
class Verdict:
    accepted: Tensor  # [B] long
    tokens: Tensor  # [B, m]
    cum_scores: Tensor  # [B, m] float32


class AcceptanceRule(Protocol):
    """Decides what each row keeps of a verified window. `needs_draft_probs`: whether `verify`
    needs q (then the rule also has `distribution(lprobs)`, which the proposer samples from)."""

    needs_draft_probs: bool

    def verify(self, lprobs: Tensor, drafts: Tensor, gamma: Tensor, prev_score: Tensor,
               q: Optional[Tensor] = None) -> Verdict: ...


def leading_true(ok: Tensor, gamma: Tensor) -> Tensor:
    """ok [B, K] bool -> [B] number of leading True values, at most gamma [B]."""
    k = ok.size(1)
    ok = ok & (torch.arange(k, device=ok.device)[None, :] < gamma[:, None])
    return ok.long().cumprod(dim=1).sum(dim=1)


def cumulate(prev: Tensor, values: Tensor) -> Tensor:
    """Stock's running score, one float32 add per step (not cumsum, which rounds differently)."""
    out = torch.empty_like(values)
    for j in range(values.size(1)):
        prev = values[:, j] + prev
        out[:, j] = prev
    return out


class GreedyAcceptance:
    """Exact greedy: keep drafts while each equals the target's greedy token.

    The target's token at each position is chosen exactly as fairseq's BeamSearch with beam 1
    chooses it: top-2 of (log-probs + running score) in float32, first candidate, where the
    running score is that of the drafts before the position (for every kept draft, the target's
    own choice). Drafts are only hints, so greedy output is the target's whatever they are.

    `threshold` (None here): a draft the target gives a log-prob of at least -threshold is
    kept even where the target would choose another token (BiLDRollback's rule).
    On CPU the verdict is one C call (csrc/spec_step.c), which reads each window only up to
    its first rejection; `verify_torch` is the same rule in tensor ops, taken elsewhere and
    where a position's best score is shared by several tokens (top-k's order decides there)."""

    needs_draft_probs = False
    threshold: Optional[float] = None

    def tolerates(self, draft_lprobs: Tensor) -> Tensor:
        """Drafts [B, K] the rule keeps although the target would choose another token."""
        if self.threshold is None:
            return torch.zeros_like(draft_lprobs, dtype=torch.bool)
        return -draft_lprobs <= self.threshold

    def verify(self, lprobs: Tensor, drafts: Tensor, gamma: Tensor, prev_score: Tensor,
               q: Optional[Tensor] = None) -> Verdict:
        """lprobs [B, K+1, V] edited target log-probs; drafts [B, K]; gamma [B]; prev_score [B].
        Verdict.tokens / cum_scores after a row's accepted + 1 entries are not part of it."""
        verdict = self._verify_kernel(lprobs, drafts, gamma, prev_score)
        if verdict is None:
            verdict = self.verify_torch(lprobs, drafts, gamma, prev_score)
        return verdict

    def _verify_kernel(self, lprobs, drafts, gamma, prev_score) -> Optional[Verdict]:
        if type(self).tolerates is not GreedyAcceptance.tolerates:
            return None
        found = calls.greedy_verify(lprobs, drafts, gamma, prev_score, threshold=self.threshold)
        if found is None or found[3]:  # no kernel here, or a tie the kernel leaves to torch
            return None
        return Verdict(*found[:3])

    def verify_torch(self, lprobs: Tensor, drafts: Tensor, gamma: Tensor,
                     prev_score: Tensor) -> Verdict:
        bsz, kk = drafts.shape
        draft_lprobs = lprobs[:, :kk].gather(2, drafts[:, :, None]).squeeze(2)
        draft_cum = cumulate(prev_score, draft_lprobs)  # [B, K] running score through d_j
        before = torch.cat([prev_score[:, None], draft_cum], dim=1)  # [B, K+1]
        top = torch.topk(lprobs + before[:, :, None], k=min(2, lprobs.size(-1) - 1), dim=-1)
        choice, choice_cum = top.indices[:, :, 0], top.values[:, :, 0]
        ok = (drafts == choice[:, :kk]) | self.tolerates(draft_lprobs)
        accepted = leading_true(ok, gamma)
        rows = torch.arange(bsz, device=drafts.device)
        tokens = torch.cat([drafts, choice[:, kk:]], dim=1)
        tokens[rows, accepted] = choice[rows, accepted]
        cum = torch.cat([draft_cum, choice_cum[:, kk:]], dim=1)
        cum[rows, accepted] = choice_cum[rows, accepted]
        return Verdict(accepted, tokens, cum)


class BiLDRollback(GreedyAcceptance):
    """BiLD's rollback policy (Kim et al. 2023): the small model's token d_j is dropped, with
    everything after it, at the first position where its cross-entropy under the large model,
    -log p_L(d_j), exceeds the threshold, unless d_j is the large model's own choice (as in the
    paper's released code); the large model's token replaces it. A window with no such position
    is kept whole and the large model adds its own next token.

    Threshold 0 drops every disagreement (exact greedy, as GreedyAcceptance); the default 5.0
    keeps small-model tokens the large model gives at least e^-5 = 0.7% probability."""

    def __init__(self, threshold: float):
        self.threshold = threshold


class RejectionSampling:
    """Speculative sampling: the kept tokens are distributed exactly as the target's samples.

    Keep d_j with probability min(1, p_j(d_j) / q_j(d_j)); at the first rejection draw `next`
    from norm(max(0, p - q)); if all gamma drafts are kept draw the bonus from p. p and q are the
    target's and draft's edited log-probs warped by the same temperature / top-k / top-p.

    q=None: the drafts are certain (n-gram lookup: q one-hot on each draft). Then d_j is kept
    with probability p_j(d_j), and after a rejection `next` comes from p with d_j removed,
    renormalised: the same rule, without building a [B, K, V] q."""

    needs_draft_probs = True

    def __init__(self, topk: int = -1, topp: float = -1.0):
        self.topk, self.topp = topk, topp

    def distribution(self, lprobs: Tensor) -> Tensor:
        return sampling_distribution(lprobs, self.topk, self.topp)

    def verify(self, lprobs: Tensor, drafts: Tensor, gamma: Tensor, prev_score: Tensor,
               q: Optional[Tensor] = None) -> Verdict:
        """lprobs [B, K+1, V] target; drafts [B, K]; q [B, K, V] draft distributions, or None
        for certain (one-hot) drafts."""
        bsz, kk = drafts.shape
        p = self.distribution(lprobs)  # [B, K+1, V]
        if kk > 0:
            p_d = p[:, :kk].gather(2, drafts[:, :, None]).squeeze(2)
            u = torch.rand(p_d.shape, dtype=p_d.dtype, device=p_d.device)
            if q is None:
                keep = u < p_d  # q(d) = 1
            else:
                q_d = q.gather(2, drafts[:, :, None]).squeeze(2)
                keep = u * q_d < p_d  # u < p/q without dividing by a tiny q
            accepted = leading_true(keep, gamma)
        else:
            accepted = torch.zeros(bsz, dtype=torch.long, device=drafts.device)
        rows = torch.arange(bsz, device=drafts.device)
        p_a = p[rows, accepted]
        rejected = accepted < gamma
        if kk > 0:
            if q is None:  # p - onehot(d), clamped: p without d
                rejected_draft = drafts[rows, accepted.clamp(max=kk - 1)]
                residual = p_a.scatter(1, rejected_draft[:, None], 0.0)
            else:
                residual = (p_a - q[rows, accepted.clamp(max=kk - 1)]).clamp(min=0)
            total = residual.sum(-1, keepdim=True)
            # a rejection where p - q has no positive mass has probability zero; guard rounding
            residual = torch.where(total > 0, residual / total.clamp(min=1e-30), p_a)
            p_a = torch.where(rejected[:, None], residual, p_a)
        nxt = torch.multinomial(p_a, 1).squeeze(1)
        tokens = torch.cat([drafts, drafts.new_zeros(bsz, 1)], dim=1)
        tokens[rows, accepted] = nxt
        # stock's score for a sampled token: log(exp(lprob)) in float32, then a running sum
        values = lprobs.gather(2, tokens[:, :, None]).squeeze(2).exp().log()
        return Verdict(accepted, tokens, cumulate(prev_score, values))

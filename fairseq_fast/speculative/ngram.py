"""N-gram lookup as a proposer (prompt lookup decoding): drafts copied from the text itself.

    proposer = NgramProposer(rules, ngram_min=1, ngram_max=3, source_lookup=True)

For each row, its last n tokens (n from ngram_max down to ngram_min) are looked for, where the
source shares the target's dictionary, in its source sentence (the occurrence nearest to where a
copy would have it) and then in its own committed tokens (the latest occurrence); the first
occurrence of the longest suffix that occurs gives the draft: up to k tokens that follow it
(csrc/ngram_lookup.c states the rule exactly). No model runs, so the draft costs a
few microseconds a round; it pays where the output copies its input (summaries, corrections,
paraphrases, post-editing) or repeats itself, and a row whose suffix occurs nowhere drafts
nothing that round.

A looked-up token is certain: as a proposal its distribution q is one-hot. Greedy verification
keeps the target's output whatever the draft is; rejection sampling with a one-hot q keeps the
target's distribution too (acceptance.RejectionSampling, q=None), so no [B, k, V] q is built.

On the CPU the lookup is one C call for the batch (`nl_lookup`); elsewhere `lookup_torch`, the
same rule in tensor ops.

LookaheadRounds runs many rounds in one C call where the target's whole decoder is one (float32
on the CPU, greedy): lookup, the verify pass, the target's choices and the commit of each round
without returning to Python (decoding/greedy_steps.py's run_lookahead). At the sizes where a
round's Python costs more than its arithmetic, that is most of a round. The loop then verifies
the tokens the call chose as the drafts of one window, against the logits they were chosen
from, like any plain steps (plain_steps.py): what is kept and its scores are the loop's own.
"""
from typing import Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.decoding.backends import DecoderBackend, GreedyStepper
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.errors import UserError
from fairseq_fast.kernels import calls, fused
from fairseq_fast.options import check_ngram_sizes
from fairseq_fast.speculative.plain_steps import in_c_rules
from fairseq_fast.speculative.stop_rules import StopRule


class NgramProposer:
    """Proposer (proposer.Proposer) of n-gram lookup drafts. source_lookup: look in the source
    sentence too (only where the source and target dictionaries are the same)."""

    def __init__(self, rules: StepRules, ngram_min: int = 1, ngram_max: int = 3,
                 source_lookup: bool = False):
        check_ngram_sizes(ngram_min, ngram_max)
        self.rules = rules
        self.ngram_min, self.ngram_max = int(ngram_min), int(ngram_max)
        self.source_lookup = source_lookup
        self.source: Optional[Tensor] = None  # [B, S] this batch's source, rows in flight
        self.calls = 0  # decoder passes: none
        self.last_steps = 0
        self.last_rows = 0
        self.pending = 0  # no state to join: every row can draft at once
        self.in_place = True  # place(): newcomers take finished rows' places

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        self.source = net_input["src_tokens"] if self.source_lookup else None

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None):
        return net_input["src_tokens"] if self.source_lookup else None

    def admit(self, prepared, lo: int, hi: int, capacity: int, fresh: bool = False) -> None:
        if prepared is None:
            self.source = None
            return
        theirs = prepared[lo:hi]
        if fresh or self.source is None or self.source.size(0) == 0:
            self.source = theirs
            return
        # sources are left-padded (the lookup counts the padding): the shorter one gets more
        width = max(self.source.size(1), theirs.size(1))
        self.source = torch.cat([_left_pad(self.source, width, self.rules.pad),
                                 _left_pad(theirs, width, self.rules.pad)])

    def place(self, prepared, lo: int, hi: int, at: Tensor) -> None:
        if prepared is None:
            self.source = None
            return
        theirs = prepared[lo:hi]
        width = max(self.source.size(1), theirs.size(1))
        # out of place: the rows may be views of a batch's src_tokens, the caller's
        self.source = _left_pad(self.source, width, self.rules.pad).index_copy(
            0, at, _left_pad(theirs, width, self.rules.pad))

    def join(self) -> None:
        pass

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """As DraftModelProposer.propose; q is None (one-hot: the drafts are certain)."""
        if stop is not None:
            raise UserError("n-gram lookup drafts have no probabilities for a stop rule")
        drafts, drafted = lookup(tokens, n_tokens, self.source, self.ngram_min, self.ngram_max,
                                 k, self.rules.pad, self.rules.eos)
        self.last_rows = tokens.size(0)
        width = drafts.size(1)
        if width:
            steps = torch.arange(width, device=tokens.device)
            place = n_tokens[:, None] + steps
            keep = steps[None, :] < drafted[:, None]
            tokens.scatter_(1, place, torch.where(keep, drafts, tokens.gather(1, place)))
        return drafts, None, drafted

    def rollback(self, n_tokens: Tensor) -> None:
        pass

    def select_rows(self, rows: Tensor) -> None:
        if self.source is not None:
            self.source = self.source.index_select(0, rows)


class LookaheadRounds:
    """Rounds of an NgramProposer's drafts verified by the target, in one C call."""

    ROUNDS = 16  # tokens per call and row: up to (k + 1) * max(ROUNDS // rows, 1), and
    SCORES = 1 << 21  # fewer where rows x tokens x vocabulary would pass this many floats

    def __init__(self, steps: GreedyStepper, proposer: NgramProposer):
        self.steps = steps
        self.proposer = proposer

    @classmethod
    def build(cls, target: DecoderBackend,
              proposer: NgramProposer) -> Optional["LookaheadRounds"]:
        """None where the target has no whole-decoder C steps (or the call is not built)."""
        steps = target.greedy_steps
        if (steps is None or not hasattr(steps, "run_lookahead")
                or not fused.available("gd_lookahead_f32")):
            return None
        return cls(steps, proposer)

    def usable(self, state: DecoderState, rows: int, k: int, rules: StepRules,
               prefix: Optional[Tensor], first_step: int) -> bool:
        """As PlainSteps.usable, for windows of k drafts."""
        return in_c_rules(rules, prefix, first_step) and self.steps.usable(state, rows, k + 1)

    def run(self, state: DecoderState, tokens: Tensor, n_tokens: Tensor, k: int,
            rules: StepRules):
        """GreedySteps.run_lookahead for the proposer's n-gram sizes and source: (chosen [B,
        s], counts [B], logits [B, s, V], tally [6])."""
        p = self.proposer
        rows, vocab = tokens.size(0), self.steps.lean.decoder.output_projection.weight.size(0)
        limit = min((k + 1) * max(self.ROUNDS // rows, 1), self.SCORES // (rows * vocab))
        limit = max(limit, k + 1)
        return self.steps.run_lookahead(state, tokens, n_tokens, p.source, p.ngram_min,
                                        p.ngram_max, k, limit, rules)


def _left_pad(source: Tensor, width: int, pad: int) -> Tensor:
    """source [B, S] with pad prepended up to `width` columns."""
    if source.size(1) == width:
        return source
    return torch.cat([source.new_full((source.size(0), width - source.size(1)), pad), source],
                     dim=1)


def lookup(tokens: Tensor, n_tokens: Tensor, source: Optional[Tensor], ngram_min: int,
           ngram_max: int, k: int, pad: int, eos: int) -> Tuple[Tensor, Tensor]:
    """Each row's n-gram lookup draft: (drafts [B, k'], drafted [B]); k' = max(drafted) <= k,
    entries past a row's drafted count are pad. tokens [B, L] (BOS at 0), n_tokens [B] the
    committed tokens per row, source [B, S] or None."""
    found = calls.ngram_lookup(tokens, n_tokens, source, ngram_min=ngram_min,
                               ngram_max=ngram_max, k=k, pad=pad, eos=eos)
    if found is None:
        return lookup_torch(tokens, n_tokens, source, ngram_min, ngram_max, k, pad, eos)
    return found


def lookup_torch(tokens: Tensor, n_tokens: Tensor, source: Optional[Tensor], ngram_min: int,
                 ngram_max: int, k: int, pad: int, eos: int) -> Tuple[Tensor, Tensor]:
    """lookup() in tensor ops (any device): per n, every window of the history and the source
    compared with the suffix at once, the match by a max or min over positions."""
    bsz, length = tokens.shape
    device = tokens.device
    filler = lambda t: (t == pad) | (t == eos) | (t < 0)  # noqa: E731
    # one haystack per row: history (positions 0 .. L-1), then the source (L .. L+S-1); a
    # history position at or past the row's length is a filler
    hist = tokens.masked_fill(torch.arange(length, device=device)[None, :] >= n_tokens[:, None],
                              pad)
    hay = hist if source is None else torch.cat([hist, source.to(tokens)], dim=1)
    total = hay.size(1)
    lead = (torch.zeros(bsz, dtype=torch.long, device=device) if source is None  # left padding
            else (source == pad).long().cumprod(1).sum(1))
    positions = torch.arange(total, device=device)
    found = torch.full((bsz,), -1, dtype=torch.long, device=device)  # start of the continuation
    ends = torch.zeros(bsz, dtype=torch.long, device=device)  # where it must end
    for n in range(ngram_max, ngram_min - 1, -1):
        if total <= n:
            continue
        start = (n_tokens - n).clamp(min=0)
        at = (start[:, None] + torch.arange(n, device=device)[None, :]).clamp(max=length - 1)
        suffix = hist.gather(1, at)
        usable = (n_tokens - 1 >= n) & ~filler(suffix).any(1) & (found < 0)
        windows = hay.unfold(1, n, 1)  # [B, total - n + 1, n]
        match = (windows == suffix[:, None, :]).all(2)
        p = positions[: total - n + 1][None, :]
        after = hay.gather(1, (p + n).clamp(max=total - 1).expand(bsz, -1))
        in_hist = (p >= 1) & (p + n <= n_tokens[:, None] - 1)
        in_src = p >= length if source is not None else torch.zeros_like(in_hist)
        if source is not None:
            in_src = in_src & (p + n <= total - 1)
        ok = match & ~filler(after) & usable[:, None]
        hist_p = torch.where(ok & in_hist, p, -1).max(1).values
        # in the source: the nearest to the diagonal (the position in the source's text, p -
        # length - lead, against the suffix's output position), the later of two as near
        far = (p - length - lead[:, None] - (n_tokens - n - 1)[:, None]).abs() * (total + 1) - p
        far = torch.where(ok & in_src, far, torch.iinfo(far.dtype).max)
        nearest = far.min(1)
        src_p = torch.where(nearest.values < torch.iinfo(far.dtype).max, nearest.indices, -1)
        take = torch.where(src_p >= 0, src_p, hist_p)
        hit = take >= 0
        found = torch.where(hit, take + n, found)
        ends = torch.where(hit, torch.where(src_p >= 0, torch.full_like(n_tokens, total),
                                            n_tokens), ends)
    steps = torch.arange(max(k, 0), device=device)
    at = found[:, None] + steps[None, :]
    cont = hay.gather(1, at.clamp(0, total - 1))
    good = (found[:, None] >= 0) & (at < ends[:, None]) & ~filler(cont)
    drafted = good.long().cumprod(1).sum(1)
    widest = int(drafted.max()) if bsz else 0
    drafts = torch.where(steps[None, :] < drafted[:, None], cont, torch.full_like(cont, pad))
    return drafts[:, :widest], drafted

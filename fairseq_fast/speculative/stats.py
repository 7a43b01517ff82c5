"""Counters of a speculative or BiLD generator, over its lifetime (summed over batches), and
the summary line the command-line tools print at exit.

The loop calls `record` once per verify pass with what the pass did, per row:
    offered   [B] drafts verified (a row's window, after any stop rule)
    accepted  [B] drafts kept
    committed [B] tokens written (kept drafts + the target's own token, cut after EOS)
    cap       [B] the window each row was allowed (the draft-length schedule's)
    drafts    [B, K] the proposed tokens
    draft_steps  draft decoder passes this round
    verified  positions the target computed (its lean decoder's last_inputs)
and `record_plain` once per round of plain greedy steps that the draft-length schedule chose
instead (draft_length.py): no draft, so alpha and the tokens per target call leave it out.
"""
from collections import Counter
from dataclasses import dataclass, field

from torch import Tensor


@dataclass
class SpecStats:
    """Counters over a generator's lifetime (summed over batches)."""
    target_calls: int = 0  # verify passes (each serves every unfinished row of a batch)
    draft_calls: int = 0  # draft decoder passes
    row_rounds: int = 0  # (row, verify pass) pairs
    proposed: int = 0  # draft tokens offered for verification (sum of per-row gamma)
    accepted: int = 0  # draft tokens kept
    rejected: int = 0  # (row, verify pass) pairs that rejected a draft (at most one each)
    committed: int = 0  # tokens written (kept drafts + the target's own), EOS included
    verified: int = 0  # positions the target computed (rows x the window's width unless ragged)
    sentences: int = 0
    plain_rounds: int = 0  # rounds of plain greedy steps (no draft)
    plain_steps: int = 0  # their steps
    plain_committed: int = 0  # tokens they wrote
    # wall seconds by phase (time.perf_counter around each; on a GPU, work still queued when a
    # phase ends counts in the phase that waits for it): "encoders" (the encoders and the
    # encoder K/V, the draft's as rows join it), "draft_encoder" (the draft's share of them),
    # "drafting" (the rounds' proposals) and "verifying" (verify passes, plain steps and
    # n-gram rounds in one C call)
    seconds: Counter = field(default_factory=Counter)

    def record(self, offered: Tensor, accepted: Tensor, committed: Tensor, cap: Tensor,
               drafts: Tensor, draft_steps: int, verified: int) -> None:
        """verified: the positions the pass computed (lean_decoder.forward's last_inputs)"""
        self.target_calls += 1
        self.draft_calls += draft_steps
        self.row_rounds += offered.numel()
        self.proposed += int(offered.sum())
        self.accepted += int(accepted.sum())
        self.rejected += int((accepted < offered).sum())
        self.committed += int(committed.sum())
        self.verified += verified

    def record_rounds(self, tally: Tensor, committed: Tensor) -> None:
        """Rounds run in one C call (ngram.LookaheadRounds): tally [6] its rounds, row rounds,
        drafts offered, drafts kept, row rounds that rejected one, and positions computed;
        committed [B] the tokens each row wrote."""
        rounds, row_rounds, proposed, accepted, rejected, verified = tally.tolist()
        self.target_calls += rounds
        self.row_rounds += row_rounds
        self.proposed += proposed
        self.accepted += accepted
        self.rejected += rejected
        self.committed += int(committed.sum())
        self.verified += verified

    def record_plain(self, committed: Tensor, steps: int, verified: int) -> None:
        """A round of `steps` plain greedy steps: committed [B] tokens written per row."""
        self.plain_rounds += 1
        self.plain_steps += steps
        self.plain_committed += int(committed.sum())
        self.verified += verified

    @property
    def plain_share(self) -> float:
        """Share of the output written by plain steps."""
        return self.plain_committed / max(self.plain_committed + self.committed, 1)

    @property
    def alpha(self) -> float:
        """Leviathan et al.'s acceptance rate: the chance that a draft token is kept given that
        the ones before it were. Each verified position is one trial: a kept draft is a success,
        the first rejection of a window a failure; drafts after a rejection are never tried.
        (accepted / proposed, the share of drafts kept, is lower and is not this alpha.)"""
        return self.accepted / max(self.accepted + self.rejected, 1)

    @property
    def kept_share(self) -> float:
        return self.accepted / max(self.proposed, 1)

    @property
    def decided(self) -> int:
        """Verified positions that decided something: per row and pass, its kept drafts and the
        position that gave the target's own token, and each token a plain step wrote. The
        others lay after a rejection, or past the row's own window in a pass that computed
        every row at the widest window's width (where its rows could not be ragged:
        lean_decoder.forward), or past a row's EOS in a round of plain steps."""
        return self.row_rounds + self.accepted + self.plain_committed

    @property
    def useful_share(self) -> float:
        """Share of the verified positions that decided something (`decided`)."""
        return self.decided / max(self.verified, 1)

    @property
    def tokens_per_target_call(self) -> float:
        return self.committed / max(self.row_rounds, 1)

    def summary(self) -> str:
        plain = (f", plain steps {self.plain_steps} ({100 * self.plain_share:.1f}% of the "
                 f"tokens)" if self.plain_rounds else "")
        return (f"speculative decoding: {self.sentences} sentences, target calls "
                f"{self.target_calls}, draft calls {self.draft_calls}, mean accepted tokens per "
                f"target call {self.tokens_per_target_call:.2f}, acceptance rate alpha "
                f"{self.alpha:.3f}, drafts kept {100 * self.kept_share:.1f}%{plain}")


@dataclass
class BiLDStats(SpecStats):
    eos: int = 2  # the dictionary's EOS: a window that ends with it is no fallback
    fallbacks: int = 0  # (row, large call) pairs caused by a low-confidence small token

    def record(self, offered: Tensor, accepted: Tensor, committed: Tensor, cap: Tensor,
               drafts: Tensor, draft_steps: int, verified: int) -> None:
        super().record(offered, accepted, committed, cap, drafts, draft_steps, verified)
        # a window shorter than the cap ended in a fallback unless it ended with EOS
        short = offered < cap
        if drafts.size(1) > 0:
            last = drafts.gather(1, (offered - 1).clamp(min=0)[:, None]).squeeze(1)
            short &= ~((offered > 0) & (last == self.eos))
        self.fallbacks += int(short.sum())

    @property
    def small_share(self) -> float:
        """Share of the output written by the small model (kept small-model tokens)."""
        return self.accepted / max(self.committed, 1)

    def summary(self) -> str:
        return (f"BiLD: {self.sentences} sentences, large-model calls {self.target_calls}, "
                f"small-model calls {self.draft_calls}, fallbacks {self.fallbacks}, rollbacks "
                f"{self.rejected}, tokens by the small model {100 * self.small_share:.1f}%")

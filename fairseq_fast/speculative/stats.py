"""Counters of a speculative or BiLD generator, over its lifetime (summed over batches), and
the summary line the command-line tools print at exit."""
from dataclasses import dataclass


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
    sentences: int = 0

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
    def tokens_per_target_call(self) -> float:
        return self.committed / max(self.row_rounds, 1)

    def summary(self) -> str:
        return (f"speculative decoding: {self.sentences} sentences, target calls "
                f"{self.target_calls}, draft calls {self.draft_calls}, mean accepted tokens per "
                f"target call {self.tokens_per_target_call:.2f}, acceptance rate alpha "
                f"{self.alpha:.3f}, drafts kept {100 * self.kept_share:.1f}%")


@dataclass
class BiLDStats(SpecStats):
    fallbacks: int = 0  # (row, large call) pairs caused by a low-confidence small token

    @property
    def small_share(self) -> float:
        """Share of the output written by the small model (kept small-model tokens)."""
        return self.accepted / max(self.committed, 1)

    def summary(self) -> str:
        return (f"BiLD: {self.sentences} sentences, large-model calls {self.target_calls}, "
                f"small-model calls {self.draft_calls}, fallbacks {self.fallbacks}, rollbacks "
                f"{self.rejected}, tokens by the small model {100 * self.small_share:.1f}%")

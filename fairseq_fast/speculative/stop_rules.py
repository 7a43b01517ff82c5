"""When a row stops drafting before its window cap (the caps: draft_length.py); proposer.py asks
the stop rule after every draft step.

    FallbackPolicy        BiLD's fallback: the small model's confidence below a threshold
"""
from typing import Protocol

import torch
from torch import Tensor


class StopRule(Protocol):
    """Ends a row's window early. `stop` sees, per row, the draft's probability of the token it
    just proposed, and returns [B] bool.
    `discards_last`: False, the token just proposed is still offered; True, it is withdrawn and
    the target writes that position itself."""

    discards_last: bool

    def stop(self, prob: Tensor) -> Tensor: ...


class FallbackPolicy:
    """Stop rule for the proposer: a row falls back to the large model when the small model's
    probability for the token it just proposed (its argmax, so its largest) is below the
    threshold; that token is withdrawn. At threshold 1 every token falls back: a softmax
    probability is below 1 even where float32 rounds it to 1.0."""

    discards_last = True

    def __init__(self, threshold: float):
        self.threshold = threshold

    def stop(self, prob: Tensor) -> Tensor:
        if self.threshold >= 1.0:
            return torch.ones_like(prob, dtype=torch.bool)
        return prob < self.threshold

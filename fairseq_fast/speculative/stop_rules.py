"""How long a row drafts: a schedule sets each row's window cap per round, a stop rule may end
the window earlier (proposer.py asks it after every draft step).

    FixedDraftLength      --draft-len K: every window K long
    AdaptiveDraftLength   --adaptive-draft-len: a per-row window cap (HF's heuristic) and a
                          cost-aware stop inside it (step_cost: the draft's cost relative to the
                          target's); both a schedule and a stop rule
    FallbackPolicy        BiLD's fallback: the small model's confidence below a threshold
"""
from typing import Optional, Protocol

import torch
from torch import Tensor, nn


class StopRule(Protocol):
    """Ends a row's window early. `stop` sees, per row, the draft's probability of the token it
    just proposed and the product of those over the window so far, and returns [B] bool.
    `discards_last`: False, the token just proposed is still offered; True, it is withdrawn and
    the target writes that position itself."""

    discards_last: bool

    def stop(self, prob: Tensor, product: Tensor) -> Tensor: ...


class DraftLengthSchedule(Protocol):
    """Each row's window cap: `start` for a new batch, `update` after every verify pass (cap,
    offered and accepted per row, the draft steps run, the tokens the batch gained); caps stay
    within [1, maximum]."""

    maximum: int

    def start(self, batch: int, device) -> Tensor: ...

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor, steps: int,
               committed: int) -> Tensor: ...


class FixedDraftLength:
    """Every window `length` drafts long."""

    def __init__(self, length: int):
        self.maximum = length

    def start(self, batch: int, device) -> Tensor:
        return torch.full((batch,), self.maximum, dtype=torch.long, device=device)

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor, steps: int,
               committed: int) -> Tensor:
        return cap


class AdaptiveDraftLength:
    """Per-row gamma: a window cap that follows HF's heuristic, and a cost-aware stop inside it.

    Cap (HF transformers' "heuristic" schedule, per row): +2 after a window whose drafts were all
    kept, -1 otherwise, within [1, maximum].

    Stop: the draft's probability for each token it proposes estimates the chance the target
    keeps it (a draft distilled from the target's outputs is trained to be exactly that), so the
    product over the window so far estimates P(every draft so far is kept). One more draft step
    costs c (a draft step relative to a verify pass) and adds that product's worth of expected
    tokens; it pays while the product exceeds c times the tokens a unit of cost currently buys
    (a running average). A row stops drafting there; the batch stops when every row has, or
    reached its cap. HF's own confidence stop is a fixed threshold (0.4); this one follows c and
    the measured throughput."""

    discards_last = False  # a stopping row still offers the token it just proposed

    def __init__(self, initial: int, maximum: int, cost_ratio: float):
        self.initial, self.maximum = initial, maximum
        self.cost_ratio = cost_ratio
        self.throughput = 1.0  # committed tokens per unit of cost (a verify pass = 1), running

    def start(self, batch: int, device) -> Tensor:
        return torch.full((batch,), self.initial, dtype=torch.long, device=device)

    def stop(self, prob: Tensor, product: Tensor) -> Tensor:
        """Rows whose next draft step is not worth its cost (see the class docstring)."""
        return product < self.cost_ratio * self.throughput

    def update(self, cap: Tensor, offered: Tensor, accepted: Tensor, steps: int,
               committed: int) -> Tensor:
        """cap [B] this round's caps, offered [B] drafts verified per row (<= cap), accepted [B];
        steps = draft steps run, committed = tokens the batch gained. Returns next round's caps."""
        per_row = committed / max(cap.numel(), 1)
        self.throughput = 0.8 * self.throughput + 0.2 * per_row / (1 + steps * self.cost_ratio)
        grown = torch.where(accepted == offered, cap + 2, cap - 1)
        return grown.clamp(1, self.maximum)


def step_cost(decoder: nn.Module, vocab: Optional[Tensor] = None) -> float:
    """Relative cost of one decoder step: a fixed overhead per layer (kernel launches and Python,
    which dominate small models) plus the multiply-adds of the weights a step reads (the output
    projection or adaptive softmax included, tied to the embeddings or not, only its `vocab`
    rows when given; the embedding lookup excluded), in units of one 1024 x 1024 matmul."""
    per_layer_overhead = 0.5
    weights = {id(p): p.numel() for p in decoder.parameters()}
    for p in decoder.embed_tokens.parameters():  # a lookup (adaptive input: a small one)
        weights.pop(id(p), None)
    if getattr(decoder, "adaptive_softmax", None) is not None:  # all of it, for a distribution
        weights.update({id(p): p.numel() for p in decoder.adaptive_softmax.parameters()})
    projection = getattr(decoder, "output_projection", None)
    if projection is not None:
        rows = projection.weight.size(0) if vocab is None else vocab.numel()
        weights[id(projection.weight)] = rows * projection.weight.size(1)
    return len(decoder.layers) * per_layer_overhead + sum(weights.values()) / 2 ** 20


class FallbackPolicy:
    """Stop rule for the proposer: a row falls back to the large model when the small model's
    probability for the token it just proposed (its argmax, so its largest) is below the
    threshold; that token is withdrawn. At threshold 1 every token falls back: a softmax
    probability is below 1 even where float32 rounds it to 1.0."""

    discards_last = True

    def __init__(self, threshold: float):
        self.threshold = threshold

    def stop(self, prob: Tensor, product: Tensor) -> Tensor:
        if self.threshold >= 1.0:
            return torch.ones_like(prob, dtype=torch.bool)
        return prob < self.threshold

"""Decoder state with rollback: preallocated self-attention K/V written at absolute positions.

One `DecoderState` holds everything a Transformer decoder needs between calls, for a batch of
rows that may each be at a different length:

    self_k, self_v   [layers, B, heads, capacity, head_dim]  self-attention keys/values
    lengths          [B]          how many decoder inputs of each row are cached (valid slots)
    cross_k, cross_v list over layers of [B, heads, src_len, head_dim], computed once per source
    cross_mask       [B, 1, 1, src_len] bool, True at source padding (or None)

Writing n new inputs puts them at slots lengths[b] .. lengths[b] + n - 1 of row b. Rolling back
is only moving `lengths` down: stale slots are never read (attention masks every key at or after a
query's own position + 1) and are overwritten by the next write, so rollback copies nothing and
zeroes nothing. Encoder K/V are never touched by rollback.
"""
from dataclasses import dataclass
from typing import List, Optional

import torch
from torch import Tensor


@dataclass
class DecoderState:
    self_k: Tensor
    self_v: Tensor
    lengths: Tensor
    cross_k: List[Tensor]
    cross_v: List[Tensor]
    cross_mask: Optional[Tensor]

    @classmethod
    def allocate(cls, layers: int, batch: int, heads: int, head_dim: int, capacity: int,
                 cross_k: List[Tensor], cross_v: List[Tensor], cross_mask: Optional[Tensor],
                 dtype: torch.dtype, device: torch.device) -> "DecoderState":
        shape = (layers, batch, heads, capacity, head_dim)
        # zeros, not empty: masked slots get probability 0, but 0 * NaN from uninitialised
        # memory would still be NaN. Slots written once hold finite values for good.
        return cls(
            self_k=torch.zeros(shape, dtype=dtype, device=device),
            self_v=torch.zeros(shape, dtype=dtype, device=device),
            lengths=torch.zeros(batch, dtype=torch.long, device=device),
            cross_k=cross_k, cross_v=cross_v, cross_mask=cross_mask,
        )

    @property
    def capacity(self) -> int:
        return self.self_k.size(3)

    def rollback_to(self, lengths: Tensor) -> None:
        """Keep only the first `lengths[b]` cached inputs of each row (lengths [B], never larger)."""
        self.lengths = torch.minimum(self.lengths, lengths)

    def select_rows(self, rows: Tensor) -> None:
        """Keep only `rows` (LongTensor [B']) of the batch, in that order (finished rows leave)."""
        self.self_k = self.self_k.index_select(1, rows)
        self.self_v = self.self_v.index_select(1, rows)
        self.lengths = self.lengths.index_select(0, rows)
        self.cross_k = [k.index_select(0, rows) for k in self.cross_k]
        self.cross_v = [v.index_select(0, rows) for v in self.cross_v]
        if self.cross_mask is not None:
            self.cross_mask = self.cross_mask.index_select(0, rows)

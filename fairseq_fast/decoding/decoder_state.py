"""Decoder state with rollback: preallocated self-attention K/V written at absolute positions.

One `DecoderState` holds everything a Transformer decoder needs between calls, for a batch of
rows that may each be at a different length:

    self_k, self_v   [layers, R, heads, capacity, head_dim]  self-attention keys/values; row b
                     writes cache row b (R = B, or more once rows have left an `origin` state)
    lengths          [B]          how many decoder inputs of each row are cached (valid slots)
    cross_k, cross_v list over layers of [B / group, heads, src_len, head_dim], computed once per
                     source sentence and shared by its `group` consecutive rows (its beams);
                     the state's own (sentences leaving move rows within them)
    cross_mask       [B / group, 1, 1, src_len] bool, True at source padding (or None)
    origin           [B, capacity] int64 or None: the cache row that holds row b's slot t
    cross_rows       [B / group] int64 or None: the row of cross_k/v/mask that sentence s reads
                     (None: row s); set with `origin` once sentences have left

Writing n new inputs puts them at slots lengths[b] .. lengths[b] + n - 1 of row b. Rolling back
is only moving `lengths` down: stale slots are never read (attention masks every key at or after a
query's own position + 1) and are overwritten by the next write, so rollback copies nothing and
zeroes nothing. Encoder K/V are never touched by rollback.

Beam search reorders rows (`select_rows` with a same-size order). Without `origin`, only rows
whose source row differs are copied, and only their valid slots; rows that leave the batch are
compacted in place (valid slots only, no new buffer). With `origin` (fairseq's generator on CPU,
where the attention kernel reads keys through it), nothing is copied at all: a reorder or rows
leaving select rows of `origin`, the new row b reads its history from the cache rows its origin
names, and writes its next slots to cache row b. That is safe because every row is at the same
length there (one token per step for all, or one prefill): slots at or past that length are
named by no origin yet (and no slot is read before it is written, so such a state's buffers
need no zeroing and may be an earlier batch's: `allocate(reuse=...)`). Encoder K/V follow at
sentence level (a sentence's beams stay together), so they change only when whole sentences
leave the batch: then they are compacted, or with `origin` left in place too, `cross_rows`
naming the row each remaining sentence reads. A state that runs out of slots doubles its
capacity (`ensure_capacity`); `initial_capacity` is the size a batch's state starts at.
"""
from dataclasses import dataclass
from typing import List, Optional, Tuple

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
    group: int = 1
    origin: Optional[Tensor] = None
    cross_rows: Optional[Tensor] = None
    # the whole K/V buffers this state's self_k/self_v lie in (those may be views of fewer rows),
    # the grown ones once it has grown: what a later batch's `allocate(reuse=...)` takes
    buffers: Optional[Tuple[Tensor, Tensor]] = None
    # the whole tensors cross_k / cross_v / cross_mask are the first rows of, once sentences
    # have left (compact_cross) or joined (admit): (keys, values, mask or None)
    cross_full: Optional[Tuple[List[Tensor], List[Tensor], Optional[Tensor]]] = None

    @classmethod
    def allocate(cls, layers: int, batch: int, heads: int, head_dim: int, capacity: int,
                 cross_k: List[Tensor], cross_v: List[Tensor], cross_mask: Optional[Tensor],
                 dtype: torch.dtype, device: torch.device, group: int = 1,
                 origins: bool = False,
                 reuse: Optional[Tuple[Tensor, Tensor]] = None) -> "DecoderState":
        """origins: record each slot's cache row instead of copying rows on reorders (only for
        rows that always share one length, see the module's docstring). reuse: an earlier
        state's self_k/self_v, taken where they fit (no new memory): as they are with origins
        (rows at one length never read a slot before writing it), zeroed without (a fresh
        buffer's page faults cost several times the zeroing of one already mapped)."""
        shape = (layers, batch, heads, capacity, head_dim)
        if reuse is not None and _fits(reuse[0], shape, dtype, device):
            buffers = reuse
            self_k, self_v = reuse[0][:, :batch], reuse[1][:, :batch]
            capacity = self_k.size(3)
            if not origins:
                self_k.zero_()
                self_v.zero_()
        else:
            # zeros, not empty: masked slots get probability 0, but 0 * NaN from uninitialised
            # memory would still be NaN. Slots written once hold finite values for good.
            # (With origins no slot is read before it is written.)
            new = torch.empty if origins else torch.zeros
            self_k = new(shape, dtype=dtype, device=device)
            self_v = new(shape, dtype=dtype, device=device)
            buffers = (self_k, self_v)
        return cls(
            self_k=self_k, self_v=self_v,
            lengths=torch.zeros(batch, dtype=torch.long, device=device),
            cross_k=cross_k, cross_v=cross_v, cross_mask=cross_mask, group=group,
            origin=torch.zeros(batch, capacity, dtype=torch.long, device=device)
            if origins else None, buffers=buffers,
        )

    @property
    def capacity(self) -> int:
        return self.self_k.size(3)

    def ensure_capacity(self, needed: int) -> None:
        """Grow (doubling) so that `needed` slots fit; copies the cache once per doubling."""
        if needed <= self.capacity:
            return
        capacity = max(needed, 2 * self.capacity)
        self._regrow(self.self_k.size(1), capacity, used=self.capacity)
        if self.origin is not None:
            origin = self.origin.new_zeros(self.origin.size(0), capacity)
            origin[:, : self.origin.size(1)] = self.origin
            self.origin = origin

    def _regrow(self, rows: int, capacity: int, used: int) -> None:
        """New self-attention K/V buffers of `rows` rows and `capacity` slots, with the first
        `used` slots of the rows kept copied in. The rest is zeroed, or, with origins, left
        unset: no slot is read before it is written then (rows at one length), which halves
        the time of growing a beam-search cache."""
        shape = self.self_k.shape[:1] + (rows,) + self.self_k.shape[2:3] + (
            capacity, self.self_k.size(4))
        kept = min(rows, self.self_k.size(1))
        self.buffers = None  # each old buffer goes once its rows are copied: at most one is
        for name in ("self_k", "self_v"):  # held beside the new ones (a lower peak)
            old = getattr(self, name)
            new = old.new_zeros(shape) if self.origin is None else old.new_empty(shape)
            new[:, :kept, :, :used] = old[:, :kept, :, :used]
            setattr(self, name, new)
            del old
        self.buffers = (self.self_k, self.self_v)

    def wrote(self, lo: int, n: int) -> None:
        """Every row has just written slots lo .. lo + n - 1 of its own cache row."""
        if self.origin is not None:
            rows = torch.arange(self.origin.size(0), device=self.origin.device)
            self.origin[:, lo:lo + n] = rows[:, None]

    def keys_values(self, layer: int, total: int):
        """Layer's self-attention K/V for slots [0, total) as [B, heads, total, head_dim]:
        views of the cache, or with `origin` gathered from the rows it names."""
        k, v = self.self_k[layer][:, :, :total], self.self_v[layer][:, :, :total]
        if self.origin is None:
            return k, v
        rows = self.origin[:, :total]  # [B, T]; the slot index broadcasts along it
        slots = torch.arange(total, device=rows.device)
        return k[rows, :, slots].transpose(1, 2), v[rows, :, slots].transpose(1, 2)

    def compact_cross(self) -> None:
        """Move the encoder K/V and padding rows that `cross_rows` names into the batch's
        sentence order (row s for sentence s), for readers that index them directly. In place:
        only the rows whose place changes are copied (none when the last sentences left)."""
        rows = self.cross_rows
        if rows is None:
            return
        keys, values, mask = self._cross_whole()
        n = rows.numel()
        changed = (rows != torch.arange(n, device=rows.device)).nonzero().squeeze(1)
        if changed.numel():
            src = rows.index_select(0, changed)
            for t in (*keys, *values, *([] if mask is None else [mask])):
                t.index_copy_(0, changed, t.index_select(0, src))  # gathered, then written
        self.cross_full = (keys, values, mask)
        self.cross_k, self.cross_v = [k[:n] for k in keys], [v[:n] for v in values]
        self.cross_mask = None if mask is None else mask[:n]
        self.cross_rows = None

    def _cross_whole(self):
        """(keys, values, mask): the whole tensors the encoder K/V rows lie in, this state's own
        to change (the mask, until then a view of the encoder output's, is copied first)."""
        if self.cross_full is not None:
            return self.cross_full
        mask = None if self.cross_mask is None else self.cross_mask.clone()
        return list(self.cross_k), list(self.cross_v), mask

    def admit(self, cross_k: List[Tensor], cross_v: List[Tensor],
              cross_mask: Optional[Tensor], rows: int, at: Optional[Tensor] = None) -> None:
        """`rows` new rows after the batch's, with nothing cached yet (in-flight batching: they
        take the places of rows that left). cross_k/cross_v [rows, H, S', D] per layer and
        cross_mask [rows, 1, 1, S'] (or None) are theirs, copied in and never written (they
        may be views of a batch's). Sources of other lengths are padded on the right, as
        masked keys, to the longest: a row's keys keep their places, and a masked key adds
        exactly nothing to a row's attention (csrc/attention.c skips it; torch gives it
        probability 0). at [rows]: rows of the batch that have finished, whose places they
        take instead (nothing moves, nothing is appended). Not for beam search (group 1, no
        origins)."""
        if self.group != 1 or self.origin is not None:
            raise RuntimeError("admit() is for rows of their own (group 1, no origins)")
        self.compact_cross()
        have = self.lengths.numel()
        if at is None:
            want = have + rows
            self._append_rows(have, want)
            if have == 0:  # an empty batch: copies of the newcomers'
                self.cross_k = [k.clone(memory_format=torch.contiguous_format) for k in cross_k]
                self.cross_v = [v.clone(memory_format=torch.contiguous_format) for v in cross_v]
                self.cross_mask, self.cross_full = cross_mask, None
                return
            place = slice(have, want)
        else:  # zeroed as appended rows are, all layers at once ([layers, B, H, capacity, D])
            want = have
            for cache in (self.self_k, self.self_v):
                cache.index_fill_(1, at, 0)
            self.lengths = self.lengths.index_fill(0, at, 0)
            place = at
        if not self.cross_k:
            return
        keys, values, mask = self._cross_whole()
        theirs = cross_k[0].size(2)
        rows_there, width = keys[0].size(0), keys[0].size(2)
        if rows_there < want or width < theirs:  # wider or more rows: new tensors, copied once
            ours, width = width, max(width, theirs)
            grown = max(want, rows_there)
            # layer by layer, with the state's references dropped first: each old tensor goes
            # as its new one is made, so growing holds one layer's copy beside the rest
            self.cross_full, self.cross_k, self.cross_v = None, [], []
            for whole in (keys, values):
                for i in range(len(whole)):
                    whole[i] = _widen(whole[i][:have], width, grown)
            mask = _widen_mask(None if mask is None else mask[:have], have, ours, width,
                               self.lengths.device, grown)
        elif mask is None:
            mask = torch.zeros(rows_there, 1, 1, width, dtype=torch.bool,
                               device=self.lengths.device)
        for whole, new in zip((*keys, *values), (*cross_k, *cross_v)):
            whole[place, :, :theirs] = new
            whole[place, :, theirs:] = 0
        mask[place] = _widen_mask(cross_mask, rows, theirs, width, self.lengths.device)
        self.cross_full = (keys, values, mask)
        self.cross_k, self.cross_v = [k[:want] for k in keys], [v[:want] for v in values]
        self.cross_mask = mask[:want] if bool(mask[:want].any()) else None

    def _append_rows(self, have: int, want: int) -> None:
        """Self-attention rows have .. want - 1, with nothing cached, after the batch's."""
        buf_k, buf_v = self.buffers if self.buffers is not None else (self.self_k, self.self_v)
        if (buf_k.size(1) >= want and buf_k.size(3) == self.capacity
                and (have == 0 or buf_k.data_ptr() == self.self_k.data_ptr())):
            # the rows past the batch's in the same buffers, zeroed: the torch path reads every
            # slot below a call's total (masked ones with probability 0, and 0 x NaN is NaN)
            self.self_k, self.self_v = buf_k[:, :want], buf_v[:, :want]
            self.self_k[:, have:].zero_()
            self.self_v[:, have:].zero_()
        else:
            self._regrow(want, self.capacity, used=int(self.lengths.max()) if have else 0)
        self.lengths = torch.cat([self.lengths, self.lengths.new_zeros(want - have)])

    def rollback_to(self, lengths: Tensor) -> None:
        """Keep at most the first `lengths[b]` cached inputs of each row (lengths [B]); a row
        that holds fewer keeps all of its own."""
        self.lengths = torch.minimum(self.lengths, lengths)

    def select_rows(self, rows: Tensor) -> None:
        """Keep only `rows` (LongTensor [B']) of the batch, in that order (finished rows leave).
        With group > 1 rows must keep each sentence's beams together (as fairseq's generator
        does); the new row i then belongs to sentence rows[i] // group."""
        if rows.numel() == self.lengths.numel() and torch.equal(
                rows, torch.arange(rows.numel(), device=rows.device)):
            return  # the order is unchanged: copy nothing
        if self.origin is not None:
            self.origin = self.origin.index_select(0, rows)  # histories move, K/V stay
        elif rows.numel() == self.lengths.numel():
            self._move_changed_rows(rows)
        else:  # rows leave the batch
            self._compact(rows)
        self.lengths = self.lengths.index_select(0, rows)
        if not self.cross_k:
            return
        sentences = rows.view(-1, self.group)[:, 0] // self.group
        n_sent = self.cross_k[0].size(0) if self.cross_rows is None else self.cross_rows.numel()
        if sentences.numel() == n_sent and torch.equal(
                sentences, torch.arange(n_sent, device=rows.device)):
            return
        # the sentences' encoder rows are recorded; with origins the encoder K/V stay in place
        # too, otherwise they are gathered now
        self.cross_rows = (sentences if self.cross_rows is None
                           else self.cross_rows.index_select(0, sentences))
        if self.origin is None:
            self.compact_cross()

    def _compact(self, rows: Tensor) -> None:
        """Fewer rows: move the kept rows' valid slots to the front of the same buffers (no new
        allocation: a fresh buffer costs more in page faults than the copy itself); only the
        rows whose place changes are copied."""
        used, keep = int(self.lengths.max()), rows.numel()
        changed = (rows != torch.arange(keep, device=rows.device)).nonzero().squeeze(1)
        src = rows.index_select(0, changed)
        for name in ("self_k", "self_v"):
            cache = getattr(self, name)
            if changed.numel():
                for layer in cache:  # [B, H, capacity, D]
                    valid = layer[:, :, :used]
                    valid.index_copy_(0, changed, valid.index_select(0, src))  # gathered first
            setattr(self, name, cache[:, :keep])

    def _move_changed_rows(self, rows: Tensor) -> None:
        """Same batch size, new order: copy the valid slots of the rows whose source differs."""
        changed = (rows != torch.arange(rows.numel(), device=rows.device)).nonzero().squeeze(1)
        used = int(self.lengths.max())
        src = rows.index_select(0, changed)
        for cache in (self.self_k, self.self_v):
            for layer in cache:  # one layer at a time: [B, H, used, D], the rows' slots
                valid = layer[:, :, :used]
                # gathered into a new tensor before any row is overwritten
                valid.index_copy_(0, changed, valid.index_select(0, src))


def _widen(keys: Tensor, width: int, rows: int) -> Tensor:
    """keys [R, H, S, D] in a new [rows, H, width, D] tensor, zeros after them."""
    out = keys.new_zeros((rows, keys.size(1), width, keys.size(3)))
    out[: keys.size(0), :, : keys.size(2)] = keys
    return out


def _widen_mask(mask: Optional[Tensor], rows: int, keys: int, width: int,
                device: torch.device, total: int = 0) -> Tensor:
    """A source-padding mask [max(rows, total), 1, 1, width]: for the first `rows`, `mask` (None:
    nothing masked) over its `keys` keys and the appended ones masked; every key of the rows
    after them masked."""
    out = torch.ones(max(rows, total), 1, 1, width, dtype=torch.bool, device=device)
    out[:rows, ..., :keys] = False if mask is None else mask
    return out


def initial_capacity(src_len: int, extra: int = 0) -> int:
    """Slots to allocate a batch's K/V cache with: the source's length plus `extra` (a
    speculative window) plus BOS and EOS, rounded up to a power of two (so 1 to 2 times the
    source's length), at least 32. Not max_len: a fresh cache is written in full (zeroed, or
    page-faulted in), which for max_len slots costs more than decoding a batch of short
    sentences; and not the first 32 slots only either: each growth (ensure_capacity) copies the
    cache into a fresh buffer, at transformer-big's size and 160 rows most of a second. The
    power of two lets the next batch (fairseq sorts batches by source length) mostly fit in this
    one's buffers (allocate(reuse=...))."""
    return max(32, 1 << (src_len + extra + 1).bit_length())


def _fits(cache: Tensor, shape: tuple, dtype: torch.dtype, device: torch.device) -> bool:
    """Whether a cache [layers, R, heads, capacity, head_dim] holds `shape`: the same layers,
    heads and head size, at least its rows and capacity, the same dtype and device."""
    return (cache.dim() == 5 and cache.dtype == dtype and cache.device == torch.device(device)
            and all(have == want for have, want in zip(cache.shape[::2], shape[::2]))
            and cache.size(1) >= shape[1] and cache.size(3) >= shape[3])

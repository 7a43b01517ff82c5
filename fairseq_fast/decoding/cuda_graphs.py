"""Decoder calls on a GPU replayed from CUDA graphs, for the lean decoder.

    graphs = StepGraphs(lean)                            # backends.GraphBackend's
    if graphs.usable(state, tokens):
        logits = graphs.run(state, tokens, need_attn)    # the caller advances state.lengths

A lean decoder step at batch 1 launches well over a hundred small CUDA kernels that keep the GPU
busy for a small part of the step: the host issuing them sets the pace. A CUDA graph records
those launches once and replays them with one. A graph replays fixed shapes and addresses, so it
records LeanDecoder.static_forward, whose shapes do not depend on the rows' lengths: each row
writes at slots read on the device and attends over the cache's whole capacity with the slots
after its query masked. One graph serves every call of a (rows, inputs per row, cache buffer,
source length bucket) combination, across steps, sentences and batches:

- inputs: the tokens and the rows' lengths are copied into tensors of the graph's own;
- self-attention K/V: the state's cache buffers themselves (generators hand one batch's buffers
  to the next, so their address recurs; a grown cache is a new key);
- encoder K/V: copied, once per batch (or when sentences leave), into buffers of the graph set's
  own, padded to a power of two of the source length and masked there; a padded key gets
  probability exactly 0, so the sums are those of the unpadded attention;
- outputs: cloned out of the graph's memory (graphs share one memory pool, so a graph's
  intermediates may lie where another's outputs were).

`replay` serves any such function of the state: graph_steps.py records a greedy draft's whole
propose() with it. Where a call does not fit (a cache that records origins, more
than MAX_INPUTS inputs a row, autograd, another GPU than the current one), forward's ordinary
path runs. A graph is captured on its key's first call (after one eager run of the same
function, which initialises cuBLAS and what the pass caches); the least recently used one goes
when there are MAX_GRAPHS, and all go when a decoder weight changes (a grown position table is
kept for the graphs that read the old one).

`FAIRSEQ_FAST_CUDA_GRAPHS=0` switches graphs off, as does --no-fast-linear (torch's ops one at a
time everywhere): backends.choose then picks another backend.
"""
import dataclasses
import os
from collections import OrderedDict
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.decoding.decoder_state import DecoderState

MAX_GRAPHS = 64  # per lean decoder
MAX_INPUTS = 32  # inputs per row (prefills and verify windows); longer calls run eagerly
MIN_SOURCE = 16  # the smallest encoder K/V buffer


def enabled() -> bool:
    """Whether CUDA graphs are on: FAIRSEQ_FAST_CUDA_GRAPHS unset or anything but 0."""
    return os.environ.get("FAIRSEQ_FAST_CUDA_GRAPHS", "1").strip() != "0"


def source_bucket(length: int) -> int:
    """Encoder K/V buffer length for a source of `length`: a power of two, >= MIN_SOURCE."""
    return max(MIN_SOURCE, 1 << max(length - 1, 0).bit_length())


@dataclasses.dataclass
class _Cross:
    """Encoder K/V padded to `bucket` source positions, and the mask of the padding."""
    keys: list
    values: list
    mask: Tensor  # [sentences, 1, 1, bucket] bool, True = masked
    source: Optional[list] = None  # the state's cross_k list last copied in


@dataclasses.dataclass
class _Graph:
    graph: object  # torch.cuda.CUDAGraph, or None for an eager static run (capture=False)
    inputs: Tuple[Tensor, ...]  # the graph's own copies of the call's inputs
    state: DecoderState  # what the function reads: the cache, its own lengths, padded K/V
    out: tuple  # the function's outputs, in the graph's memory


class StepGraphs:
    def __init__(self, lean, capture: bool = True):
        """lean: the LeanDecoder whose calls these replay. capture=False runs the same static
        functions eagerly instead of replaying them (tests check their arithmetic on any
        device)."""
        self.lean = lean
        self.capture = capture
        self.graphs: "OrderedDict[tuple, _Graph]" = OrderedDict()  # least recently used first
        self.cross: Dict[tuple, _Cross] = {}
        self.pool = None
        self.weights: Optional[tuple] = None  # what the graphs were captured on
        self.keep = []  # position tables graphs read (a grown table replaces the module's)
        self.replays = 0  # calls served here (tests and benchmarks read it)

    def usable(self, state: DecoderState, tokens: Tensor) -> bool:
        """Whether a call on `state` with inputs `tokens` [B, n] is served here."""
        return self.fits(state, tokens.size(1))

    def fits(self, state: DecoderState, width: int) -> bool:
        """Whether a call on `state` of `width` inputs per row is served here."""
        if state.origin is not None or width > MAX_INPUTS or torch.is_grad_enabled():
            return False
        device = state.lengths.device
        return not self.capture or (device.type == "cuda"
                                    and device.index == torch.cuda.current_device())

    def new_batch(self) -> None:
        """Drop every graph if a decoder weight changed since they were captured (called once
        per batch, by LeanDecoder.init_state)."""
        weights = tuple((p.data_ptr(), p._version, p.dtype, p.device)
                        for p in self.lean.decoder.parameters())
        if weights != self.weights:
            self.graphs.clear()
            self.cross.clear()
            self.keep.clear()
            self.weights = weights

    @staticmethod
    def key(state: DecoderState, what: tuple) -> tuple:
        """A graph's key: `what` it computes and the buffers it reads and writes."""
        cache = state.self_k
        cross = ((state.cross_k[0].size(0), source_bucket(state.cross_k[0].size(2)))
                 if state.cross_k else None)
        return what + (cache.data_ptr(), state.self_v.data_ptr(), tuple(cache.shape),
                       tuple(cache.stride()), cache.dtype, cross)

    def run(self, state: DecoderState, tokens: Tensor, need_attn: bool = False):
        """LeanDecoder.forward's result for this call (state.lengths is left to the caller)."""
        out = self.replay(self.key(state, ("call", tuple(tokens.shape), need_attn)), state,
                          (tokens,), lambda st, t: self._call(st, t, need_attn))
        logits = out[0].clone()
        if not need_attn:
            return logits
        attn = out[1]
        if attn is not None and state.cross_k:  # the source's own positions
            attn = attn[..., :state.cross_k[0].size(2)]
        return logits, None if attn is None else attn.clone()

    def _call(self, state: DecoderState, tokens: Tensor, need_attn: bool) -> tuple:
        out = self.lean.static_forward(state, tokens, need_attn)
        return out if need_attn else (out,)

    @torch.no_grad()
    def replay(self, key: tuple, state: DecoderState, inputs: Tuple[Tensor, ...],
               function) -> tuple:
        """function(static state, *inputs) -> tuple of tensors, replayed from the graph of `key`
        (captured now if it is new) on this call's inputs and state; returns the graph's own
        outputs (overwritten by its next replay, and possibly by other graphs': copy what is
        kept). The function may update the static state's lengths in place; state.lengths is
        left alone."""
        entry = self.graphs.get(key)
        if entry is None:
            if len(self.graphs) >= MAX_GRAPHS:
                self.graphs.popitem(last=False)
            entry = self.graphs[key] = self._record(key, state, inputs, function)
        else:
            self.graphs.move_to_end(key)
            self._load(entry, state, inputs, key)
            if entry.graph is None:
                entry.out = function(entry.state, *entry.inputs)
            else:
                entry.graph.replay()
        self.replays += 1
        return entry.out

    def _load(self, entry: _Graph, state: DecoderState, inputs: Tuple[Tensor, ...],
              key: tuple) -> None:
        for mine, theirs in zip(entry.inputs, inputs):
            mine.copy_(theirs)
        entry.state.lengths.copy_(state.lengths)
        self._fill_cross(state, key[-1])

    def _record(self, key: tuple, state: DecoderState, inputs: Tuple[Tensor, ...],
                function) -> _Graph:
        """A new key: the static state and inputs, one eager run, then (on a GPU) the capture
        and a replay (it writes the same K/V to the same slots as the eager run did)."""
        cross = self._fill_cross(state, key[-1])
        static = dataclasses.replace(
            state, lengths=state.lengths.clone(), origin=None, cross_rows=None, cross_full=None,
            cross_k=cross.keys if cross else [], cross_v=cross.values if cross else [],
            cross_mask=cross.mask if cross else None)
        entry = _Graph(None, tuple(t.clone() for t in inputs), static, ())
        if not self.capture:
            entry.out = function(entry.state, *entry.inputs)
            return entry
        self.keep.append(self.lean.position_table(state.capacity)[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # initialises cuBLAS and what the pass caches
            function(entry.state, *entry.inputs)
        torch.cuda.current_stream().wait_stream(side)
        if self.pool is None:
            self.pool = torch.cuda.graph_pool_handle()
        entry.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(entry.graph, pool=self.pool, capture_error_mode="thread_local"):
            entry.out = function(entry.state, *entry.inputs)
        self._load(entry, state, inputs, key)  # the eager run may have moved the lengths
        entry.graph.replay()
        return entry

    def _fill_cross(self, state: DecoderState, shape: Optional[Tuple[int, int]]
                    ) -> Optional[_Cross]:
        """The padded encoder K/V buffers for `state`, refilled when its K/V are new."""
        if shape is None:
            return None
        cross = self.cross.get(shape)
        if cross is None:
            sentences, bucket = shape
            k = state.cross_k[0]
            buffer = (len(state.cross_k), sentences, k.size(1), bucket, k.size(3))
            cross = self.cross[shape] = _Cross(
                [k.new_zeros(buffer[1:]) for _ in state.cross_k],
                [k.new_zeros(buffer[1:]) for _ in state.cross_k],
                torch.ones(sentences, 1, 1, bucket, dtype=torch.bool, device=k.device))
        if cross.source is not state.cross_k:
            length = state.cross_k[0].size(2)
            for mine, theirs in ((cross.keys, state.cross_k), (cross.values, state.cross_v)):
                for buffer, kv in zip(mine, theirs):
                    buffer[:, :, :length].copy_(kv)
            cross.mask[..., length:] = True
            if state.cross_mask is None:
                cross.mask[..., :length] = False
            else:
                cross.mask[..., :length].copy_(state.cross_mask)
            cross.source = state.cross_k
        return cross

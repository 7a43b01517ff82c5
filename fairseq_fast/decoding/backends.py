"""How a decoder's calls run: one `DecoderBackend` per lean decoder, chosen once.

    backend = decoder_backend(model, vocab=None, kernels=True)
    state = backend.init_state(encoder_out, batch, capacity)    # a batch's DecoderState
    logits = backend.forward(state, tokens, counts)              # [B, n, V]; state advanced
    steps = backend.greedy_steps                                 # k greedy steps in one call,
    if steps is not None and steps.usable(state, rows, width):   # or None
        drafts = steps.run(state, feed, unread, first, k, rules)
    backend.rollback(state, lengths)                             # forget the later inputs

Every backend computes the function lean_decoder.py defines (LeanDecoder, the torch reference,
whose float64 path the exactness tests compare with stock fairseq); they differ in how a call is
launched:

    TorchBackend   torch's ops one at a time (their matmuls and attention through the plugin's
                   kernels where LeanDecoder was built with them): float64, float16, other
                   devices, --no-fast-linear
    FusedBackend   float32 on the CPU: the whole pass in one C call (fused_decoder.py), else each
                   layer in one (fused_layer.py); k greedy steps in one call (greedy_steps.py)
    GraphBackend   CUDA: calls replayed from CUDA graphs (cuda_graphs.py); k greedy steps as one
                   graph (graph_steps.py)

`decoder_backend` chooses from the model's dtype and device when a generator is built; the
rules are `choose` below, and nowhere else. A call that the chosen backend's fast path cannot
take (ragged rows that ask for the encoder attention or read a cache that records row origins,
more rows than a kernel takes) runs on the reference path of the same backend: same function,
one op at a time. FusedBackend takes its whole-decoder call wherever it can, so that a step has
the bits of its greedy steps' calls: a row's scores do not depend on which of the two ran it.

A backend and its structs belong to one generator: generators may run at once on one model
(threads calling the hub), and a backend's scratch buffers must not be shared between them.
What is safe to share across generators (packed weights, loaded drafts, measured schedules) is
the model's ModelRuntime's (runtime.py).
"""
from typing import Optional, Protocol

import torch
from torch import Tensor, nn

from fairseq_fast.decoding import cuda_graphs
from fairseq_fast.decoding.cuda_graphs import StepGraphs
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.fused_decoder import FusedDecoder
from fairseq_fast.decoding.fused_layer import FusedLayers, head_mean
from fairseq_fast.decoding.graph_steps import GraphSteps
from fairseq_fast.decoding.greedy_steps import GreedySteps
from fairseq_fast.decoding.lean_decoder import CrossSource, LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules


class GreedyStepper(Protocol):
    """k greedy decoder steps in one call (greedy_steps.py on the CPU, graph_steps.py on a GPU).
    Capability flags: `keeps_scores` (run_logits and run_scored exist), `runs_past_eos`
    (every row drafts k tokens, including after its EOS)."""

    keeps_scores: bool
    runs_past_eos: bool

    def usable(self, state: DecoderState, rows: int, width: int = 1) -> bool:
        """Whether a run of `rows` rows with `width` catch-up inputs each runs here."""

    def run(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor, k: int,
            rules: StepRules) -> Tensor:
        """feed [B, width]: each row's unread inputs (unread[b] real ones, right-padded);
        first [B]: the decoding step of each row's first draft. Returns the drafts [B, k']
        and advances state.lengths."""


class DecoderBackend:
    """The interface, and the torch reference's implementation of it (TorchBackend)."""

    name = "torch"

    def __init__(self, model: nn.Module, lean: LeanDecoder):
        self.model = model
        self.lean = lean
        self.greedy_steps: Optional[GreedyStepper] = None
        self.last_inputs = 0  # the inputs the last forward computed (ragged rows: fewer)

    @property
    def has_cross_attention(self) -> bool:
        return self.lean.has_cross_attention

    def init_state(self, encoder_out: Optional[dict], batch: int, capacity: int,
                   origins: bool = False, reuse=None) -> DecoderState:
        """A state for `batch` rows of this model's dtype and device (LeanDecoder.init_state);
        the backend's structs follow weight changes from here on."""
        param = next(self.model.parameters())
        return self.lean.init_state(encoder_out, batch, capacity, param.dtype, param.device,
                                    origins=origins, reuse=reuse)

    def admit(self, state: Optional[DecoderState], cross: CrossSource, lo: int, hi: int,
              capacity: int, reuse=None, at: Optional[Tensor] = None) -> DecoderState:
        """In-flight batching: sentences lo .. hi - 1 of a batch whose encoder K/V `cross`
        gives join `state` as new rows with nothing cached (None: a new state of just them,
        `capacity` slots, in `reuse`'s buffers where they fit); at [hi - lo]: in the places
        of these finished rows of `state` (DecoderState.admit)."""
        if state is None:
            state = self.init_state(None, 0, capacity, reuse=reuse)
        cross_k, cross_v, mask = cross.take(lo, hi)
        state.admit(cross_k, cross_v, mask, hi - lo, at=at)
        return state

    def forward(self, state: DecoderState, tokens: Tensor, counts: Optional[Tensor] = None,
                need_attn: bool = False, out: Optional[Tensor] = None):
        """tokens [B, n] -> logits [B, n, V] (LeanDecoder.forward: with need_attn also the
        encoder attention; counts [B]: ragged rows). Appends the inputs to `state`. out
        [B, n, V]: where the logits may be written (a buffer the caller reuses); the tensor
        returned holds them either way."""
        self.last_inputs = tokens.numel()
        return self.lean.forward(state, tokens, need_attn, counts, out)

    def rollback(self, state: DecoderState, lengths: Tensor) -> None:
        """Row b keeps its first lengths[b] inputs (DecoderState.rollback_to: nothing moves)."""
        state.rollback_to(lengths)

    def scores_to_logits(self, scores: Tensor) -> Tensor:
        """A shortlist's scores [..., N] as logits over the vocabulary [..., V]."""
        return self.lean._scatter(scores)


class TorchBackend(DecoderBackend):
    """torch's ops one at a time."""


class FusedBackend(DecoderBackend):
    """float32 on the CPU: whole passes and whole layers in C calls."""

    name = "c"

    def __init__(self, model: nn.Module, lean: LeanDecoder, layers: FusedLayers):
        super().__init__(model, lean)
        self.layers = layers
        self.whole = FusedDecoder.build(lean, layers)  # None unless every part is of its kinds
        self.greedy_steps = GreedySteps.build(model, lean, self.whole)

    def init_state(self, encoder_out, batch, capacity, origins=False, reuse=None):
        self.layers.new_batch()  # its first call checks for changed weights
        return super().init_state(encoder_out, batch, capacity, origins, reuse)

    def forward(self, state, tokens, counts=None, need_attn=False, out=None):
        bsz, n = tokens.shape
        lean = self.lean
        self.last_inputs = bsz * n
        ragged = counts is not None and bool((counts < n).any())
        # the whole-decoder call wherever it runs, so that a step has the bits of the greedy
        # steps' C calls (which share its embedding, norms and output projection)
        if (self.whole is not None
                and not (ragged and (need_attn or state.origin is not None))
                and self.whole.usable(state, bsz * n)):
            start, _, total = lean.begin_call(state, n)
            probs = self.layers.probs_buffer(state, bsz, n) if need_attn else None
            if ragged:
                packed = self.whole.forward(state, tokens, total, counts)
                scores = packed.new_zeros(bsz, n, packed.size(1))
                scores[torch.arange(n)[None, :] < counts[:, None]] = packed
                self.last_inputs = packed.size(0)
            else:
                scores = self.whole.forward(state, tokens, total, probs=probs, out=out)
            lean.end_call(state, start, n, counts)
            logits = self.scores_to_logits(scores)
            if not need_attn:
                return logits
            return logits, None if probs is None else head_mean(probs)
        if not self.layers.ready(bsz * n):
            return lean.forward(state, tokens, need_attn, counts, out)
        start, _, total = lean.begin_call(state, n)
        positions = start[:, None] + torch.arange(n, device=tokens.device)[None, :]
        x = lean.embed(tokens, positions, total).contiguous()  # updated in place by the layers
        attn = self.layers.run(x, state, start, total, need_attn)
        lean.end_call(state, start, n, counts)
        logits = lean.output(x, out)
        return (logits, attn) if need_attn else logits


class GraphBackend(DecoderBackend):
    """CUDA: each call's launches recorded once and replayed."""

    name = "cuda-graphs"

    def __init__(self, model: nn.Module, lean: LeanDecoder, capture: bool = True):
        """capture=False runs the same static functions eagerly (tests check the arithmetic of
        this backend on any device)."""
        super().__init__(model, lean)
        self.graphs = StepGraphs(lean, capture)
        self.greedy_steps = GraphSteps.build(model, lean, self.graphs)

    def init_state(self, encoder_out, batch, capacity, origins=False, reuse=None):
        self.graphs.new_batch()  # drops its graphs if a weight changed
        return super().init_state(encoder_out, batch, capacity, origins, reuse)

    def forward(self, state, tokens, counts=None, need_attn=False, out=None):
        self.last_inputs = tokens.numel()
        if not self.graphs.usable(state, tokens):
            return self.lean.forward(state, tokens, need_attn, counts, out)
        start, _, _ = self.lean.begin_call(state, tokens.size(1))
        out = self.graphs.run(state, tokens, need_attn)  # this call's ops, replayed
        self.lean.end_call(state, start, tokens.size(1), counts)
        return out


def choose(model: nn.Module, lean: LeanDecoder, kernels: bool) -> DecoderBackend:
    """The backend for `model` (its dtype and device now) and `lean` (its weights): the plugin's
    kernels off -> torch; a CUDA model with graphs on (cuda_graphs.enabled) -> graphs; a float32
    CPU model whose every layer the C layers compute -> C; anything else -> torch."""
    param = next(model.parameters())
    if not kernels:
        return TorchBackend(model, lean)
    if param.device.type == "cuda" and cuda_graphs.enabled() and torch.cuda.is_available():
        return GraphBackend(model, lean)
    if param.device.type == "cpu" and param.dtype == torch.float32:
        layers = FusedLayers.build(lean.layers, lean.linear)
        if layers is not None:
            return FusedBackend(model, lean, layers)
    return TorchBackend(model, lean)


def decoder_backend(model: nn.Module, vocab: Optional[Tensor] = None,
                    kernels: bool = True) -> DecoderBackend:
    """A backend for `model`'s decoder (a fairseq model the lean decoder supports; UserError
    naming what it does not otherwise). vocab: the only tokens scored (a draft's shortlist,
    draft_vocab.py); kernels: the plugin's kernels (off: --no-fast-linear)."""
    return choose(model, LeanDecoder(model.decoder, vocab, kernels), kernels)

"""A whole decoder pass in one C call (csrc/greedy_draft.c), for the lean decoder.

    whole = FusedDecoder.build(lean, layers)             # None unless the decoder is plain
    if whole is not None and whole.usable(state, rows):
        scores = whole.forward(state, tokens, total)     # [B, n, N]; the caller advances lengths
        # or with probs=[B, H, n, S] (the last layer's encoder attention), out=a scores buffer

lean_decoder.forward around its fused layers (fused_layer.py, one C call per layer) still runs
~20 tensor ops and Python calls: embedding, positions, the final norm, the output projection,
and a call per layer, each paying Python's overhead and, on a large model, cache misses (its
data evicted by the weights streamed in between). Here the embedding, positions,
layernorm_embedding, every layer, the final norm and the output projection (a shortlist's rows
or all) are one call, in one parallel region. The same
gd_decoder struct serves a greedy draft's steps (decoding/greedy_steps.py).

For decoders whose every part the C code has: the fused layers (float32 on CPU, ReLU, affine
layer norms), token embeddings (no adaptive input), no quant-noise or extra projections,
sinusoidal or learned positions (or none), affine norms, an output projection (no adaptive
softmax). The arithmetic is the Python path's, norms summed in the C layers' order (as the fused
layers already do inside each layer).
"""
from typing import Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.fused_layer import linear_struct, norm_struct, plain_norm
from fairseq_fast.kernels import fused


def decoder_supported(lean) -> bool:
    """Whether every part of lean.decoder around its layers is one the C decoder computes."""
    decoder = lean.decoder
    positions = decoder.embed_positions
    return (type(decoder.embed_tokens) is nn.Embedding
            and decoder.quant_noise is None and decoder.project_in_dim is None
            and decoder.project_out_dim is None and decoder.adaptive_softmax is None
            and getattr(decoder, "output_projection", None) is not None
            and (positions is None or hasattr(positions, "weights")
                 or isinstance(positions, nn.Embedding))
            and all(m is None or plain_norm(m)
                    for m in (decoder.layernorm_embedding, decoder.layer_norm)))


class FusedDecoder:
    def __init__(self, lean, layers):
        """lean: the LeanDecoder whose weights, position table and output weights (a
        shortlist's when it has one) this reads; layers: its FusedLayers, whose per-layer
        structs this uses."""
        self.lean = lean
        self.fused = layers
        self._decoder = None  # (what it was built from, the struct, the tensors it points into)
        self._states = None  # (the fused layers' state arguments, the struct array)
        self._work = torch.empty(0)

    @classmethod
    def build(cls, lean, layers) -> Optional["FusedDecoder"]:
        if not decoder_supported(lean) or not fused.available("gd_forward_f32"):
            return None
        return cls(lean, layers)

    def usable(self, state: DecoderState, rows: int) -> bool:
        """Whether a call of `rows` inputs in all (rows x inputs per row) runs here."""
        weight = self.lean.decoder.embed_tokens.weight
        return weight.dtype == torch.float32 and self.fused.ready(rows)

    # -- argument structs ---------------------------------------------------------------------
    def decoder_struct(self, positions: int):
        """The gd_decoder struct for up to `positions` decoder time steps, rebuilt when a weight
        it points to changed (the layers' own structs are fused_layer.py's, rebuilt on its own
        check) or the position table grew."""
        lean, layers = self.lean, self.fused
        if not layers._checked:
            layers.refresh()
        dec = lean.decoder
        table, offset = (lean.position_table(positions) if dec.embed_positions is not None
                         else (None, 0))
        vocab, weight, bias = lean.output_weights()
        norms = [t for m in (dec.layernorm_embedding, dec.layer_norm) if m is not None
                 for t in (m.weight, m.bias)]
        parts = (layers._structs, table, vocab, weight, bias, dec.embed_tokens.weight, *norms)
        key = tuple((id(t), getattr(t, "_version", None)) for t in parts)
        if self._decoder is not None and self._decoder[0] == key:
            return self._decoder[1]
        keep = []
        s = fused.decoder(embed=dec.embed_tokens.weight, embed_scale=dec.embed_scale,
                          positions=table, position_offset=offset,
                          embed_norm=norm_struct(dec.layernorm_embedding, keep),
                          final_norm=norm_struct(dec.layer_norm, keep),
                          output=linear_struct(lean.linear, weight, bias, keep), vocab=vocab,
                          layers=layers._structs, keep=keep)
        self._decoder = (key, s, keep, parts)
        return s

    def state_struct(self, state: DecoderState, bsz: int):
        """(source padding or None, the gd_layer_state array) of a state's caches and encoder
        K/V, worked out again only when the fused layers' arguments were."""
        args = self.fused._state_args(state, bsz)  # the same object while the state's are
        if self._states is None or self._states[0] is not args:
            caches, crosses, _ = args
            self._states = (args, fused.layer_states(caches, crosses))
        return args[2], self._states[1]

    def work(self, decoder, bsz: int, width: int) -> Tensor:
        """Scratch space for a greedy call of bsz rows of `width` first inputs (grown, never
        shrunk; shared with the passes)."""
        return self._scratch(fused.decoder_work_floats(decoder, bsz, width))

    def _scratch(self, size: int) -> Tensor:
        if self._work.numel() < size:
            self._work = torch.empty(size)
        return self._work

    # -- the pass -----------------------------------------------------------------------------
    def forward(self, state: DecoderState, tokens: Tensor, total: int,
                counts: Optional[Tensor] = None, probs: Optional[Tensor] = None,
                out: Optional[Tensor] = None) -> Tensor:
        """tokens [B, n] at slots state.lengths[b] .. + n - 1, total = max(state.lengths) + n
        (capacity for it already ensured) -> scores [B, n, N] (N: the shortlist's size where
        there is one); the K/V of every input are written, state.lengths is left to the
        caller. counts [B] (each <= n): ragged rows, row b reads only its first counts[b]
        inputs and writes only their K/V; scores [sum(counts), N] then, row b's first at
        sum(counts[:b]). probs [B, H, n, S]: receives the last layer's encoder attention
        probabilities. out: where the scores may be written (used where it has their size,
        is contiguous float32 and there are no ragged rows)."""
        bsz, n = tokens.shape
        decoder = self.decoder_struct(total)
        pad, layer_states = self.state_struct(state, bsz)
        off = None
        rows = bsz * n
        if counts is not None:
            off = torch.zeros(bsz + 1, dtype=torch.long)
            torch.cumsum(counts, 0, out=off[1:])
            rows = int(off[-1])
        work = self._scratch(fused.forward_work_floats(decoder, rows))
        width = decoder.output.out_features
        if (out is not None and off is None and out.numel() == rows * width
                and out.dtype == torch.float32 and out.device.type == "cpu"
                and out.is_contiguous()):
            scores = out.view(rows, width)
        else:
            scores = torch.empty(rows, width)
        tokens, lengths = tokens.contiguous(), state.lengths.contiguous()
        fused.decoder_forward(decoder, layer_states, tokens, lengths, total=total, pad=pad,
                              off=off, scores=scores, work=work, probs=probs,
                              origin=state.origin)
        return scores if counts is not None else scores.view(bsz, n, -1)

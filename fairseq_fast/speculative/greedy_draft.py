"""A greedy draft's steps in one C call (csrc/greedy_draft.c).

    steps = GreedyDraftSteps.build(model, lean)         # None unless the draft is of that kind
    if steps is not None and steps.usable(state, rows, width):
        drafts = steps.run(state, feed, unread, first, k, rules)   # [B, k'] and state advanced

A drafted token through lean_decoder.forward and StepRules.log_probs is ~30 tensor ops and
Python calls around the fused layers (fused_layer.py); for a small draft beside a large target
that is most of the draft's time (the draft's arithmetic is a fraction of a millisecond). Here a
whole propose() is one call: embedding, positions, the layers, the final norm, the output
projection (a shortlist's rows or all) and the argmax under stock's edits, k times.

Used by DraftModelProposer for greedy drafting when nothing in Python has to see a step: no
stop rule, no forced prefix, no n-gram blocking; for drafts whose decoder is the plain kind the
fused layers take (float32 on CPU, ReLU, affine layer norms), token embeddings and an output
projection (no adaptive input or softmax, no extra projections), fairseq's own log-softmax.
The draft only proposes: the target verifies every token, so this path, like the shortlist,
can change how many drafts are kept (float32 rounding of a near-tie) but never the output.
"""
import ctypes
from typing import Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.fused_layer import plain_norm, linear_struct
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.kernels import loader

_Decoder, _LayerState, _Rules, _Layer, _Norm = (
    loader.struct(name) for name in ("gd_decoder", "gd_layer_state", "gd_rules", "dl_layer",
                                     "dl_norm"))


def _stock_normalization(model: nn.Module) -> bool:
    """Whether the model's log-probs are fairseq's own log_softmax of the logits (whose argmax
    is the logits' argmax)."""
    return all(getattr(type(owner), name).__module__.startswith("fairseq.")
               for owner, name in ((model, "get_normalized_probs"),
                                   (model, "get_normalized_probs_scriptable"),
                                   (model.decoder, "get_normalized_probs"),
                                   (model.decoder, "get_normalized_probs_scriptable"))
               if hasattr(type(owner), name))


def steps_supported(model: nn.Module, lean: LeanDecoder) -> bool:
    decoder = lean.decoder
    positions = decoder.embed_positions
    return (lean.fused_layers is not None and type(decoder.embed_tokens) is nn.Embedding
            and decoder.quant_noise is None and decoder.project_in_dim is None
            and decoder.project_out_dim is None and decoder.adaptive_softmax is None
            and getattr(decoder, "output_projection", None) is not None
            and (positions is None or hasattr(positions, "weights")
                 or isinstance(positions, nn.Embedding))
            and all(m is None or plain_norm(m)
                    for m in (decoder.layernorm_embedding, decoder.layer_norm))
            and _stock_normalization(model))


class GreedyDraftSteps:
    def __init__(self, lean: LeanDecoder):
        self.lean = lean
        self.fused = lean.fused_layers
        self._decoder = None  # (what it was built from, the struct, the tensors it points into)
        self._states = None  # (the fused layers' state arguments, the struct array)
        self._work = torch.empty(0)

    @classmethod
    def build(cls, model: nn.Module, lean: LeanDecoder) -> Optional["GreedyDraftSteps"]:
        if not steps_supported(model, lean) or loader.function("gd_greedy_f32") is None:
            return None
        return cls(lean)

    def usable(self, state: DecoderState, rows: int) -> bool:
        """Whether a propose() of `rows` rows (the first step's inputs included) runs here."""
        weight = self.lean.decoder.embed_tokens.weight
        return (state.origin is None and weight.dtype == torch.float32
                and self.fused.ready(rows))

    # -- argument structs ---------------------------------------------------------------------
    def _decoder_struct(self, positions: int):
        """The gd_decoder struct, rebuilt when a weight it points to changed (the layers' own
        structs are fused_layer.py's, rebuilt on its own check) or the position table grew."""
        lean, fused = self.lean, self.fused
        if not fused._checked:
            fused.refresh()
        dec = lean.decoder
        table, offset = (lean.position_table(positions) if dec.embed_positions is not None
                         else (None, 0))
        vocab, weight, bias = lean.output_weights()
        norms = [t for m in (dec.layernorm_embedding, dec.layer_norm) if m is not None
                 for t in (m.weight, m.bias)]
        parts = (fused._structs, table, vocab, weight, bias, dec.embed_tokens.weight, *norms)
        key = tuple((id(t), getattr(t, "_version", None)) for t in parts)
        if self._decoder is not None and self._decoder[0] == key:
            return self._decoder[1]
        keep = []

        def pointer(t: Optional[Tensor]):
            if t is None:
                return None
            t = t.detach().contiguous()
            keep.append(t)
            return t.data_ptr()

        def norm(module) -> _Norm:
            if module is None:
                return _Norm(None, None, 0.0)
            return _Norm(pointer(module.weight), pointer(module.bias), module.eps)

        layers = (_Layer * len(fused._structs))(*fused._structs)
        keep.append(layers)
        s = _Decoder()
        s.embed = pointer(dec.embed_tokens.weight)
        s.embed_scale = dec.embed_scale
        s.positions = pointer(table)
        s.position_offset = offset
        s.position_rows = 0 if table is None else table.size(0)
        s.embed_norm = norm(dec.layernorm_embedding)
        s.final_norm = norm(dec.layer_norm)
        s.output = linear_struct(lean.linear, weight, bias, keep)
        s.vocab = pointer(vocab)
        s.layers = len(fused._structs)
        s.layer = ctypes.addressof(layers)
        self._decoder = (key, s, keep, parts)
        return s

    def _state_struct(self, state: DecoderState, bsz: int):
        args = self.fused._state_args(state, bsz)  # the same object while the state's are
        if self._states is None or self._states[0] is not args:
            caches, crosses, _ = args
            self._states = (args, (_LayerState * len(caches))(
                *[_LayerState(*cache, *cross) for cache, cross in zip(caches, crosses)]))
        return args[2], self._states[1]

    # -- the steps ----------------------------------------------------------------------------
    def run(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor, k: int,
            rules: StepRules) -> Tensor:
        """feed [B, width]: each row's unread inputs (unread[b] real ones, right-padded);
        first [B]: the decoding step of each row's first draft. Returns the drafts [B, k'] (k'
        <= k: drafting stops once every row has proposed EOS) and advances state.lengths."""
        bsz, width = feed.shape
        lengths = state.lengths.clone()
        state.ensure_capacity(int(lengths.max()) + width + k)
        decoder = self._decoder_struct(int(lengths.max()) + width + k)
        pad, layer_states = self._state_struct(state, bsz)
        rule = _Rules(rules.eos, rules.pad, rules.unk, rules.unk_penalty, rules.min_len,
                      rules.max_len)
        size = loader.function("gd_work_floats")(ctypes.byref(decoder), bsz, width)
        if self._work.numel() < size:
            self._work = torch.empty(size)
        drafts = torch.empty(bsz, k, dtype=torch.long)
        feed, unread, first = (t.contiguous() for t in (feed, unread, first))
        steps = loader.function("gd_greedy_f32")(
            ctypes.byref(decoder), layer_states, ctypes.byref(rule), bsz, feed.data_ptr(),
            width, unread.data_ptr(), lengths.data_ptr(), first.data_ptr(), k,
            None if pad is None else pad.data_ptr(), drafts.data_ptr(), self._work.data_ptr(),
            torch.get_num_threads())
        state.lengths = lengths
        return drafts[:, :steps]

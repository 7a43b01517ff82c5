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
stop rule, no forced prefix, no n-gram blocking; for drafts whose decoder the whole-decoder call
takes (decoding/fused_decoder.py, whose structs this shares: the fused layers' plain kind, token
embeddings, an output projection) and whose log-probs are fairseq's own log-softmax.
The draft only proposes: the target verifies every token, so this path, like the shortlist,
can change how many drafts are kept (float32 rounding of a near-tie) but never the output.
"""
import ctypes
from typing import Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.kernels import loader

_Rules = loader.struct("gd_rules")


def stock_normalization(model: nn.Module) -> bool:
    """Whether the model's log-probs are fairseq's own log_softmax of the logits (whose argmax
    is the logits' argmax)."""
    return all(getattr(type(owner), name).__module__.startswith("fairseq.")
               for owner, name in ((model, "get_normalized_probs"),
                                   (model, "get_normalized_probs_scriptable"),
                                   (model.decoder, "get_normalized_probs"),
                                   (model.decoder, "get_normalized_probs_scriptable"))
               if hasattr(type(owner), name))


def steps_supported(model: nn.Module, lean: LeanDecoder) -> bool:
    return lean.fused_decoder is not None and stock_normalization(model)


class GreedyDraftSteps:
    def __init__(self, lean: LeanDecoder):
        self.lean = lean
        self.whole = lean.fused_decoder  # its gd_decoder and gd_layer_state structs

    @classmethod
    def build(cls, model: nn.Module, lean: LeanDecoder) -> Optional["GreedyDraftSteps"]:
        if not steps_supported(model, lean) or loader.function("gd_greedy_f32") is None:
            return None
        return cls(lean)

    def usable(self, state: DecoderState, rows: int) -> bool:
        """Whether a propose() of `rows` rows (the first step's inputs included) runs here."""
        return self.whole.usable(state, rows)

    # -- the steps ----------------------------------------------------------------------------
    def run(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor, k: int,
            rules: StepRules) -> Tensor:
        """feed [B, width]: each row's unread inputs (unread[b] real ones, right-padded);
        first [B]: the decoding step of each row's first draft. Returns the drafts [B, k'] (k'
        <= k: drafting stops once every row has proposed EOS) and advances state.lengths."""
        bsz, width = feed.shape
        lengths = state.lengths.clone()
        state.ensure_capacity(int(lengths.max()) + width + k)
        decoder = self.whole.decoder_struct(int(lengths.max()) + width + k)
        pad, layer_states = self.whole.state_struct(state, bsz)
        rule = _Rules(rules.eos, rules.pad, rules.unk, rules.unk_penalty, rules.min_len,
                      rules.max_len)
        work = self.whole.work(decoder, bsz, width)
        drafts = torch.empty(bsz, k, dtype=torch.long)
        feed, unread, first = (t.contiguous() for t in (feed, unread, first))
        steps = loader.function("gd_greedy_f32")(
            ctypes.byref(decoder), layer_states, ctypes.byref(rule), bsz, feed.data_ptr(),
            width, unread.data_ptr(), lengths.data_ptr(), first.data_ptr(), k,
            None if pad is None else pad.data_ptr(), drafts.data_ptr(), work.data_ptr(),
            torch.get_num_threads())
        state.lengths = lengths
        return drafts[:, :steps]

"""k greedy decoder steps in one C call (csrc/greedy_draft.c): a draft's proposals, and the
default generator's greedy look-ahead.

    steps = GreedySteps.build(model, lean, whole)  # None unless the model is of that kind
    if steps is not None and steps.usable(state, rows, width):
        drafts = steps.run(state, feed, unread, first, k, rules)   # [B, k'] and state advanced

A greedy token through lean_decoder.forward and StepRules.log_probs is ~30 tensor ops and
Python calls around the fused layers (fused_layer.py); for a small draft beside a large target
that is most of the draft's time (the draft's arithmetic is a fraction of a millisecond). Here a
whole propose() is one call: embedding, positions, the layers, the final norm, the output
projection (a shortlist's rows or all) and the argmax under stock's edits, k times.

Used by speculative/proposer.py's DraftModelProposer for greedy drafting when nothing in Python
has to see a step: no stop rule, no forced prefix, no n-gram blocking; for drafts whose decoder
the whole-decoder call takes (decoding/fused_decoder.py, whose structs this shares: the fused
layers' plain kind, token embeddings, an output projection) and whose log-probs are fairseq's
own log-softmax.
The draft only proposes: the target verifies every token, so this path, like the shortlist,
can change how many drafts are kept (float32 rounding of a near-tie) but never the output.

`run_scored` is the same call with every step's scores and encoder attention kept: the default
generator's greedy look-ahead (decoding/ensemble.py), whose search then chooses each token from
those scores itself.
"""
from typing import Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.fused_decoder import FusedDecoder
from fairseq_fast.decoding.fused_layer import head_mean
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.kernels import fused


# Greedy steps per C call: several for a batch of up to CALL_ROWS rows, CALL_ROW_STEPS // rows of
# them, at most CALL_STEPS. The call runs until its last step or until every row has chosen EOS;
# where every step's scores are kept (run_logits, run_scored) a row that has chosen EOS is left out
# of the call's later steps, while a draft's rows (run) all run to the end. Several steps a call
# pay while a step is bound by reading the weights (a few rows), and each call saves the Python
# and tensor ops of its steps.
CALL_ROWS, CALL_STEPS, CALL_ROW_STEPS = 8, 16, 64


def steps_per_call(rows: int) -> int:
    """The greedy steps one C call takes for `rows` rows: the default generator's look-ahead
    (none where this is 1) and the speculative loop's plain rounds."""
    rows = max(rows, 1)
    return min(CALL_STEPS, CALL_ROW_STEPS // rows) if rows <= CALL_ROWS else 1


def stock_normalization(model: nn.Module) -> bool:
    """Whether the model's log-probs are fairseq's own log_softmax of the logits (whose argmax
    is the logits' argmax)."""
    return all(getattr(type(owner), name).__module__.startswith("fairseq.")
               for owner, name in ((model, "get_normalized_probs"),
                                   (model, "get_normalized_probs_scriptable"),
                                   (model.decoder, "get_normalized_probs"),
                                   (model.decoder, "get_normalized_probs_scriptable"))
               if hasattr(type(owner), name))


def c_rules(rules: StepRules):
    """The gd_rules struct of the C calls' own argmax: stock's edits of `rules`."""
    return fused.rules(eos=rules.eos, pad=rules.pad, unk=rules.unk, unk_penalty=rules.unk_penalty,
                       min_len=rules.min_len, max_len=rules.max_len)


class GreedySteps:
    keeps_scores = True  # run_logits and run_scored
    runs_past_eos = False  # the steps stop once every row has proposed EOS

    def __init__(self, lean: LeanDecoder, whole: FusedDecoder):
        self.lean = lean
        self.whole = whole  # its gd_decoder and gd_layer_state structs
        self._lookahead_work = torch.empty(0)  # run_lookahead's scratch, grown
        self._lookahead_scores = torch.empty(0)  # its scores, read before the next call

    @classmethod
    def build(cls, model: nn.Module, lean: LeanDecoder,
              whole: Optional[FusedDecoder]) -> Optional["GreedySteps"]:
        """Steps on the whole-decoder call `whole`, where there is one, the model's log-probs
        are fairseq's own and the kernel is built."""
        if (whole is None or not stock_normalization(model)
                or not fused.available("gd_greedy_f32")):
            return None
        return cls(lean, whole)

    def usable(self, state: DecoderState, rows: int, width: int = 1) -> bool:
        """Whether a run of `rows` rows of `width` catch-up inputs each runs here (not on a
        state whose rows read their key slots through origins: the steps write and read row b's
        own)."""
        return state.origin is None and self.whole.usable(state, rows * width)

    # -- the steps ----------------------------------------------------------------------------
    def run(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor, k: int,
            rules: StepRules) -> Tensor:
        """feed [B, width]: each row's unread inputs (unread[b] real ones, right-padded);
        first [B]: the decoding step of each row's first draft. Returns the drafts [B, k'] (k'
        <= k: drafting stops once every row has proposed EOS) and advances state.lengths."""
        return self._steps(state, feed, unread, first, k, rules)[0]

    def run_logits(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor,
                   k: int, rules: StepRules):
        """run() with every step's logits kept: (drafts [B, k'], logits [B, k', V]), where
        logits[:, j] scored drafts[:, j] (the speculative loop's plain steps, plain_steps.py)."""
        drafts, scores, _ = self._steps(state, feed, unread, first, k, rules, True)
        return drafts, self.lean._scatter(scores[:drafts.size(1)].transpose(0, 1))

    def run_scored(self, state: DecoderState, feed: Tensor, first: int, k: int,
                   rules: StepRules, need_attn: bool):
        """run() for one input per row, every step's outputs kept: (drafts [B, k'], scores
        [B, k', N] (a shortlist's N where there is one), and with need_attn and encoder K/V
        the last layer's encoder attention averaged over heads [B, k', S], else None). After a
        row's EOS its drafts are EOS and its scores and attention zeros (not computed)."""
        bsz, width = feed.shape
        if width != 1:  # the C call's per-step attention holds one input per row
            raise ValueError(f"run_scored takes one input per row, not {width}")
        unread = torch.ones(bsz, dtype=torch.long)
        firsts = torch.full((bsz,), first, dtype=torch.long)
        drafts, scores, probs = self._steps(state, feed, unread, firsts, k, rules, True,
                                            need_attn and bool(state.cross_k))
        steps = drafts.size(1)
        scores = scores[:steps].transpose(0, 1)
        if probs is None:
            return drafts, scores, None
        mean = head_mean(probs.flatten(0, 1)).view(steps, bsz, -1)  # as fused_layer.run's
        return drafts, scores, mean.transpose(0, 1)

    def run_lookahead(self, state: DecoderState, tokens: Tensor, n_tokens: Tensor,
                      source: Optional[Tensor], ngram_min: int, ngram_max: int, k: int,
                      limit: int, rules: StepRules):
        """Rounds of greedy decoding with n-gram look-ahead in one C call (csrc/greedy_draft.c's
        gd_lookahead_f32): each row's lookup draft of up to k tokens verified with its last
        token in one pass, the matching prefix and the target's next token kept, until a row
        chooses EOS or could pass `limit` tokens. tokens [B, L] (BOS at 0) holds the rows'
        histories of n_tokens [B] tokens; the chosen ones are written after them. The state
        must hold every committed token but the last; it is advanced by each row's count.
        Returns (chosen [B, s], counts [B], logits [B, s, V], tally [6]: rounds, row rounds,
        drafts offered, drafts kept, row rounds that rejected one, inputs scored); row b's
        first counts[b] entries are its tokens and the logits they were chosen from."""
        bsz = tokens.size(0)
        lengths = state.lengths.clone()
        reach = int(lengths.max()) + limit + k + 1
        state.ensure_capacity(reach)
        decoder = self.whole.decoder_struct(reach)
        pad, layer_states = self.whole.state_struct(state, bsz)
        rule = c_rules(rules)
        need = fused.lookahead_work_floats(decoder, bsz, k)
        if self._lookahead_work.numel() < need:
            self._lookahead_work = torch.empty(need)
        chosen = torch.full((bsz, limit), rules.pad, dtype=torch.long)
        size = bsz * limit * decoder.output.out_features
        if self._lookahead_scores.numel() < size:  # kept: its pages are touched once
            self._lookahead_scores = torch.empty(size)
        scores = self._lookahead_scores[:size].view(bsz, limit, -1)
        counts = torch.empty(bsz, dtype=torch.long)
        tally = torch.empty(6, dtype=torch.long)
        tokens = tokens if tokens.is_contiguous() else tokens.contiguous()
        fused.lookahead(decoder, layer_states, rule, tokens, n_tokens.contiguous(),
                        None if source is None else source.contiguous(), lengths,
                        ngram_min=ngram_min, ngram_max=ngram_max, k=k, limit=limit, pad=pad,
                        chosen=chosen, scores=scores, counts=counts, tally=tally,
                        work=self._lookahead_work)
        state.lengths = lengths
        steps = int(counts.max())
        scores = scores[:, :steps]
        if bsz > 1:  # past a row's count: zeros, not scratch
            scores.masked_fill_((torch.arange(steps) >= counts[:, None])[:, :, None], 0.0)
        return chosen[:, :steps], counts, self.lean._scatter(scores), tally

    def _steps(self, state, feed, unread, first, k, rules, keep_scores=False, keep_probs=False):
        """The C call: (drafts [B, k'], step scores [k, B, N] | None, the last layer's encoder
        attention probabilities [k', B, H, S] | None)."""
        bsz, width = feed.shape
        lengths = state.lengths.clone()
        state.ensure_capacity(int(lengths.max()) + width + k)
        decoder = self.whole.decoder_struct(int(lengths.max()) + width + k)
        pad, layer_states = self.whole.state_struct(state, bsz)
        rule = c_rules(rules)
        work = self.whole.work(decoder, bsz, width)
        drafts = torch.empty(bsz, k, dtype=torch.long)
        scores = (torch.empty(k, bsz, decoder.output.out_features) if keep_scores else None)
        probs = None
        if keep_probs:
            last = self.lean.decoder.layers[-1].encoder_attn
            probs = torch.empty(k, bsz, last.num_heads, state.cross_k[-1].size(2))
        feed, unread, first = (t.contiguous() for t in (feed, unread, first))
        steps = fused.greedy(decoder, layer_states, rule, feed, unread, lengths, first, k=k,
                             pad=pad, drafts=drafts, scores=scores, probs=probs, work=work)
        state.lengths = lengths
        return drafts[:, :steps], scores, None if probs is None else probs[:steps]

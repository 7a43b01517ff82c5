"""FastEnsembleModel: fairseq's EnsembleModel on the lean decoder and its one cache.

fairseq's SequenceGenerator talks to its models only through an EnsembleModel: forward_encoder,
reorder_encoder_out, forward_decoder (one new token per row per step) and
reorder_incremental_state. This subclass answers the same calls from a `DecoderState`
(decoder_state.py, the cache the speculative and BiLD generators use) driven by each model's
`DecoderBackend` (backends.py), through its interface only:

  * self-attention K/V preallocated and written in place (no per-step torch.cat);
  * encoder output and encoder-decoder K/V kept once per source sentence, shared by its beams
    (grouped attention), never expanded to beam copies; copied only when sentences finish;
  * the encoder's layers in C calls of whole sentences (fused_layer.FusedEncoder, float32 on
    CPU), as the speculative generator runs them;
  * reorders copy only the rows whose beam changed, and nothing when the order is unchanged;
    on CPU not even those: the state records which cache row holds each row's history;
  * prefill: a forced prefix (--prefix-size, a language model's prompt, the hub's prefix_tokens)
    goes through the decoder in one pass at step 0; the next steps read their scores from it;
  * look-ahead: for a greedy batch of the plugin's beam loop (begin_batch's `look_ahead`), one
    C call runs several greedy steps ahead, each step's scores and attention kept; the next
    steps read them while every row's token is the one fed ahead (the search's choice is still
    made from these scores, so a row that chose otherwise, a near-tie rounded the other way,
    only ends the look-ahead: the cache rolls back to that step). forward_decoder_ahead hands
    the search all the steps ahead at once.

The search itself (beam search, sampling, diverse beam, constraints, ...) stays fairseq's.
"""
import math
import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import List, Optional

import torch
from fairseq.sequence_generator import EnsembleModel, EnsembleModelWithAlignment
from torch import Tensor

from fairseq_fast.decoding.backends import DecoderBackend, GreedyStepper, decoder_backend
from fairseq_fast.decoding.decoder_state import DecoderState, initial_capacity
from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
from fairseq_fast.decoding.greedy_steps import steps_per_call
from fairseq_fast.decoding.model_gate import (ensemble_refusal, layerdrop_draws, log_once,
                                              plain_log_softmax)
from fairseq_fast.decoding.step_rules import StepRules

STATE = "fairseq_fast"  # key of our DecoderState in fairseq's per-model incremental-state dict


def _is_identity(order: Tensor, size: int) -> bool:
    return order.numel() == size and torch.equal(order, torch.arange(size, device=order.device))


@dataclass(frozen=True)
class LookAhead:
    """A greedy batch's steps ahead: the model's greedy steps (FastEnsembleModel.greedy_steps)
    and the batch's step rules."""
    steps: GreedyStepper
    rules: StepRules


@dataclass(frozen=True)
class ScoresAhead:
    """Scores computed ahead of the search: by prefill (the forced prefix in one pass) or by
    look-ahead (greedy steps in one call)."""
    first: int  # the step of the first input
    inputs: Tensor  # [N, m] the input fed at each step
    lprobs: Tensor  # [N, m, V]
    attn: Optional[Tensor]  # [N, m, S] or None
    every_row: bool  # look-ahead: every row must follow the inputs; prefill: any row

    def reordered(self, order: Tensor) -> "ScoresAhead":
        return replace(self, inputs=self.inputs.index_select(0, order),
                       lprobs=self.lprobs.index_select(0, order),
                       attn=None if self.attn is None else self.attn.index_select(0, order))


@dataclass
class BatchCalls:
    """Where fairseq's calls for the current batch have got to. SequenceGenerator makes them in
    one order: forward_encoder starts a batch; the first reorder_encoder_out expands its
    sentences to their rows (beams), later ones follow the rows; the first forward_decoder
    creates the decoder states, and each one may compute scores ahead of the search (prefill,
    look-ahead) for the next steps to read; reorder_incremental_state between steps."""
    group: Optional[int] = None  # rows per source sentence, once the first reorder expanded
    decoding: bool = False  # the decoder states exist (they hold the encoder K/V)
    ahead: Optional[ScoresAhead] = None


class FastEnsembleModel(EnsembleModel):
    def __init__(self, models, prefill: bool = True, kernels: bool = True):
        super().__init__(models)
        # models model_gate.py passes (fast_ensemble() asks it); kernels: the plugin's
        # kernels (backends.py, --no-fast-linear)
        self.backends: List[DecoderBackend] = [decoder_backend(m, kernels=kernels)
                                               for m in models]
        # each encoder in C calls where it runs (float32 CPU, kernels on), else fairseq's
        self.encoders = [FusedEncoder.build(getattr(m, "encoder", None), backend.lean.linear)
                         for m, backend in zip(models, self.backends)]
        self.prefill = prefill
        self._prefix: Optional[Tensor] = None  # the batch's forced prefix (begin_batch)
        self._look_ahead: Optional[LookAhead] = None  # the batch's greedy steps (begin_batch)
        self._calls = BatchCalls()
        # each model's state of the last batch: its K/V buffers serve the next batch where
        # they fit (fresh memory costs page faults and zeroing at every batch)
        self._last: List[Optional[DecoderState]] = [None] * len(models)
        # models whose log-probs are log_softmax(logits) as fairseq computes it: taken in place
        self._in_place = [plain_log_softmax(m) for m in models]
        # the last single step's log-probs [rows, 1, V] on CPU: the next step's logits are
        # written there (with a vocabulary of 128k or 256k at beam 5, a fresh [rows, V] costs
        # page faults on tens of MiB each step); callers use a step's log-probs before the next
        self._step_scores: Optional[Tensor] = None
        # wall seconds by phase, over the ensemble's lifetime (time.perf_counter around each;
        # on a GPU, work still queued when a call returns counts where it is waited for):
        # "encoder" (forward_encoder), "cross" (the decoder states' creation at a batch's first
        # decoder call: the encoder K/V) and "decoder" (forward_decoder, "cross" left out)
        self.seconds: Counter = Counter()

    def __prepare_scriptable__(self):
        """What torch.jit.script compiles in place of this ensemble: fairseq's own, on the same
        models (the lean decoder runs Python and C that TorchScript cannot compile)."""
        with_alignment = isinstance(self, EnsembleModelWithAlignment)
        stock = (EnsembleModelWithAlignment if with_alignment else EnsembleModel)(self.models)
        return stock.train(self.training)

    def begin_batch(self, prefix: Optional[Tensor] = None,
                    look_ahead: Optional[LookAhead] = None) -> None:
        """What the generator knows of its next batch that fairseq's calls do not carry: the
        forced prefix [B, m] (prefill) and the greedy look-ahead. begin_batch() clears both."""
        self._prefix, self._look_ahead = prefix, look_ahead

    def greedy_steps(self) -> Optional[GreedyStepper]:
        """The single model's greedy steps that keep every step's scores (its backend's), or
        None where there are none (ensembles, backends without them)."""
        if self.models_size != 1:
            return None
        steps = self.backends[0].greedy_steps
        return steps if steps is not None and steps.keeps_scores else None

    # -- encoder ------------------------------------------------------------------------------
    def forward_encoder(self, net_input):
        self._calls = BatchCalls()
        if not self.has_encoder():
            return None  # as fairseq's
        start = time.perf_counter()
        out = [encode(m, fused, net_input) for m, fused in zip(self.models, self.encoders)]
        self.seconds["encoder"] += time.perf_counter() - start
        return out

    def reorder_encoder_out(self, encoder_outs, new_order):
        """Keep one encoder output per source sentence, whatever the number of beams.

        The generator's first call expands sentences to beams (new_order = each sentence index
        repeated beam times); later calls map rows to rows. Rows of one sentence always stay
        together, so only the sentence order matters here. Once the decoder states exist,
        nothing: they hold what the decoder reads of the encoder output (its K/V and padding
        per sentence, which follow the rows in DecoderState.select_rows), and fairseq's
        generator only hands encoder_outs back to forward_decoder, which reads them only to
        build those states."""
        if not self.has_encoder():
            return []
        calls = self._calls
        if calls.decoding:
            return encoder_outs
        n_in = encoder_outs[0]["encoder_out"][0].size(1)
        if calls.group is None:
            calls.group = new_order.numel() // max(n_in, 1)
            sentences = new_order.view(-1, calls.group)[:, 0]
        else:
            sentences = new_order.view(-1, calls.group)[:, 0] // calls.group
        if _is_identity(sentences, n_in):
            return encoder_outs
        return [model.encoder.reorder_encoder_out(enc, sentences)
                for model, enc in zip(self.models, encoder_outs)]

    # -- decoder ------------------------------------------------------------------------------
    def reorder_incremental_state(self, incremental_states, new_order):
        for states in incremental_states:
            if STATE in states:
                states[STATE].select_rows(new_order)
        ahead = self._calls.ahead
        if ahead is not None and not _is_identity(new_order, ahead.inputs.size(0)):
            self._calls.ahead = ahead.reordered(new_order)

    def forward_decoder(self, tokens, encoder_outs, incremental_states, temperature: float = 1.0):
        lprobs, attn, _ = self.forward_decoder_ahead(tokens, encoder_outs, incremental_states,
                                                     temperature)
        # contiguous, as stock's: searches view() it, and the generator edits it
        return lprobs[:, 0].contiguous(), None if attn is None else attn[:, 0].contiguous()

    def forward_decoder_ahead(self, tokens, encoder_outs, incremental_states,
                              temperature: float = 1.0):
        """forward_decoder with the greedy steps computed ahead of it: (log-probs [N, n, V],
        attention [N, n, S] | None, fed [N, n] | None). [:, 0] is this step's; where a
        look-ahead has computed more (n > 1), [:, j] is step + j's for a row fed fed[:, j] there
        (fed[:, 0] is each row's last token, then the C steps' choices). The search must not
        edit the scores of a step it has not taken without calling forget_ahead."""
        start, cross = time.perf_counter(), self.seconds["cross"]
        try:
            return self._forward_decoder(tokens, encoder_outs, incremental_states, temperature)
        finally:
            self.seconds["decoder"] += (time.perf_counter() - start
                                        - (self.seconds["cross"] - cross))

    def forget_ahead(self, step: int) -> None:
        """The scores computed ahead for `step` and later are forgotten (the search edited them
        in place): a call from there decodes afresh, the cache rolled back."""
        ahead = self._calls.ahead
        if ahead is not None and step - ahead.first < ahead.inputs.size(1):
            self._calls.ahead = replace(ahead,
                                        inputs=ahead.inputs[:, : max(step - ahead.first, 0)])

    def _forward_decoder(self, tokens, encoder_outs, incremental_states, temperature: float):
        step = tokens.size(1) - 1
        for model in self.models:  # stock runs each decoder once a step, prefill or not
            layerdrop_draws(model.decoder.layers)
        calls = self._calls
        if calls.ahead is not None:
            ahead = calls.ahead
            inputs, lprobs, attn = ahead.inputs, ahead.lprobs, ahead.attn
            j = step - ahead.first
            # Prefill: rows still on the prefix read their scores from it. A row whose token
            # differs is a dead beam: fairseq forces the prefix by giving every other token -inf
            # (and beam search fills spare beams with such candidates), so that row's score is
            # -inf whatever its log-probs, and it can never be finalised. If no row follows
            # the prefix, the search has left it. Look-ahead: every row must have chosen the
            # token fed ahead. Otherwise forget the scores ahead and decode from this step.
            if j < inputs.size(1):
                same = tokens[:, step] == inputs[:, j]
                if bool(same.all() if ahead.every_row else same.any()):
                    if not ahead.every_row:  # a prefix's later scores hold for some rows only
                        return (lprobs[:, j: j + 1], None if attn is None else attn[:, j: j + 1],
                                None)
                    width = inputs.size(1)
                    return (lprobs[:, j: width], None if attn is None else attn[:, j: width],
                            inputs[:, j:])
            for backend, states in zip(self.backends, incremental_states):
                backend.rollback(states[STATE], torch.full_like(states[STATE].lengths, step))
            calls.ahead = None
        if step == 0:
            feed = self._prefill_inputs(tokens)
        else:
            feed = tokens[:, -1:]
        ahead = None
        # not inside a forced prefix: its rows take the prefix's tokens, not their argmax
        in_prefix = self._prefix is not None and step < self._prefix.size(1)
        if (self._look_ahead is not None and feed.size(1) == 1 and temperature == 1.0
                and not in_prefix):
            ahead = self._steps_ahead(feed, step, encoder_outs, incremental_states)
        if ahead is not None:
            calls.ahead = ahead
            return ahead.lprobs, ahead.attn, ahead.inputs
        lprobs, attn = self._decode(feed, encoder_outs, incremental_states, temperature)
        if feed.size(1) > 1:
            calls.ahead = ScoresAhead(0, feed, lprobs, attn, every_row=False)
        return lprobs[:, :1], None if attn is None else attn[:, :1], None

    def _steps_ahead(self, feed: Tensor, step: int, encoder_outs,
                     incremental_states) -> Optional[ScoresAhead]:
        """Greedy steps from `step` on in one C call: the inputs fed (feed, then each step's
        choice) and their scores, the state advanced by their number; None where the call does
        not run (another model kind, dtype or device, ensembles)."""
        steps, rules = self._look_ahead.steps, self._look_ahead.rules
        rows = feed.size(0)
        k = min(steps_per_call(rows), rules.max_len + 1 - step)
        if not self._looks_ahead(rows) or k < 2:
            return None
        state = self._state(0, rows, encoder_outs, incremental_states)
        if not steps.usable(state, rows):
            return None
        model, backend = self.models[0], self.backends[0]
        drafts, scores, attn = steps.run_scored(state, feed, step, k, rules,
                                                backend.has_cross_attention)
        logits = backend.scores_to_logits(scores)
        lprobs = model.get_normalized_probs((logits, None), log_probs=True, sample=None)
        return ScoresAhead(step, torch.cat([feed, drafts[:, :-1]], dim=1), lprobs, attn,
                           every_row=True)

    def _prefill_inputs(self, tokens: Tensor) -> Tensor:
        """[BOS, p_1 .. p_m] per row: the forced prefix's columns that no row leaves (no padding,
        no EOS), or just BOS when prefill is off or there is no prefix."""
        prefix = self._prefix
        if not self.prefill or prefix is None or prefix.numel() == 0:
            return tokens[:, :1]
        group = tokens.size(0) // prefix.size(0)
        prefix = prefix.repeat_interleave(group, dim=0) if group > 1 else prefix
        decoder = self.single_model.decoder
        stops = (prefix == decoder.padding_idx) | (prefix == decoder.dictionary.eos())
        bad = stops.any(dim=0).nonzero()
        m = int(bad[0]) if bad.numel() else prefix.size(1)
        return torch.cat([tokens[:, :1], prefix[:, :m].to(tokens)], dim=1)

    def _decode(self, feed: Tensor, encoder_outs, incremental_states, temperature: float):
        """Run every model on `feed` [N, n]: log-probs [N, n, V] and attention [N, n, S]|None,
        combined as fairseq's EnsembleModel combines them."""
        log_probs: List[Tensor] = []
        avg_attn: Optional[Tensor] = None
        single = self.models_size == 1
        for i, (model, backend) in enumerate(zip(self.models, self.backends)):
            state = self._state(i, feed.size(0), encoder_outs, incremental_states)
            out = self._step_out(feed) if single else None
            if backend.has_cross_attention and state.cross_k:
                logits, attn = backend.forward(state, feed, need_attn=True, out=out)
            else:
                logits, attn = backend.forward(state, feed, out=out), None
            if temperature != 1.0:  # x / 1 is x: skip a pass over [N, V]
                logits = logits.div_(temperature)
            # on CPU (where fresh memory costs page faults; a GPU backend may return a buffer
            # of its own, such as a CUDA graph's output)
            cpu = logits.device.type == "cpu"
            if (cpu and self._in_place[i] and logits.dtype == torch.float32
                    and not logits.requires_grad):
                probs = torch.log_softmax(logits, dim=-1, out=logits)  # the same op, in place
            else:
                probs = model.get_normalized_probs((logits, None), log_probs=True, sample=None)
            if single:
                written = out is not None and probs.data_ptr() == out.data_ptr()
                if cpu and feed.size(1) == 1 and probs.is_contiguous() and not written:
                    self._step_scores = probs  # a new buffer (a written one keeps its size)
                return probs, attn
            log_probs.append(probs)
            if attn is not None:
                avg_attn = attn if avg_attn is None else avg_attn.add_(attn)
        avg = torch.logsumexp(torch.stack(log_probs, dim=0), dim=0) - math.log(self.models_size)
        if avg_attn is not None:
            avg_attn.div_(self.models_size)
        return avg, avg_attn

    def _step_out(self, feed: Tensor) -> Optional[Tensor]:
        """Where a single step's logits [N, 1, V] may be written: the last step's log-probs,
        when they have room (rows only leave a batch) and live on feed's device."""
        last = self._step_scores
        if feed.size(1) != 1 or last is None or last.device != feed.device:
            return None
        rows, vocab = feed.size(0), last.size(-1)
        if rows * vocab > last.numel():
            return None
        return last.view(-1)[: rows * vocab].view(rows, 1, vocab)

    def _looks_ahead(self, rows: int) -> bool:
        """Whether a batch of `rows` rows may look ahead (the C steps decide the rest)."""
        return (self._look_ahead is not None and self.models_size == 1
                and steps_per_call(rows) >= 2)

    def _state(self, i: int, rows: int, encoder_outs, incremental_states) -> DecoderState:
        """Model i's decoder state, made at the batch's first decoder call."""
        state = incremental_states[i].get(STATE)
        if state is None:
            model, backend = self.models[i], self.backends[i]
            param = next(model.parameters())
            encoder_out = encoder_outs[i] if self.has_encoder() else None
            last = self._last[i]
            # on CPU (the attention kernels' path) beam reorders and finished rows move no K/V:
            # the state records where each row's history lies (every row here is at one length,
            # as that needs); not where a greedy batch looks ahead: its C steps read rows in
            # place
            source = (encoder_out or {}).get("encoder_out")  # [S, B, C] in a list
            src_len = source[0].size(0) if source else 0
            start = time.perf_counter()
            state = backend.init_state(encoder_out, rows, initial_capacity(src_len),
                                       origins=(param.device.type == "cpu"
                                                and not self._looks_ahead(rows)),
                                       reuse=None if last is None else last.buffers)
            self.seconds["cross"] += time.perf_counter() - start
            incremental_states[i][STATE] = state
            self._last[i] = state
            self._calls.decoding = True
        return state


class FastEnsembleModelWithAlignment(FastEnsembleModel, EnsembleModelWithAlignment):
    """The same, for SequenceGeneratorWithAlignment (--print-alignment): forward_align is
    fairseq's (a full forward pass per hypothesis after search)."""


def fast_ensemble(models, prefill: bool, with_alignment: bool = False, kernels: bool = True):
    """Our ensemble for `models`, or None (logged once) when model_gate.py refuses a model: the
    generator then keeps fairseq's own, so output is unchanged."""
    reason = ensemble_refusal(list(models))
    if reason is not None:
        log_once(reason, f"fairseq_fast: keeping fairseq's decoding path ({reason})")
        return None
    cls = FastEnsembleModelWithAlignment if with_alignment else FastEnsembleModel
    return cls(list(models), prefill=prefill, kernels=kernels)

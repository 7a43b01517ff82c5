"""The draft model as a proposer: K cheap decoder steps that guess the target's next tokens.

A proposer only proposes: `propose` writes K guesses per row into the token buffer's scratch area
(after each row's committed tokens) and returns them, with the draft's distributions q when the
acceptance rule needs them. `rollback` tells it how many tokens each row kept.

Drafting ends for a row when it proposes EOS, or when a stop rule (stop_rules.StopRule) says so:
the token just proposed is still offered (speculative decoding's confidence stop) or withdrawn
(BiLD's fallback, where the target writes that position itself).

The draft's cache may lag one token behind the committed text (when every draft was kept, the
draft never read its own last guess); the first step of the next round feeds each row whatever it
has not read yet (1 or 2 tokens, more after rounds of plain steps), as gpt-fast does.

A row gets draft state only when a round first drafts for it (the loop calls `join` then),
whether it came with a batch (start, on the CPU) or joined the rows in flight (admit): the
draft's encoder then runs for its batch, and the row reads its committed text in its first
step. Until then the row has no draft state and is offered nothing, so where a schedule finds
that drafting does not pay (draft_length.py: plain steps) the draft's encoder does not run for
the rows it never drafts for. `pending` counts those rows.

Greedy drafting without a stop rule, forced prefix or n-gram blocking runs its k steps in one C
call where the draft's backend allows (its greedy steps: decoding/greedy_steps.py on the CPU, one
CUDA graph replay on a GPU, decoding/graph_steps.py): the same proposals, without ~30 tensor ops
a step.
"""
from typing import Dict, List, Optional, Protocol, Tuple

import torch
from torch import Tensor

from fairseq_fast.decoding.backends import decoder_backend
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.fused_layer import FusedEncoder, encode
from fairseq_fast.decoding.lean_decoder import CrossSource
from fairseq_fast.decoding.step_rules import StepRules
from fairseq_fast.speculative.stop_rules import StopRule


class Proposer(Protocol):
    """Proposes drafts for the speculative loop (generators/speculative.py)."""

    last_steps: int  # decoder passes of the last propose()
    last_rows: int  # rows that drafted in the last propose()
    pending: int  # rows in flight without draft state yet (join() gives it to them)

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        """A new batch of `batch` rows; state for `capacity` positions at first (a decoder
        state grows when a row needs more). encoder_out: the target's encoder output, given
        where the draft shares the target's encoder (shared_encoder.py)."""

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None):
        """In-flight batching: what the rows of a batch of sources need to join (admit);
        encoder_out as for start()."""

    def admit(self, prepared, lo: int, hi: int, capacity: int, fresh: bool = False) -> None:
        """Sentences lo .. hi - 1 of a prepared batch join the rows in flight, after them
        (fresh: there are none yet, whatever an earlier batch left)."""

    # whether place() is there: newcomers may take finished rows' places, rows in flight
    # staying where they are (otherwise finished rows leave first, select_rows, and
    # newcomers join after the rest, admit)
    in_place: bool

    def place(self, prepared, lo: int, hi: int, at: Tensor) -> None:
        """As admit, but sentence lo + i takes the place of finished row at[i]."""

    def join(self) -> None:
        """The rows without draft state (pending) get it."""

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """Drafts [B, k'], their distributions q [B, k', V] or None, drafts per row [B]; rows
        without draft state are offered nothing."""

    def rollback(self, n_tokens: Tensor) -> None:
        """Each row kept n_tokens[b] tokens (BOS included)."""

    def select_rows(self, rows: Tensor) -> None:
        """Only these rows go on (the others finished)."""


class DraftModelProposer:
    in_place = False  # finished rows leave its state before others join (select_rows, admit)

    def __init__(self, model, rules: StepRules, sampler=None, vocab=None, kernels: bool = True,
                 shared_encoder: bool = False):
        """model: a fairseq model whose decoder LeanDecoder supports; sampler: an acceptance rule
        with `distribution(lprobs)` (sampling) or None (greedy: the draft proposes its argmax);
        vocab: the only tokens the draft scores (draft_vocab.py), None for all; kernels: the
        plugin's kernels (backends.py, --no-fast-linear); shared_encoder: the draft's encoder is
        the target's, whose output start() receives (its own encoder never runs)."""
        self.model = model
        self.backend = decoder_backend(model, vocab, kernels)
        self.shared_encoder = shared_encoder
        self.encoder = (FusedEncoder.build(getattr(model, "encoder", None),
                                           self.backend.lean.linear)
                        if kernels and not shared_encoder else None)
        self.rules = rules
        self.sampler = sampler
        self.state: Optional[DecoderState] = None
        # whole greedy propose() calls (in C on the CPU, from a CUDA graph on a GPU) where
        # nothing in Python needs to see a step
        self.steps = self.backend.greedy_steps if sampler is None else None
        self.calls = 0  # decoder forward passes
        self.last_steps = 0  # decoder passes of the last propose()
        self.last_rows = 0
        # per row in flight: None once it has draft state (its row of self.state, in the
        # same order), else (its batch's _Sources, its sentence there)
        self.waiting: List[Optional[Tuple["_Sources", int]]] = []
        self.capacity = 0  # slots a joining row's state starts with
        self._reuse = None  # buffers a new state takes, where the last one was dropped
        self._prepared = 0  # batches prepared: they join in this order

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        if net_input["src_tokens"].device.type == "cpu":  # its rows join as rounds draft
            self.admit(self.prepare(net_input, encoder_out), 0, batch, capacity, fresh=True)
            return
        # on a GPU, at once: the draft's graphs are recorded for a whole batch's state
        if not self.shared_encoder:
            encoder_out = encode(self.model, self.encoder, net_input)
        self.state = self.backend.init_state(encoder_out, batch, capacity,
                                             reuse=self._buffers())
        self._reuse = None
        self.waiting = [None] * batch

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None) -> "_Sources":
        self._prepared += 1
        return _Sources(net_input, encoder_out if self.shared_encoder else None,
                        self._prepared)

    def admit(self, prepared: "_Sources", lo: int, hi: int, capacity: int,
              fresh: bool = False) -> None:
        if fresh:
            self._drop_state()
            self.waiting = []
        self.waiting.extend((prepared, i) for i in range(lo, hi))
        self.capacity = capacity

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """tokens [B, L] (committed text, BOS at 0; scratch after n_tokens[b]); n_tokens [B].
        Writes drafts to tokens[b, n_tokens[b] + j]. Drafting ends when every row has proposed
        EOS or been stopped by `stop`. Rows without draft state (join() not called since they
        came) draft nothing (drafted 0).
        Returns drafts [B, k'], q [B, k', V] | None, drafted [B] (drafts offered per row;
        k' = max(drafted) <= k)."""
        bsz = tokens.size(0)
        if not self.pending:
            self.last_rows = bsz
            return self._propose(tokens, n_tokens, k, prefix, stop)
        # only the rows with draft state draft; the others are offered nothing
        rows = self._rows_with_state(tokens.device)
        self.last_rows = rows.numel()
        drafted = torch.zeros(bsz, dtype=torch.long, device=tokens.device)
        if rows.numel() == 0:
            self.last_steps = 0
            return tokens.new_empty(bsz, 0), None, drafted
        part = tokens.index_select(0, rows)
        drafts, q, theirs = self._propose(part, n_tokens.index_select(0, rows), k,
                                          None if prefix is None
                                          else prefix.index_select(0, rows), stop)
        tokens.index_copy_(0, rows, part)  # their drafts, in the scratch area
        drafted[rows] = theirs
        out = tokens.new_full((bsz, drafts.size(1)), self.rules.pad)
        out[rows] = drafts
        if q is not None:
            q_all = q.new_zeros((bsz,) + q.shape[1:])
            q_all[rows] = q
            q = q_all
        return out, q, drafted

    def _propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                 stop: Optional[StopRule]) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """propose() for rows that all have draft state (the state's rows, in order)."""
        state = self.state
        bsz = tokens.size(0)
        rows = torch.arange(bsz, device=tokens.device)
        # catch up: feed tokens[cached .. n_tokens - 1] (1 or 2 per row, more after plain
        # steps or for a row that just joined; right-padded)
        unread = n_tokens - state.lengths  # [B], >= 1
        width = int(unread.max())
        index = (state.lengths[:, None] + torch.arange(width, device=tokens.device)[None, :])
        feed = tokens.gather(1, index.clamp(max=tokens.size(1) - 1))
        first = n_tokens - 1
        # runs the whole propose() in one call where it takes it, and where the catch-up is
        # not mostly padding (the call computes every row `width` inputs wide; the steps below
        # read each row's own unread inputs only)
        whole = self.steps
        if (whole is not None and stop is None and prefix is None
                and self.rules.no_repeat_ngram_size == 0 and whole.usable(state, bsz, width)
                and (width <= 2 or bsz * width <= 2 * int(unread.sum()))):
            drafts = whole.run(state, feed, unread, first, k, self.rules)
            steps = drafts.size(1)
            self.calls += steps
            self.last_steps = steps
            tokens.scatter_(1, n_tokens[:, None] + torch.arange(steps, device=tokens.device),
                            drafts)
            drafted = self._cut_at_eos(drafts, single=whole.runs_past_eos)
            return drafts[:, :int(drafted.max())], None, drafted
        drafts, qs = [], []
        last = unread - 1  # which fed position predicts the next token
        drafted = torch.full((bsz,), k, dtype=torch.long, device=tokens.device)
        running = torch.ones(bsz, dtype=torch.bool, device=tokens.device)
        ended = None  # without a stop rule: rows that proposed EOS so far
        withdraw = 1 if stop is not None and stop.discards_last else 0
        for j in range(k):
            logits = self.backend.forward(state, feed, counts=unread if width > 1 else None)
            self.calls += 1
            if width > 1:
                logits = logits[rows, last][:, None]
                width, last = 1, torch.zeros_like(last)
            else:
                logits = logits[:, -1:]
            lprobs = self.rules.log_probs(self.model, logits, (first + j)[:, None], tokens,
                                          prefix)
            if self.sampler is None:
                draft = lprobs[:, 0].argmax(-1)
            else:
                q = self.sampler.distribution(lprobs[:, 0])
                draft = torch.multinomial(q, 1).squeeze(1)
                qs.append(q)
            if stop is not None:  # the draft's probability of its token
                prob = (lprobs[:, 0].gather(1, draft[:, None]).squeeze(1).exp()
                        if self.sampler is None else q.gather(1, draft[:, None]).squeeze(1))
            tokens[rows, n_tokens + j] = draft
            drafts.append(draft)
            feed = draft[:, None]
            if j + 1 == k:
                break
            ends = draft == self.rules.eos
            if stop is None:  # the common case in few ops a step; `drafted` after the loop
                ended = ends if ended is None else ended | ends
                if bool(ended.all()):
                    break
                continue
            halted = stop.stop(prob) & running
            drafted = torch.where(halted, drafted.new_tensor(j + 1 - withdraw), drafted)
            ends = ends & ~halted
            running = running & ~halted
            drafted = torch.where(ends & running, drafted.new_tensor(j + 1), drafted)
            running = running & ~ends
            if not bool(running.any()):
                break
        if stop is None:
            drafted = self._cut_at_eos(torch.stack(drafts, dim=1))
        elif stop.discards_last:  # the last step's token may be withdrawn too
            halted = stop.stop(prob) & running
            drafted = torch.where(halted, drafted - 1, drafted)
        self.last_steps = len(drafts)
        width = int(drafted.max())
        if width == 0:  # every row withdrew its first token
            q = torch.stack(qs, dim=1)[:, :0] if qs else None
            return tokens.new_empty(bsz, 0), q, drafted
        q = torch.stack(qs[:width], dim=1) if qs else None
        return torch.stack(drafts[:width], dim=1), q, drafted

    def _cut_at_eos(self, drafts: Tensor, single: bool = False) -> Tensor:
        """Drafts per row [B] of drafts [B, k']: a row's end at its first EOS (or at k'). A
        single row's drafting stops at its EOS (nothing to cut) unless `single` (a graph
        drafts past it)."""
        bsz, steps = drafts.shape
        drafted = torch.full((bsz,), steps, dtype=torch.long, device=drafts.device)
        if (bsz > 1 or single) and steps > 1:
            is_eos = drafts[:, :-1] == self.rules.eos
            drafted = torch.where(is_eos.any(1), is_eos.long().argmax(1) + 1, drafted)
        return drafted

    def rollback(self, n_tokens: Tensor) -> None:
        """Rows now hold n_tokens[b] committed tokens; keep only cache entries that match them."""
        if self.pending:
            n_tokens = n_tokens.index_select(0, self._rows_with_state(n_tokens.device))
        if self.state is not None and n_tokens.numel():
            self.backend.rollback(self.state, n_tokens - 1)

    def select_rows(self, rows: Tensor) -> None:
        if not self.pending:
            self.state.select_rows(rows)
            self.waiting = [None] * rows.numel()
            return
        picked = rows.tolist()
        place = self._state_rows()
        theirs = [place[row] for row in picked if row in place]
        if not theirs:
            self._drop_state()
        elif self.state is not None:
            self.state.select_rows(torch.tensor(theirs, dtype=torch.long, device=rows.device))
        self.waiting = [self.waiting[row] for row in picked]

    # -- rows joining the draft ------------------------------------------------------------------
    @property
    def pending(self) -> int:
        return sum(entry is not None for entry in self.waiting)

    def _with_state(self) -> List[int]:
        """The rows in flight that have draft state, in the order of the state's rows."""
        return [row for row, entry in enumerate(self.waiting) if entry is None]

    def _state_rows(self) -> Dict[int, int]:
        """The state's row of each row in flight that has one."""
        rows = self._with_state()
        return dict(zip(rows, range(len(rows))))

    def _rows_with_state(self, device) -> Tensor:
        return torch.tensor(self._with_state(), dtype=torch.long, device=device)

    def _buffers(self):
        return self.state.buffers if self.state is not None else self._reuse

    def _drop_state(self) -> None:
        """No row has draft state: the state goes, its buffers are kept for the next one."""
        self._reuse = self._buffers()
        self.state = None

    def join(self) -> None:
        """Every row without draft state gets it: its batch's sources are encoded (once per
        batch, when its first row joins), its encoder K/V join the state as new rows, and the
        state's rows are put in the rows' order. Its committed text is read at its next
        draft step (the catch-up)."""
        joining = sorted(((entry[0].serial, entry[1], row)
                          for row, entry in enumerate(self.waiting) if entry is not None))
        order = self._state_rows()  # row -> its row in the grown state
        kept = len(order)
        state = self.state
        i = 0
        while i < len(joining):  # runs of consecutive sentences of one batch, in order
            j = i + 1
            while (j < len(joining) and joining[j][0] == joining[i][0]
                   and joining[j][1] == joining[j - 1][1] + 1):
                j += 1
            sources = self.waiting[joining[i][2]][0]
            cross = sources.cross_source(self)
            reuse = None if state is not None else self._reuse
            state = self.backend.admit(state, cross, joining[i][1], joining[j - 1][1] + 1,
                                       self.capacity, reuse=reuse)
            for _, _, row in joining[i:j]:
                order[row] = kept
                kept += 1
            i = j
        self.state, self._reuse = state, None
        state.select_rows(torch.tensor([order[row] for row in range(len(self.waiting))],
                                       dtype=torch.long, device=state.lengths.device))
        self.waiting = [None] * len(self.waiting)

    def encode(self, sources: "_Sources") -> CrossSource:
        """The draft's encoder K/V source for a batch of sources."""
        encoder_out = sources.encoder_out
        if not self.shared_encoder:
            encoder_out = encode(self.model, self.encoder, sources.net_input)
        return CrossSource(self.backend.lean, encoder_out)


class _Sources:
    """A batch's sources whose rows join the draft when a round first drafts for them: the
    draft's encoder runs for the whole batch when its first row joins (the numbers a batch's
    rows would get together). encoder_out: the target's, where the draft shares its encoder;
    serial: the batch's place in the order the proposer prepared them."""

    def __init__(self, net_input: dict, encoder_out: Optional[dict], serial: int):
        self.net_input, self.encoder_out = net_input, encoder_out
        self.serial = serial
        self.cross: Optional[CrossSource] = None

    def cross_source(self, proposer: DraftModelProposer) -> CrossSource:
        if self.cross is None:
            self.cross = proposer.encode(self)
            self.net_input = self.encoder_out = None  # the encoder output is the source's now
        return self.cross


class NoProposer:
    """Proposer of nothing: the loop's rounds are plain greedy steps (draft_length.NoDrafts)."""

    calls = 0
    last_steps = 0
    last_rows = 0
    pending = 0
    in_place = True

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        pass

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None):
        return None

    def admit(self, prepared, lo: int, hi: int, capacity: int, fresh: bool = False) -> None:
        pass

    def place(self, prepared, lo: int, hi: int, at: Tensor) -> None:
        pass

    def join(self) -> None:
        pass

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        raise RuntimeError("NoProposer proposes nothing: its schedule never asks")

    def rollback(self, n_tokens: Tensor) -> None:
        pass

    def select_rows(self, rows: Tensor) -> None:
        pass

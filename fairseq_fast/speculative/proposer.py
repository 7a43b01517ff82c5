"""The draft model as a proposer: K cheap decoder steps that guess the target's next tokens.

A proposer only proposes: `propose` writes K guesses per row into the token buffer's scratch area
(after each row's committed tokens) and returns them, with the draft's distributions q when the
acceptance rule needs them. `rollback` tells it how many tokens each row kept.

Drafting ends for a row when it proposes EOS, or when a stop rule (stop_rules.StopRule) says so:
the token just proposed is still offered (speculative decoding's confidence stop) or withdrawn
(BiLD's fallback, where the target writes that position itself).

The draft's cache may lag one token behind the committed text (when every draft was kept, the
draft never read its own last guess); the first step of the next round feeds each row whatever it
has not read yet (1 or 2 tokens), as gpt-fast does.

Greedy drafting without a stop rule, forced prefix or n-gram blocking runs its k steps in one C
call where the draft's backend allows (its greedy steps: decoding/greedy_steps.py on the CPU, one
CUDA graph replay on a GPU, decoding/graph_steps.py): the same proposals, without ~30 tensor ops
a step.
"""
from typing import Optional, Protocol, Tuple

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

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """Drafts [B, k'], their distributions q [B, k', V] or None, drafts per row [B]."""

    def rollback(self, n_tokens: Tensor) -> None:
        """Each row kept n_tokens[b] tokens (BOS included)."""

    def select_rows(self, rows: Tensor) -> None:
        """Only these rows go on (the others finished)."""


class DraftModelProposer:
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

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        if not self.shared_encoder:
            encoder_out = encode(self.model, self.encoder, net_input)
        self.state = self.backend.init_state(encoder_out, batch, capacity,
                                             reuse=None if self.state is None
                                             else self.state.buffers)

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None):
        if not self.shared_encoder:
            encoder_out = encode(self.model, self.encoder, net_input)
        return CrossSource(self.backend.lean, encoder_out)

    def admit(self, prepared, lo: int, hi: int, capacity: int, fresh: bool = False) -> None:
        reuse = None if self.state is None else self.state.buffers
        self.state = self.backend.admit(None if fresh else self.state, prepared, lo, hi,
                                        capacity, reuse=reuse)

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """tokens [B, L] (committed text, BOS at 0; scratch after n_tokens[b]); n_tokens [B].
        Writes drafts to tokens[b, n_tokens[b] + j]. Drafting ends when every row has proposed
        EOS or been stopped by `stop`.
        Returns drafts [B, k'], q [B, k', V] | None, drafted [B] (drafts offered per row;
        k' = max(drafted) <= k)."""
        state = self.state
        bsz = tokens.size(0)
        rows = torch.arange(bsz, device=tokens.device)
        # catch up: feed tokens[cached .. n_tokens - 1] (1 or 2 per row, right-padded)
        unread = n_tokens - state.lengths  # [B], >= 1
        width = int(unread.max())
        index = (state.lengths[:, None] + torch.arange(width, device=tokens.device)[None, :])
        feed = tokens.gather(1, index.clamp(max=tokens.size(1) - 1))
        first = n_tokens - 1
        whole = self.steps  # runs the whole propose() in one call where it takes it
        if (whole is not None and stop is None and prefix is None
                and self.rules.no_repeat_ngram_size == 0 and whole.usable(state, bsz, width)):
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
            logits = self.backend.forward(state, feed)
            self.calls += 1
            if width > 1:
                state.lengths = state.lengths - (width - unread)  # forget the padding fillers
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
        self.backend.rollback(self.state, n_tokens - 1)

    def select_rows(self, rows: Tensor) -> None:
        self.state.select_rows(rows)


class NoProposer:
    """Proposer of nothing: the loop's rounds are plain greedy steps (draft_length.NoDrafts)."""

    calls = 0
    last_steps = 0

    def start(self, net_input: dict, batch: int, capacity: int,
              encoder_out: Optional[dict] = None) -> None:
        pass

    def prepare(self, net_input: dict, encoder_out: Optional[dict] = None):
        return None

    def admit(self, prepared, lo: int, hi: int, capacity: int, fresh: bool = False) -> None:
        pass

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[StopRule] = None) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        raise RuntimeError("NoProposer proposes nothing: its schedule never asks")

    def rollback(self, n_tokens: Tensor) -> None:
        pass

    def select_rows(self, rows: Tensor) -> None:
        pass

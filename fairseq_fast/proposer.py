"""The draft model as a proposer: K cheap decoder steps that guess the target's next tokens.

A proposer only proposes: `propose` writes K guesses per row into the token buffer's scratch area
(after each row's committed tokens) and returns them, with the draft's distributions q when the
acceptance rule needs them. `rollback` tells it how many tokens each row kept.

The draft's cache may lag one token behind the committed text (when every draft was kept, the
draft never read its own last guess); the first step of the next round feeds each row whatever it
has not read yet (1 or 2 tokens), as gpt-fast does.
"""
from typing import Callable, Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.decoder_state import DecoderState
from fairseq_fast.lean_decoder import LeanDecoder
from fairseq_fast.step_rules import StepRules


class DraftModelProposer:
    def __init__(self, model, rules: StepRules, sampler=None):
        """model: a fairseq model whose decoder LeanDecoder supports; sampler: an acceptance rule
        with `distribution(lprobs)` (sampling) or None (greedy: the draft proposes its argmax)."""
        self.model = model
        self.lean = LeanDecoder(model.decoder)
        self.rules = rules
        self.sampler = sampler
        self.state: Optional[DecoderState] = None
        self.calls = 0  # decoder forward passes

    def start(self, net_input: dict, batch: int, capacity: int) -> None:
        encoder_out = None
        if getattr(self.model, "encoder", None) is not None:
            encoder_out = self.model.encoder.forward_torchscript(net_input)
        param = next(self.model.parameters())
        self.state = self.lean.init_state(encoder_out, batch, capacity, param.dtype, param.device)

    def propose(self, tokens: Tensor, n_tokens: Tensor, k: int, prefix: Optional[Tensor],
                stop: Optional[Callable[[Tensor, Tensor], Tensor]] = None
                ) -> Tuple[Tensor, Optional[Tensor], Tensor]:
        """tokens [B, L] (committed text, BOS at 0; scratch after n_tokens[b]); n_tokens [B].
        Writes drafts to tokens[b, n_tokens[b] + j]. `stop(prob, product)` (optional) sees, per
        row, the draft's probability of the token just proposed and the product of those over
        the window so far, and returns which rows draft no further; drafting ends when all
        rows have stopped.
        Returns drafts [B, k'], q [B, k', V] | None, drafted [B] (k' = max drafted <= k)."""
        state = self.state
        bsz = tokens.size(0)
        rows = torch.arange(bsz, device=tokens.device)
        # catch up: feed tokens[cached .. n_tokens - 1] (1 or 2 per row, right-padded)
        unread = n_tokens - state.lengths  # [B], >= 1
        width = int(unread.max())
        index = (state.lengths[:, None] + torch.arange(width, device=tokens.device)[None, :])
        feed = tokens.gather(1, index.clamp(max=tokens.size(1) - 1))
        drafts, qs = [], []
        last = unread - 1  # which fed position predicts the next token
        confidence = torch.ones(bsz, dtype=torch.float64, device=tokens.device)
        drafted = torch.full((bsz,), k, dtype=torch.long, device=tokens.device)
        for j in range(k):
            logits = self.lean.forward(state, feed)
            self.calls += 1
            if width > 1:
                state.lengths = state.lengths - (width - unread)  # forget the padding fillers
                logits = logits[rows, last][:, None]
                width, last = 1, torch.zeros_like(last)
            else:
                logits = logits[:, -1:]
            steps = (n_tokens - 1 + j)[:, None]
            lprobs = self.rules.log_probs(self.model, logits, steps, tokens, prefix)
            if self.sampler is None:
                draft = lprobs[:, 0].argmax(-1)
                prob = lprobs[:, 0].gather(1, draft[:, None]).squeeze(1).exp()
            else:
                q = self.sampler.distribution(lprobs[:, 0])
                draft = torch.multinomial(q, 1).squeeze(1)
                prob = q.gather(1, draft[:, None]).squeeze(1)
                qs.append(q)
            tokens[rows, n_tokens + j] = draft
            drafts.append(draft)
            feed = draft[:, None]
            if stop is not None and j + 1 < k:
                confidence = confidence * prob.double()
                stops = stop(prob, confidence) & (drafted == k)
                drafted = torch.where(stops, torch.full_like(drafted, j + 1), drafted)
                if bool((drafted <= j + 1).all()):
                    break
        q = torch.stack(qs, dim=1) if qs else None
        return torch.stack(drafts, dim=1), q, drafted.clamp(max=len(drafts))

    def rollback(self, n_tokens: Tensor) -> None:
        """Rows now hold n_tokens[b] committed tokens; keep only cache entries that match them."""
        self.state.rollback_to(n_tokens - 1)

    def select_rows(self, rows: Tensor) -> None:
        self.state.select_rows(rows)

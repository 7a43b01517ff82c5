"""k greedy decoder steps on a GPU as one CUDA graph replay (cuda_graphs.py): a draft's
proposals.

    steps = GraphSteps.build(model, lean, graphs)       # None unless the model is of that kind
    if steps is not None and steps.usable(state, rows, width):
        drafts = steps.run(state, feed, unread, first, k, rules)   # [B, k] and state advanced

On a GPU a drafted token through lean_decoder.forward (itself one graph replay) and
StepRules.log_probs still costs the host ~20 launches and two waits for the GPU (the rows'
lengths; which edits apply), more than a small draft's step costs the GPU. Here a whole
propose() (the catch-up inputs, k steps, stock's edits and the argmax of each) is one graph,
captured once per (rows, catch-up width, k, edits, cache buffer, source bucket) and replayed per
round (the length limits are the graph's inputs): csrc/greedy_draft.c's job on the CPU.

It always drafts k tokens: a row's drafts after its EOS are cut by the caller (the C steps stop
once every row has proposed EOS; here the extra steps cost GPU time only). The edits are those
StepRules.log_probs makes without a forced prefix or n-gram blocking (the proposer sends those
cases to its loop), applied by masks at every step instead of where they can matter: the same
log-probs. The draft only proposes and the target verifies every token, so, like the
shortlist, this can change how many drafts are kept (rounding of a near-tie) but never the
output.
"""
from typing import Optional

import torch
from torch import Tensor, nn

from fairseq_fast.decoding.cuda_graphs import StepGraphs
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.greedy_steps import stock_normalization
from fairseq_fast.decoding.lean_decoder import LeanDecoder
from fairseq_fast.decoding.step_rules import StepRules, edit_scores


class GraphSteps:
    keeps_scores = False  # run only
    runs_past_eos = True  # every row drafts k tokens

    def __init__(self, model: nn.Module, lean: LeanDecoder, graphs: StepGraphs):
        self.model = model
        self.lean = lean
        self.graphs = graphs
        self._limits_key = None
        self._limits_value: Optional[Tensor] = None

    @classmethod
    def build(cls, model: nn.Module, lean: LeanDecoder,
              graphs: StepGraphs) -> Optional["GraphSteps"]:
        """Steps replayed by `graphs` where the model's log-probs are fairseq's own."""
        if not stock_normalization(model):
            return None
        return cls(model, lean, graphs)

    def usable(self, state: DecoderState, rows: int, width: int = 1) -> bool:
        """Whether a run of `rows` rows of `width` catch-up inputs each runs here."""
        return self.graphs.fits(state, width)

    def run(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor, k: int,
            rules: StepRules) -> Tensor:
        """feed [B, width]: each row's unread inputs (unread[b] real ones, right-padded);
        first [B]: the decoding step of each row's first draft. Returns the drafts [B, k] and
        advances state.lengths."""
        bsz, width = feed.shape
        state.ensure_capacity(int(state.lengths.max()) + width + k)
        # the length limits are inputs, not part of the graph: max_len moves with the source's
        # length where max_len_a is set, and a graph per value would be captured per batch
        edits = (rules.pad, rules.unk, rules.eos, rules.unk_penalty, rules.temperature)
        graphs = self.graphs
        key = graphs.key(state, ("draft", tuple(feed.shape), k, edits))
        out = graphs.replay(key, state, (feed, unread, first, self._limits(rules, feed.device)),
                            lambda st, f, u, s, lim: self._steps(st, f, u, s, lim, k, rules))
        state.lengths = state.lengths + unread + (k - 1)
        return out[0].clone()

    def _limits(self, rules: StepRules, device: torch.device) -> Tensor:
        """[max_len, min_len] on `device` (kept while they stay the same: no copy a round)"""
        key = (rules.max_len, rules.min_len, device)
        if self._limits_key != key:
            self._limits_key = key
            self._limits_value = torch.tensor([rules.max_len, rules.min_len], device=device)
        return self._limits_value

    def _steps(self, state: DecoderState, feed: Tensor, unread: Tensor, first: Tensor,
               limits: Tensor, k: int, rules: StepRules) -> tuple:
        """propose()'s loop without a host decision: k calls of the static forward, the first
        on the catch-up inputs (its fillers then forgotten), each later one on the previous
        draft; state.lengths (the graph's own) advanced in place. limits: [max_len, min_len]."""
        rows = torch.arange(feed.size(0), device=feed.device)
        last = unread - 1  # which catch-up input predicts the first draft
        drafts = []
        x = feed
        for j in range(k):
            logits = self.lean.static_forward(state, x)
            logits = logits[rows, last] if j == 0 else logits[:, 0]  # [B, V]
            state.lengths.add_(unread if j == 0 else 1)
            if rules.temperature != 1.0:
                logits = logits / rules.temperature
            lprobs = self.model.get_normalized_probs((logits, None), log_probs=True,
                                                     sample=None)
            step = first + j
            edit_scores(lprobs, rules.pad, rules.unk, rules.unk_penalty, rules.eos,
                        only_eos=step >= limits[0], no_eos=step < limits[1])
            draft = lprobs.argmax(-1)
            drafts.append(draft)
            x = draft[:, None]
        return (torch.stack(drafts, dim=1),)

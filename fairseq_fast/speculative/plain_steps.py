"""Plain decoding steps inside the speculative loop: a round with nothing to verify.

    plain = PlainSteps.build(target_backend)    # None where it has no greedy steps keeping scores
    if plain is not None and plain.usable(state, rows, rules, prefix, first_step):
        chosen, logits = plain.run(state, tokens, n_tokens, steps, rules)

Where no row has a draft (an n-gram lookup that found nothing) or the draft-length schedule
chooses 0 (drafting does not pay for the rows in flight), the round is the target's own greedy
decoding: `steps` greedy steps of every row in one C call (decoding/greedy_steps.py's, the
call the default generator's greedy look-ahead makes), each step's logits kept. The loop then
treats the target's own choices as the window's drafts: the acceptance rule verifies them against
those logits like any draft, so what is kept and its scores are what a verify pass would give,
and a near-tie that the rule breaks the other way only ends the window there.

Used for greedy search past any forced prefix (a prompt) and with no n-gram blocking, on the
targets whose whole decoder the C call takes (float32 on the CPU); elsewhere a round with nothing
to verify is a verify pass of one position per row.
"""
from typing import Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.decoding.backends import DecoderBackend, GreedyStepper
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.step_rules import StepRules


def in_c_rules(rules: StepRules, prefix: Optional[Tensor], first_step: int) -> bool:
    """Whether the C calls' own argmax applies `rules` at decoding step `first_step` (the
    earliest row's) and after: past any forced prefix, no n-gram blocking, temperature 1."""
    return ((prefix is None or first_step >= prefix.size(1))
            and rules.no_repeat_ngram_size == 0 and rules.temperature == 1.0)


class PlainSteps:
    def __init__(self, steps: GreedyStepper):
        self.steps = steps
        self.last_inputs = 0  # positions the last run computed

    @classmethod
    def build(cls, target: DecoderBackend) -> Optional["PlainSteps"]:
        steps = target.greedy_steps
        return cls(steps) if steps is not None and steps.keeps_scores else None

    def usable(self, state: DecoderState, rows: int, rules: StepRules,
               prefix: Optional[Tensor], first_step: int) -> bool:
        """Whether plain steps of `rows` rows run here, the earliest row at decoding step
        `first_step` (a forced prefix must lie behind every row)."""
        return in_c_rules(rules, prefix, first_step) and self.steps.usable(state, rows)

    def run(self, state: DecoderState, tokens: Tensor, n_tokens: Tensor, steps: int,
            rules: StepRules) -> Tuple[Tensor, Tensor]:
        """Each row's next `steps` greedy tokens: (chosen [B, s], logits [B, s, V]), s <= steps
        (fewer once every row has chosen EOS; after a row's EOS, EOS with logits of zeros: not
        computed); logits[:, j] scores the token after chosen[:, j-1]
        (after the row's committed text for j = 0). The state must hold every committed token
        but the last (the loop's invariant); it is advanced by s."""
        bsz = tokens.size(0)
        feed = tokens.gather(1, (n_tokens - 1)[:, None])
        unread = torch.ones(bsz, dtype=torch.long, device=tokens.device)
        chosen, logits = self.steps.run_logits(state, feed, unread, n_tokens - 1, steps, rules)
        self.last_inputs = bsz * chosen.size(1)
        return chosen, logits

"""BiLDSequenceGenerator: Big Little Decoder (Kim et al. 2023) on the speculative loop.

    generator = BiLDSequenceGenerator([large], tgt_dict, small_model=small,
                                      fallback_threshold=0.6, rollback_threshold=5.0)

The small model leads; the large model is called when needed and then checks, in one pass, every
token the small model wrote since its last call:
    fallback  the small model's probability for its next token (its largest) is below the
              fallback threshold: that token is withdrawn and the large model writes the
              position instead; a run of --bild-max-small-steps small tokens also ends in a
              large-model call
    rollback  in that pass, at the first small token whose cross-entropy under the large model
              exceeds the rollback threshold (and that is not the large model's own choice),
              the rest of the run is dropped and the large model's token replaces it
In the speculative loop's terms (speculative.py) the small model is the proposer with a
stop rule that withdraws its last token (FallbackPolicy), the window is at most max-small-steps
long, and the acceptance rule is acceptance.BiLDRollback; cache, verify pass, rollback and
batching are the loop's. Each row has its own window, fallbacks and rollbacks, so a row's output
does not depend on the rows batched with it.

Not exact by design: the output is the large model's greedy output when the rollback threshold
is 0 (every disagreement rolled back) or the fallback threshold is 1 (the large model writes every
token). Greedy only.
"""
from fairseq_fast.errors import UserError
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.options import check_thresholds
from fairseq_fast.speculative.acceptance import BiLDRollback
from fairseq_fast.speculative.stats import BiLDStats
from fairseq_fast.speculative.stop_rules import FallbackPolicy


class BiLDSequenceGenerator(SpeculativeSequenceGenerator):
    name = "BiLD"

    def __init__(self, models, tgt_dict, small_model, fallback_threshold: float = 0.6,
                 rollback_threshold: float = 5.0, max_small_steps: int = 10,
                 sampling: bool = False, **kwargs):
        check_thresholds(fallback_threshold, rollback_threshold, max_small_steps)
        if sampling:
            raise UserError("BiLD is greedy only: --sampling is not supported with "
                            "--generator bild")
        super().__init__(models, tgt_dict, draft_model=small_model, draft_len=max_small_steps,
                         **kwargs)
        self.draft_stop = FallbackPolicy(fallback_threshold)
        self.acceptance = BiLDRollback(rollback_threshold)
        self.stats = BiLDStats()

    def _count(self, offered, accepted, keep, rows, gamma, drafts) -> None:
        super()._count(offered, accepted, keep, rows, gamma, drafts)
        # a window shorter than the cap ended in a fallback unless it ended with EOS
        short = offered < gamma
        if drafts.size(1) > 0:
            last = drafts.gather(1, (offered - 1).clamp(min=0)[:, None]).squeeze(1)
            short &= ~((offered > 0) & (last == self.eos))
        self.stats.fallbacks += int(short.sum())

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
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
from fairseq_fast.options import check_draft_generator, check_thresholds
from fairseq_fast.speculative.acceptance import BiLDRollback
from fairseq_fast.speculative.stats import BiLDStats
from fairseq_fast.speculative.stop_rules import FallbackPolicy


class BiLDSequenceGenerator(SpeculativeSequenceGenerator):
    """SpeculativeSequenceGenerator configured as BiLD: the small model's window is at most
    max_small_steps long and ends at a fallback, the rollback rule accepts, BiLD's counters.
    small_model None with draft_method='layers': the large model's first layers are the small
    one (self_draft.py)."""

    def __init__(self, models, tgt_dict, small_model=None, fallback_threshold: float = 0.6,
                 rollback_threshold: float = 5.0, max_small_steps: int = 10,
                 sampling: bool = False, **kwargs):
        models = list(models)
        check_thresholds(fallback_threshold, rollback_threshold, max_small_steps)
        check_draft_generator("BiLD", models=len(models),
                              beam_size=kwargs.get("beam_size", 1),
                              temperature=kwargs.get("temperature", 1.0), sampling=sampling,
                              bild=True)
        eos = kwargs.get("eos")
        super().__init__(models, tgt_dict, draft_model=small_model, draft_len=max_small_steps,
                         acceptance=BiLDRollback(rollback_threshold),
                         stop_rule=FallbackPolicy(fallback_threshold),
                         stats=BiLDStats(eos=tgt_dict.eos() if eos is None else eos),
                         name="BiLD", **kwargs)

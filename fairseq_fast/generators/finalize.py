"""A finished hypothesis as stock fairseq's `SequenceGenerator.finalize_hypos` makes it, for
every loop of the plugin (beam_search.py, speculative.py)."""
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor


def scores(cum: Tensor, step: int, normalize: bool, len_penalty: float) -> Tuple[Tensor, Tensor]:
    """cum [n, step + 1]: the running scores of n hypotheses whose EOS is at `step` -> (their
    scores [n], divided by (step + 1) ** len_penalty when `normalize`; positional scores
    [n, step + 1], the differences of consecutive running scores)."""
    positional = cum.clone()
    positional[:, 1:] = positional[:, 1:] - positional[:, :-1]
    score = cum[:, step].clone()
    if normalize:
        score /= (step + 1) ** len_penalty
    return score, positional


def hypothesis(tokens: Tensor, score: Tensor, positional: Tensor,
               attention: Optional[Tensor] = None) -> Dict[str, Tensor]:
    """The dict fairseq's generators return for one hypothesis."""
    return {"tokens": tokens, "score": score,
            "attention": torch.empty(0) if attention is None else attention,
            "alignment": torch.empty(0), "positional_scores": positional}

"""What stock fairseq does to a step's scores before choosing a token, for many positions at once.

`SequenceGenerator._generate` turns the decoder output of step s into log-probs and edits them, in
this order: temperature, log_softmax in float32, NaN -> -inf, pad -> -inf, unk penalty, only EOS
at s >= max_len, forced prefix tokens (and, outside the prefix, no EOS before min_len), n-gram
blocking. `StepRules.log_probs` does the same for logits [B, m, V] whose positions have their own
steps [B, m] (a verify pass covers m consecutive steps of each row; rows are at different steps).

`edit_scores` is the part of those edits every decoding loop of the plugin shares (StepRules here,
the beam loop's candidates_torch, which csrc/beam_step.c is tested against).

`sampling_distribution` is `search.Sampling`'s top-p / top-k truncation as an explicit,
normalised distribution, so the target (p) and the draft (q) are warped the same way.
"""
import math
from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor

from fairseq_fast.decoding.ngram_blocker import block_repeated_ngrams


@dataclass
class StepRules:
    pad: int
    unk: int
    eos: int
    max_len: int = 200
    min_len: int = 1
    unk_penalty: float = 0.0
    temperature: float = 1.0
    no_repeat_ngram_size: int = 0

    def log_probs(self, model, logits: Tensor, steps: Tensor, tokens: Tensor,
                  prefix: Optional[Tensor]) -> Tensor:
        """logits [B, m, V] (model dtype) at steps [B, m] -> edited float32 log-probs [B, m, V].

        tokens [B, L] holds each row's tokens (BOS at 0) including the ones being verified;
        prefix [B, P] forced tokens (pad = not forced) or None."""
        if self.temperature != 1.0:
            logits = logits / self.temperature
        lprobs = model.get_normalized_probs((logits, None), log_probs=True, sample=None)
        # Each edit below is skipped when no position of this call can be affected by it (the
        # result is the same; a verify pass was spending more on these edits than on softmax).
        lo, hi = (int(s) for s in torch.aminmax(steps))
        in_zone = None
        if prefix is not None and lo < min(prefix.size(1), self.max_len):
            in_zone = (steps < prefix.size(1)) & (steps < self.max_len)
        no_eos = None
        if lo < self.min_len:  # no EOS before min_len (outside a forced prefix)
            no_eos = steps < self.min_len
            if in_zone is not None:
                no_eos = no_eos & ~in_zone
        edit_scores(lprobs, self.pad, self.unk, self.unk_penalty, self.eos,
                    only_eos=steps >= self.max_len if hi >= self.max_len else None,
                    no_eos=no_eos)
        if in_zone is not None:  # forced prefix tokens (never at max_len: the zones differ)
            forced = prefix.gather(1, steps.clamp(max=prefix.size(1) - 1))  # [B, m]
            is_forced = in_zone & forced.ne(self.pad)
            vocab = torch.arange(lprobs.size(-1), device=lprobs.device)
            keep = vocab == forced[:, :, None]
            lprobs.masked_fill_(is_forced[:, :, None] & ~keep, -math.inf)
        if self.no_repeat_ngram_size > 0:
            lprobs = block_repeated_ngrams(lprobs, tokens, steps, self.no_repeat_ngram_size)
        return lprobs


def edit_scores(lprobs: Tensor, pad: int, unk: int, unk_penalty: float, eos: int,
                only_eos: Optional[Tensor] = None, no_eos: Optional[Tensor] = None) -> Tensor:
    """Stock's edits of log-probs [..., V], in place: NaN -> -inf, pad -> -inf, unk penalty, only
    EOS where `only_eos` (a step at max_len), no EOS where `no_eos` (a step before min_len); the
    masks have lprobs' shape without V (or are 0-dim: every row). Returns lprobs."""
    torch.nan_to_num_(lprobs, nan=-math.inf, posinf=math.inf, neginf=-math.inf)
    lprobs[..., pad] = -math.inf
    if unk_penalty != 0:
        lprobs[..., unk] -= unk_penalty
    if only_eos is not None:
        eos_scores = lprobs[..., eos].clone()
        lprobs.masked_fill_(only_eos[..., None], -math.inf)
        lprobs[..., eos] = eos_scores
    if no_eos is not None:
        lprobs[..., eos] = lprobs[..., eos].masked_fill(no_eos, -math.inf)
    return lprobs


def sampling_distribution(lprobs: Tensor, topk: int = -1, topp: float = -1.0) -> Tensor:
    """Edited log-probs [..., V] -> the distribution search.Sampling draws from, normalised.

    Same rule and same arithmetic as fairseq: top-p (if > 0) keeps the most probable tokens while
    their cumulative probability is < p plus one more; else top-k (if > 0) keeps the k best."""
    probs = lprobs.exp()
    if topp > 0:
        sorted_probs, order = probs.sort(descending=True)
        mask = sorted_probs.cumsum(dim=-1).lt(topp)
        last = mask.cumsum(dim=-1)[..., -1:].clamp(0, mask.size(-1) - 1)
        mask = mask.scatter(-1, last, True)
        keep = torch.zeros_like(mask).scatter(-1, order, mask)
        probs = probs.masked_fill(~keep, 0.0)
    elif topk > 0:
        kth = lprobs.topk(topk, dim=-1).indices
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, kth, True)
        probs = probs.masked_fill(~keep, 0.0)
    return probs / probs.sum(-1, keepdim=True)

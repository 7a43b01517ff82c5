"""Vectorised no-repeat-n-gram blocking, correct on CPU and GPU.

The rule (fairseq's CUDA kernel, ngram_repeat_block_cuda_kernel.cu): when predicting the token
after tokens[0..s] (tokens[0] is BOS), every earlier window tokens[c .. c+n-2], c <= s-n+1, that
equals the current suffix tokens[s-n+2 .. s] bans tokens[c+n-1]. (fairseq's CPU path compares the
padded tail of the token buffer instead of the suffix and so bans nothing during generation:
fairseq issue #5206.)

No Python loop over rows or steps and no device-to-host copy: one unfold, one comparison, one
scatter (a min-reduce straight into lprobs, no vocabulary-sized temporaries). `reference_banned` below is the plain implementation the tests compare against.
"""
from typing import List

import torch
from torch import Tensor


def block_repeated_ngrams(lprobs: Tensor, tokens: Tensor, steps: Tensor, n: int) -> Tensor:
    """Set banned entries of lprobs to -inf, in place (and return lprobs).

    lprobs [B, m, V]: log-probs for the token after tokens[b, 0..steps[b, j]]
    tokens [B, L]: token buffer (BOS at 0); entries after a row's step are ignored
    steps  [B, m]: long, the stock generator's `step` for each (row, position)
    """
    bsz, length = tokens.shape
    if n < 1 or length < n:
        return lprobs
    grams = tokens.unfold(1, n, 1)  # [B, C, n]: window c = tokens[c .. c+n-1], C = L-n+1
    starts = torch.arange(grams.size(1), device=tokens.device)
    if n > 1:
        keys = tokens.unfold(1, n - 1, 1)  # [B, L-n+2, n-1]: every (n-1)-gram
        # the suffix of (row, position j) is the (n-1)-gram starting at s-n+2
        suffix_at = (steps - n + 2).clamp(min=0, max=keys.size(1) - 1)  # [B, m]
        suffix = keys.gather(1, suffix_at[:, :, None].expand(-1, -1, n - 1))  # [B, m, n-1]
        same = (keys[:, None, : grams.size(1), :] == suffix[:, :, None, :]).all(-1)  # [B, m, C]
    else:  # n == 1: the empty suffix matches every window
        same = torch.ones(bsz, steps.size(1), grams.size(1), dtype=torch.bool,
                          device=tokens.device)
    valid = starts[None, None, :] <= (steps - n + 1)[:, :, None]
    hit = same & valid
    nxt = grams[:, :, n - 1][:, None, :].expand(-1, steps.size(1), -1)  # [B, m, C]
    # min, not assign: a window that misses (+inf) must not clear a ban on the same token
    inf = torch.tensor(float("inf"), dtype=lprobs.dtype, device=lprobs.device)
    return lprobs.scatter_reduce_(2, nxt, torch.where(hit, -inf, inf), reduce="amin")


def reference_banned(tokens: List[int], step: int, n: int) -> set:
    """The rule, plainly: tokens banned after tokens[0..step]."""
    if step + 2 - n < 0:
        return set()
    suffix = tokens[step - n + 2: step + 1]
    return {tokens[c + n - 1] for c in range(step - n + 2) if tokens[c: c + n - 1] == suffix}

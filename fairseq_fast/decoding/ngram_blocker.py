"""Vectorised no-repeat-n-gram blocking, correct on CPU and GPU.

The rule (fairseq's CUDA kernel, ngram_repeat_block_cuda_kernel.cu): when predicting the token
after tokens[0..s] (tokens[0] is BOS), every earlier window tokens[c .. c+n-2], c <= s-n+1, that
equals the current suffix tokens[s-n+2 .. s] bans tokens[c+n-1]. (fairseq's CPU path compares the
padded tail of the token buffer instead of the suffix and so bans nothing during generation:
fairseq issue #5206.)

No Python loop over rows or steps and no device-to-host copy: each (n-1)-gram packed into one
integer, one subtraction against the suffix, one scatter (a min-reduce straight into lprobs, no
vocabulary-sized temporaries). `block_last_ngrams` (one position per row, as fairseq's generators
block) runs the same rule in one C call on CPU (csrc/ngram_block.c): the torch formulation's
ten or so tensor ops a step cost far more than comparing the rows' few dozen tokens.
"""
from typing import Optional

import torch
from torch import Tensor

from fairseq_fast.kernels import calls


def block_last_ngrams(lprobs: Tensor, tokens: Tensor, n: int) -> Tensor:
    """lprobs [B, V], tokens [B, L] (the buffer cut after the step): bans the tokens the rule
    names for the token after tokens[b, :L], in place. The C kernel where it runs (CPU,
    float32/float64, kernels built, no autograd), else block_repeated_ngrams."""
    if calls.block_ngrams(lprobs, tokens, n=n) is None:
        return block_repeated_ngrams(lprobs[:, None], tokens, None, n)[:, 0]
    return lprobs


def block_repeated_ngrams(lprobs: Tensor, tokens: Tensor, steps: Optional[Tensor],
                          n: int) -> Tensor:
    """Set banned entries of lprobs to -inf, in place (and return lprobs).

    lprobs [B, m, V]: log-probs for the token after tokens[b, 0..steps[b, j]]
    tokens [B, L]: token buffer (BOS at 0); entries after a row's step are ignored
    steps  [B, m]: long, the stock generator's `step` for each (row, position); or None: one
        position per row (m = 1), after the whole buffer (step L - 1, as fairseq's generators
        call a blocker, the buffer cut at the step): no window then lies past the step, and the
        suffix is the buffer's end (no step arithmetic, no gather: fewer ops per call)
    """
    bsz, length = tokens.shape
    if n < 1 or length < n:
        return lprobs
    windows = length - n + 1  # C: window c = tokens[c .. c+n-1]
    positions = 1 if steps is None else steps.size(1)
    inf = float("inf")
    if n > 1:  # [B, m, C]: -inf where window c's first n-1 tokens equal the suffix, else +inf
        marks = _suffix_marks(tokens, steps, n - 1, windows, lprobs.size(-1), lprobs.dtype)
    else:  # n == 1: the empty suffix matches every window
        marks = lprobs.new_full((bsz, positions, windows), -inf)
    if steps is not None:
        starts = torch.arange(windows, device=tokens.device)
        marks.masked_fill_(starts[None, None, :] > (steps - n + 1)[:, :, None], inf)
    nxt = tokens[:, None, n - 1:].expand(-1, positions, -1)  # [B, m, C]: token after c
    # min, not assign: a window that misses (+inf) must not clear a ban on the same token
    return lprobs.scatter_reduce_(2, nxt, marks, reduce="amin")


def _suffix_marks(tokens: Tensor, steps: Optional[Tensor], k: int, windows: int, vocab: int,
                  dtype: torch.dtype) -> Tensor:
    """[B, m, C] of `dtype`: -inf where the k-gram starting at c equals the k tokens ending at
    steps[b, j] (steps None: at the buffer's end, m = 1), +inf elsewhere.

    Each k-gram is packed into one integer (base-`vocab` digits; int32 when vocab**k fits, as
    int64 arithmetic is several times slower on CPU), so comparing k-grams is one subtraction:
    |difference| clamped to 1 is 0 (match) or 1, which (x - 0.5) * inf maps to -inf / +inf
    (half the time of a bool comparison and a where on CPU). Where vocab**k does not fit in
    int64 the k-grams are compared token by token."""
    inf = float("inf")
    if steps is not None:
        suffix_at = (steps - k + 1).clamp(min=0, max=tokens.size(1) - k)  # [B, m]
    if vocab ** k >= 2 ** 62:
        keys = tokens.unfold(1, k, 1)  # [B, L-k+1, k]
        suffix = (keys[:, -1:] if steps is None
                  else keys.gather(1, suffix_at[:, :, None].expand(-1, -1, k)))  # [B, m, k]
        same = (keys[:, None, :windows, :] == suffix[:, :, None, :]).all(-1)
        return torch.full(same.shape, inf, dtype=dtype, device=tokens.device).masked_fill_(
            same, -inf)
    digits = tokens.to(torch.int32 if vocab ** k < 2 ** 31 else torch.int64)
    width = tokens.size(1) - k + 1
    keys = digits[:, :width]
    for i in range(1, k):
        keys = (keys * vocab).add_(digits[:, i:i + width])  # a new tensor: digits stays
    suffix = keys[:, -1:] if steps is None else keys.gather(1, suffix_at)  # [B, m]
    differ = (keys[:, None, :windows] - suffix[:, :, None]).to(dtype)
    return differ.abs_().clamp_(max=1).sub_(0.5).mul_(inf)

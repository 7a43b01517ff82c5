"""Typed calls of the C kernels: tensors and named arguments in, tensors out.

    out = calls.beam_candidates(lprobs, prev, sentences=2, beam=4, ...)  # or None

Each function here is the only caller of its kernel. It returns None where the kernel does not
run on its tensors (another dtype or device, a layout the kernel does not take, kernels not
built or off: loader.typed), and the caller then does the same in torch's ops. The C code checks
no bounds: it trusts the shapes, dtypes and index ranges its callers pass.

Strict mode (FAIRSEQ_FAST_STRICT=1, read when this module is imported; the test suite runs with
it) checks them before every call: shapes that agree with the counts passed, dtypes, the layout,
and every index the kernel will read or write through (token ids below the vocabulary, lengths
inside the buffers, counts within their limits). A violation raises KernelArgumentError naming
the kernel and the argument; without strict mode the same call would read or write out of
bounds.
"""
import os
from typing import Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.kernels import loader

STRICT_ENV = "FAIRSEQ_FAST_STRICT"
STRICT = os.environ.get(STRICT_ENV, "0") == "1"
MAX_CANDIDATES = loader.CONSTANTS["MAX_CANDIDATES"]  # kernels.h: beam_step.c's bound on k
# kernels.h: beam_step.c's step rules (no edit, only EOS at max_len, no EOS before min_len)
NO_RULE, ONLY_EOS, NO_EOS = RULES = tuple(loader.CONSTANTS[name]
                                          for name in ("NO_RULE", "ONLY_EOS", "NO_EOS"))


class KernelArgumentError(ValueError):
    """Strict mode: a kernel was about to be called with arguments it would misread."""


# -- strict-mode checks ------------------------------------------------------------------------
def require(kernel: str, ok: bool, what: str) -> None:
    if not ok:
        raise KernelArgumentError(f"{kernel}: {what}")


def check_tensor(kernel: str, name: str, t: Tensor, shape: Tuple[int, ...], dtype: torch.dtype,
            rows_strided: bool = False) -> None:
    """t has `shape` and `dtype`, on the CPU, contiguous (rows_strided: its last dimension is,
    its rows may be a stride apart)."""
    require(kernel, tuple(t.shape) == tuple(shape), f"{name} is {tuple(t.shape)}, "
             f"expected {tuple(shape)}")
    require(kernel, t.dtype == dtype, f"{name} is {t.dtype}, expected {dtype}")
    require(kernel, t.device.type == "cpu", f"{name} is on {t.device}")
    if rows_strided:
        require(kernel, t.dim() < 2 or t.stride(-1) == 1 or t.size(-1) <= 1,
                 f"{name}'s last dimension is strided")
    else:
        require(kernel, t.is_contiguous(), f"{name} is not contiguous")


def check_within(kernel: str, name: str, t: Tensor, low: int, high: int) -> None:
    """Every value of t in [low, high)."""
    if t.numel():
        lo, hi = int(t.min()), int(t.max())
        require(kernel, low <= lo and hi < high,
                 f"{name} holds values in [{lo}, {hi}], outside [{low}, {high})")


def ptr(t: Optional[Tensor]):
    return None if t is None else t.data_ptr()


# -- beam_step.c -------------------------------------------------------------------------------
def beam_candidates(lprobs: Tensor, prev: Optional[Tensor], *, sentences: int, beam: int,
                    k: int, pad: int, unk: int, unk_penalty: float, eos: int,
                    mode: int) -> Optional[Tuple[Tensor, Tensor, Tensor]]:
    """A beam-search step's k candidates per sentence: lprobs [sentences * beam, V] (edited in
    place), prev [sentences * beam] the running scores or None (the first step: each
    sentence's first row only) -> scores, beams, tokens [sentences, k]."""
    fn = loader.typed("bs_candidates", lprobs) if lprobs.stride(1) == 1 else None
    if fn is None:
        return None
    beams = 1 if prev is None else beam
    vocab = lprobs.size(1)
    if prev is not None:
        prev = prev.to(lprobs.dtype).contiguous()
    if STRICT:
        name = "bs_candidates"
        check_tensor(name, "lprobs", lprobs, (sentences * beam, vocab), lprobs.dtype, True)
        if prev is not None:
            check_tensor(name, "prev", prev, (sentences * beam,), lprobs.dtype)
        require(name, 1 <= k <= min(MAX_CANDIDATES, beams * vocab),
                 f"k = {k} outside [1, {min(MAX_CANDIDATES, beams * vocab)}]")
        require(name, all(0 <= i < vocab for i in (pad, unk, eos)),
                 f"pad, unk, eos = {pad}, {unk}, {eos} not all below the vocabulary ({vocab})")
        require(name, mode in RULES, f"mode {mode} is not one of kernels.h's rules {RULES}")
    scores = lprobs.new_empty(sentences, k)
    out_beams = torch.empty(sentences, k, dtype=torch.long)
    tokens = torch.empty(sentences, k, dtype=torch.long)
    fn(lprobs.data_ptr(), lprobs.stride(0), ptr(prev), sentences, beam, beams, vocab, k, pad,
       unk, unk_penalty, eos, mode, scores.data_ptr(), out_beams.data_ptr(), tokens.data_ptr(),
       torch.get_num_threads())
    return scores, out_beams, tokens


# -- ngram_block.c -----------------------------------------------------------------------------
def block_ngrams(lprobs: Tensor, tokens: Tensor, *, n: int) -> Optional[Tensor]:
    """The no-repeat-n-gram rule for the token after each row of tokens [B, L] (long): bans in
    lprobs [B, V], in place; returns lprobs."""
    fn = None
    if (lprobs.dim() == 2 and lprobs.stride(1) == 1 and tokens.dtype == torch.long
            and tokens.size(0) == lprobs.size(0)):
        fn = loader.typed("ng_block", lprobs)
    if fn is None:
        return None
    if tokens.stride(1) != 1:
        tokens = tokens.contiguous()
    rows, length = tokens.shape
    if STRICT:
        name = "ng_block"
        check_tensor(name, "tokens", tokens, (rows, length), torch.long, True)
        require(name, n >= 1, f"n = {n}")
        check_within(name, "tokens", tokens, 0, lprobs.size(1))  # a banned token indexes lprobs
    fn(tokens.data_ptr(), tokens.stride(0), rows, length, n, lprobs.data_ptr(), lprobs.stride(0),
       lprobs.size(1), torch.get_num_threads())
    return lprobs


# -- ngram_lookup.c ----------------------------------------------------------------------------
def ngram_lookup(tokens: Tensor, n_tokens: Tensor, source: Optional[Tensor], *, ngram_min: int,
                 ngram_max: int, k: int, pad: int, eos: int) -> Optional[Tuple[Tensor, Tensor]]:
    """Each row's prompt-lookup draft: tokens [B, L] (long, BOS at 0), n_tokens [B] the committed
    tokens per row, source [B, S] or None -> (drafts [B, k'], drafted [B]), k' the widest."""
    if tokens.device.type != "cpu" or tokens.dtype != torch.long:
        return None
    fn = loader.function("nl_lookup")
    if fn is None:
        return None
    bsz, length = tokens.shape
    tokens = tokens if tokens.stride(1) == 1 else tokens.contiguous()
    lengths = n_tokens.contiguous()
    if source is not None:
        source = source.contiguous()
    if STRICT:
        name = "nl_lookup"
        check_tensor(name, "tokens", tokens, (bsz, length), torch.long, True)
        check_tensor(name, "n_tokens", lengths, (bsz,), torch.long)
        check_within(name, "n_tokens", lengths, 0, length + 1)
        if source is not None:
            check_tensor(name, "source", source, (bsz, source.size(1)), torch.long)
        require(name, 1 <= ngram_min <= ngram_max, f"n-gram sizes {ngram_min}..{ngram_max}")
    drafts = torch.full((bsz, max(k, 0)), pad, dtype=torch.long)
    drafted = torch.empty(bsz, dtype=torch.long)
    widest = fn(tokens.data_ptr(), tokens.stride(0), lengths.data_ptr(), bsz, ptr(source),
                0 if source is None else source.stride(0),
                0 if source is None else source.size(1), ngram_min, ngram_max, k, pad, eos,
                drafts.data_ptr(), drafted.data_ptr())
    return drafts[:, :widest], drafted


# -- spec_step.c -------------------------------------------------------------------------------
def greedy_verify(lprobs: Tensor, drafts: Tensor, gamma: Tensor, prev_score: Tensor, *,
                  threshold: Optional[float]) -> Optional[Tuple[Tensor, Tensor, Tensor, bool]]:
    """A greedy verify window: lprobs [B, m, V] (contiguous), drafts [B, K] (K < m), gamma [B]
    the drafts each row offered, prev_score [B] -> (accepted [B], tokens [B, m], cum [B, m],
    whether a tie made the kernel's answer unsafe: the caller then decides in torch)."""
    fn = loader.typed("sd_greedy_verify", lprobs)
    if fn is None or not lprobs.is_contiguous() or prev_score.dtype != lprobs.dtype:
        return None
    bsz, m, vocab = lprobs.shape
    drafts, gamma, prev_score = (t.contiguous() for t in (drafts, gamma, prev_score))
    if STRICT:
        name = "sd_greedy_verify"
        check_tensor(name, "drafts", drafts, (bsz, drafts.size(1)), torch.long)
        require(name, drafts.size(1) < m, f"{drafts.size(1)} drafts for a window of {m}")
        check_tensor(name, "gamma", gamma, (bsz,), torch.long)
        check_tensor(name, "prev_score", prev_score, (bsz,), lprobs.dtype)
        check_within(name, "gamma", gamma, 0, drafts.size(1) + 1)
        check_within(name, "drafts", drafts, 0, vocab)  # a draft indexes its row of lprobs
    accepted = torch.empty(bsz, dtype=torch.long)
    tokens = torch.empty(bsz, m, dtype=torch.long)
    cum = torch.empty(bsz, m, dtype=lprobs.dtype)
    ties = fn(lprobs.data_ptr(), bsz, m, vocab, drafts.data_ptr(), drafts.size(1),
              gamma.data_ptr(), prev_score.data_ptr(), threshold is not None,
              0.0 if threshold is None else threshold, accepted.data_ptr(), tokens.data_ptr(),
              cum.data_ptr())
    return accepted, tokens, cum, bool(ties)


def commit(tokens: Tensor, cum: Tensor, n_tokens: Tensor, chosen: Tensor, scores: Tensor,
           accepted: Tensor, *, eos: int,
           max_len: int) -> Optional[Tuple[Tensor, Tensor, Tensor, int]]:
    """Row b appends chosen[b, :accepted[b] + 1] (and their scores) to tokens / cum [B, L] at
    n_tokens[b], in place, cut after its first EOS, a token at step >= max_len becoming EOS ->
    (new lengths [B], kept [B], has_eos [B] bool, rows ended)."""
    fn = loader.typed("sd_commit", cum)
    if (fn is None or tokens.stride(1) != 1 or cum.stride(1) != 1
            or tokens.stride(0) != cum.stride(0) or scores.dtype != cum.dtype):
        return None
    bsz, m = chosen.shape
    chosen, scores, accepted, lengths = (t.contiguous() for t in (
        chosen, scores, accepted, n_tokens))
    if STRICT:
        name = "sd_commit"
        check_tensor(name, "tokens", tokens, (bsz, tokens.size(1)), torch.long, True)
        check_tensor(name, "cum", cum, (bsz, tokens.size(1)), cum.dtype, True)
        check_tensor(name, "scores", scores, (bsz, m), cum.dtype)
        check_tensor(name, "accepted", accepted, (bsz,), torch.long)
        check_tensor(name, "n_tokens", lengths, (bsz,), torch.long)
        check_within(name, "accepted", accepted, 0, m)
        check_within(name, "n_tokens", lengths, 1, tokens.size(1))
        # the last place written: n + kept - 1, or the place of step max_len, where rows end
        last = torch.minimum(lengths + accepted, torch.full_like(lengths, max_len + 1))
        check_within(name, "the places written (n_tokens + accepted)", last, 0, tokens.size(1))
    n_out = torch.empty_like(lengths)
    keep = torch.empty_like(lengths)
    has_eos = torch.empty(bsz, dtype=torch.bool)
    ended = fn(chosen.data_ptr(), scores.data_ptr(), accepted.data_ptr(), bsz, m,
               lengths.data_ptr(), eos, max_len, tokens.data_ptr(), cum.data_ptr(),
               tokens.stride(0), n_out.data_ptr(), keep.data_ptr(), has_eos.data_ptr())
    return n_out, keep, has_eos, ended


# -- attention.c -------------------------------------------------------------------------------
def head_mean(probs: Tensor) -> Optional[Tensor]:
    """probs [B, H, *rest] (contiguous float32) -> the mean over heads [B, *rest] in one pass
    (torch's mean over a strided dimension is slow)."""
    fn = loader.function("fa_head_mean")
    if fn is None or probs.dtype != torch.float32 or probs.device.type != "cpu":
        return None
    b, h = probs.shape[:2]
    if STRICT:
        check_tensor("fa_head_mean", "probs", probs, tuple(probs.shape), torch.float32)
    mean = probs.new_empty(b, *probs.shape[2:])
    fn(probs.data_ptr(), b, h, probs.shape[2:].numel(), mean.data_ptr())
    return mean

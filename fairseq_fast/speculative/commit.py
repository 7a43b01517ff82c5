"""Commit: append what each row keeps of a verified window to its tokens and running scores.

    n_tokens, keep, has_eos, ended = commit(tokens, cum, n_tokens, verdict, eos, max_len)

Row b keeps verdict.tokens[b, :accepted + 1] with their scores, cut after its first EOS; a
token at a step >= max_len becomes EOS, so a row reaching max_len ends there even if every
score is -inf (n-gram blocking can ban EOS too; stock fairseq fails an assertion in that case).
tokens / cum [B, L] (step s's token at s + 1, BOS at 0) are written in place from n_tokens[b]
on, n_tokens itself is not changed. Returns the new lengths [B], the kept counts [B], which rows
ended [B] (bool) and how many. One C call (csrc/spec_step.c) on CPU; `commit_torch` is the same
rule in tensor ops.
"""
from typing import Tuple

import torch
from torch import Tensor

from fairseq_fast.kernels import calls
from fairseq_fast.speculative.acceptance import Verdict


def commit(tokens: Tensor, cum: Tensor, n_tokens: Tensor, verdict: Verdict, eos: int,
           max_len: int) -> Tuple[Tensor, Tensor, Tensor, int]:
    done = calls.commit(tokens, cum, n_tokens, verdict.tokens, verdict.cum_scores,
                        verdict.accepted, eos=eos, max_len=max_len)
    if done is None:
        return commit_torch(tokens, cum, n_tokens, verdict, eos, max_len)
    return done


def commit_torch(tokens: Tensor, cum: Tensor, n_tokens: Tensor, verdict: Verdict, eos: int,
                 max_len: int) -> Tuple[Tensor, Tensor, Tensor, int]:
    m = verdict.tokens.size(1)
    pos = torch.arange(m, device=tokens.device)[None, :]
    window = (n_tokens - 1)[:, None] + pos  # each kept token's step
    keep = verdict.accepted + 1
    chosen = verdict.tokens.masked_fill(window >= max_len, eos)
    is_eos = (chosen == eos) & (pos < keep[:, None])
    has_eos = is_eos.any(dim=1)
    keep = torch.where(has_eos, is_eos.long().argmax(dim=1) + 1, keep)
    write = pos < keep[:, None]
    dest = torch.where(write, n_tokens[:, None] + pos, torch.zeros_like(window))
    tokens.scatter_(1, dest, torch.where(write, chosen, tokens.gather(1, dest)))
    cum.scatter_(1, dest, torch.where(write, verdict.cum_scores, cum.gather(1, dest)))
    return n_tokens + keep, keep, has_eos, int(has_eos.sum())

"""Attention for decoder steps on CPU in one call: softmax(q k^T + mask) v over all rows and heads.

    out = cpu_attention.attend(q, k, v, start=start)   # self-attention over a cache
    out = cpu_attention.attend(q, k, v, pad=pad)       # encoder attention, source padding
    out = cpu_attention.attend(q, k, v, start=start, origin=origin)  # a beam-search cache

A decoder step attends with a few queries per row over a few dozen keys. In torch that is two
batched matmuls, a masked fill, a softmax and the transposes around them, each a tiny op whose
set-up costs more than its arithmetic (a [32, 5, 64] x [32, 64, 51] batched matmul is a few
hundred thousand multiply-adds, tens of microseconds of dispatch). csrc/attention.c does the
whole thing in one pass per (row, head), in the library loader.py builds (switched off with the
other kernels by FAIRSEQ_FAST_KERNELS=0).

Masks are described, not materialised: `start` [B] for causal self-attention over a cache (query
j of row b sees keys t <= start[b] + j), `pad` [B / group, T] bool for source padding. Masked keys
get probability 0, as with torch's masked_fill(-inf) + softmax. `origin` [B, >= T] int64 names,
per row and key slot, the cache row that holds the key (decoder_state.py: beams reordered
without copying their histories). Float32 only; results differ from
torch's in float32 rounding (summation order, exp), ~1e-7 relative.
"""
from typing import Optional

import torch
from torch import Tensor

from fairseq_fast.kernels import loader


def usable(q: Tensor) -> bool:
    """Whether attend() takes this query: float32 on CPU, no autograd, kernel built."""
    return (q.dtype == torch.float32 and q.device.type == "cpu"
            and not (torch.is_grad_enabled() and q.requires_grad)
            and loader.function("fa_attend_f32") is not None)


def attend(q: Tensor, k: Tensor, v: Tensor, start: Optional[Tensor] = None,
           pad: Optional[Tensor] = None, origin: Optional[Tensor] = None,
           kv_rows: Optional[Tensor] = None, probs: Optional[Tensor] = None) -> Tensor:
    """q [B, H, n, D] (already scaled), k/v [B / g, H, T, D] with the same strides, shared by g
    consecutive rows; start [B] int64 or pad [B / g, T] bool (True = masked) or neither.
    With kv_rows [B / g] int64, k/v/pad may have any number of rows and sentence s (rows
    s * g .. s * g + g - 1) reads row kv_rows[s] of them. With origin [B, >= T] int64, k/v
    are [R, H, T, D] cache rows and row b's key t is k[origin[b, t], :, t]. probs
    [B, H, n, T] (contiguous float32) receives the attention probabilities.
    Returns [B, n, H * D] float32."""
    fn = loader.function("fa_attend_f32")
    if fn is None:
        raise RuntimeError("the attention kernel is not available (see usable())")
    b, h, n, d = q.shape
    sentences = k.size(0) if kv_rows is None else kv_rows.numel()
    group = 1 if origin is not None else b // max(sentences, 1)
    if origin is None and group * sentences != b:  # the kernel would divide by zero
        raise ValueError(f"{b} query rows cannot share {sentences} key rows evenly")
    t = k.size(2)
    if q.stride(3) != 1:
        q = q.contiguous()
    if k.stride(3) != 1 or k.stride() != v.stride():
        k, v = k.contiguous(), v.contiguous()
    if probs is not None and (probs.shape != (b, h, n, t) or probs.dtype != torch.float32
                              or not probs.is_contiguous()):
        raise ValueError(f"probs must be a contiguous float32 [{b}, {h}, {n}, {t}] tensor")
    out = q.new_empty(b, n, h * d)
    if b * n == 0:
        return out
    start_ptr = pad_ptr = None
    if start is not None:
        start = start.contiguous()
        start_ptr = start.data_ptr()
    if pad is not None:
        pad = pad.reshape(k.size(0), t).contiguous()
        pad_ptr = pad.data_ptr()
    rows_ptr = None
    if kv_rows is not None:
        kv_rows = kv_rows.contiguous()
        rows_ptr = kv_rows.data_ptr()
    origin_ptr, origin_stride = None, 0
    if origin is not None:
        if origin.stride(1) != 1:
            origin = origin.contiguous()
        origin_ptr, origin_stride = origin.data_ptr(), origin.stride(0)
    fn(
        q.data_ptr(), q.stride(0), q.stride(1), q.stride(2), 1.0, k.data_ptr(), v.data_ptr(),
        k.stride(0), k.stride(1), k.stride(2), out.data_ptr(), b, h, n, d, t, group, rows_ptr,
        start_ptr, pad_ptr, origin_ptr, origin_stride,
        None if probs is None else probs.data_ptr(), torch.get_num_threads())
    return out

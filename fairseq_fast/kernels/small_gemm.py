"""A linear kernel for decoder steps on CPU: y = x W^T + b for 1 to a few hundred rows.

    packed = small_gemm.pack(weight)          # once per weight (float32, [out, in])
    y = small_gemm.linear(x, packed, bias)    # x [..., in] float32 -> [..., out]

A decoder step multiplies a handful of rows (a verify window, beams, a batch) by each weight.
There, MKL's sgemm (F.linear) and oneDNN (through torch's op) spend most of a call in per-call
set-up and in reading the weight from memory, while the arithmetic itself is small. The kernel
(csrc/small_gemm.c) keeps each weight in blocks of 64 output features laid out k-major, so a step
streams it once with nothing else to do: a verify window of a few rows costs about what one row
costs (the block is prefetched ahead of the arithmetic), and with more rows each block is read
in chunks that every group of 6 rows uses from L1 while the next chunk arrives, so memory and
arithmetic overlap; packed_linear.py hands calls of more rows to oneDNN.
`scripts/benchmark_linear.py --kernels-only` times the three for every decoder weight shape of
the demo pair at 1 to 160 rows, weights cold in cache as in a real step (docs/benchmarks.md).

Weights whose values are all float16 numbers (checkpoints trained or stored in half precision,
like the demo pair) are packed as float16 and widened in registers: half the memory traffic, the
same products (float16 -> float32 is exact), so the same results bit for bit. A call of many rows
(>= 8 row groups, e.g. beam 5 x 16 sentences) widens each chunk of a block once into a
per-thread buffer that stays in L1 instead, so the FMA ports do not convert the same weights
again for every group of rows. The
generic C level (CPUs without AVX2) converts float16 in software, so it keeps float32.

The C layers (decoder_layer.c) run a ReLU feed-forward's second matmul through the same kernel's
sparse-input variant (sg_sparse_linear_*): each row over its own nonzero inputs, the weight rows of
zero inputs never read; the same bits as the dense kernel (small_gemm.c says why).

Numerics: every output is one float32 accumulator over k in order with fused multiply-adds, then
+ bias, whatever the row count, thread count or AVX level (the generic C level, for CPUs without
AVX2, rounds each product instead: its own last bits, as independent of the split); it differs
from F.linear's summation order in the last bits (~1e-6 relative), as oneDNN's does.

The C source is built and loaded by loader.py. Where it is not there (no compiler,
FAIRSEQ_FAST_KERNELS=0) or FAIRSEQ_FAST_SMALL_GEMM=0 turns this kernel alone off, `available()` is False and callers use oneDNN / F.linear (same outputs up to rounding,
slower).
"""
import logging
import os
from dataclasses import dataclass
from typing import Optional

import torch
from torch import Tensor

from fairseq_fast.kernels import huge_pages, loader

logger = logging.getLogger("fairseq_fast")
OFF_ENV = "FAIRSEQ_FAST_SMALL_GEMM"
_on: Optional[bool] = None


@dataclass
class Packed:
    data: Tensor  # [blocks, in, block] float32 or float16
    out_features: int
    in_features: int
    _finite: Optional[bool] = None

    @property
    def finite(self) -> bool:
        """Whether every weight is finite (from the packing's scan, or checked on first use:
        once per packing; a weight changed in place is packed again)."""
        if self._finite is None:
            self._finite = bool(torch.isfinite(self.data).all())
        return self._finite


def available() -> bool:
    """Whether the kernel is built, loaded and on (decided once per process)."""
    global _on
    if _on is None:
        _on = os.environ.get(OFF_ENV, "1") != "0"
        if not _on:
            logger.info(f"fairseq_fast: small-matrix kernel off ({OFF_ENV}=0)")
        else:
            _on = loader.function("sg_linear_f32") is not None
    return _on


def pack(weight: Tensor, level: Optional[str] = None) -> Packed:
    """weight [out, in] float32 on CPU -> blocks of `block` outputs, k-major, for the kernels of
    `level` (default: loader.level(), the ones that run here); float16 when every value is a
    float16 number (exactly the same products) and the level converts it in hardware, else
    float32."""
    level = loader.level() if level is None else level
    block = loader.variant("sg_block", level)()
    w = weight.detach().contiguous()  # (a copy only for a weight that is a strided view)
    out, inp = w.shape
    threads = torch.get_num_threads()
    # in C, in the call's threads: a scan (float16 numbers? finite?), then the blocks, written
    # straight into memory streamed once a step (2 MiB pages) with no weight-sized temporary:
    # freed, those stay in the C allocator's free lists and in the process's resident memory
    flags = loader.variant("sg_scan", level)(w.data_ptr(), w.numel(), threads)
    half = level != "generic" and bool(flags & 1)  # (no F16C there)
    data = huge_pages.empty((-(-out // block), inp, block),
                            torch.float16 if half else torch.float32)
    fill = loader.variant("sg_pack_f16" if half else "sg_pack_f32", level)
    fill(w.data_ptr(), out, inp, data.data_ptr(), threads)
    return Packed(data, out, inp, _finite=bool(flags & 2))


# Rows of one C call. The kernel runs each weight block over all the rows of its call a chunk
# of k at a time; with thousands of rows that chunk of the input no longer stays in the core's
# cache, and the call slows down. Each output row is summed in the same order however the rows
# are split, so the split changes no bit.
ROWS_PER_CALL = 320


def linear(x: Tensor, packed: Packed, bias: Optional[Tensor] = None,
           residual: Optional[Tensor] = None, relu: bool = False,
           out: Optional[Tensor] = None) -> Tensor:
    """x [..., in] float32 on CPU -> [..., out] = x W^T + bias (+ residual [..., out])
    (then relu): the same bits as those torch ops applied one after another, in C calls of at
    most ROWS_PER_CALL rows. Written into `out` where it is a contiguous float32 tensor of the
    result's shape that overlaps none of the inputs (a buffer reused from step to step: a fresh
    output of many MiB costs page faults), else into a new tensor."""
    x = x.contiguous()
    rows = x.numel() // packed.in_features
    shape = x.shape[:-1] + (packed.out_features,)
    y = out if _fits(out, shape, x, bias, residual) else x.new_empty(shape)
    if rows == 0:
        return y
    fn = loader.function("sg_linear_f16" if packed.data.dtype == torch.float16
                         else "sg_linear_f32")
    bias_ptr = None
    if bias is not None:
        bias = bias.detach().contiguous()
        bias_ptr = bias.data_ptr()
    residual_ptr = None
    if residual is not None:
        residual = residual.detach().expand(y.shape).contiguous()
        residual_ptr = residual.data_ptr()
    width_in, width_out = packed.in_features * 4, packed.out_features * 4  # bytes a row
    for first in range(0, rows, ROWS_PER_CALL):
        n = min(ROWS_PER_CALL, rows - first)
        fn(x.data_ptr() + first * width_in, n, packed.in_features, packed.data.data_ptr(),
           bias_ptr, y.data_ptr() + first * width_out, packed.out_features,
           None if residual_ptr is None else residual_ptr + first * width_out, int(relu),
           torch.get_num_threads())
    return y


def _fits(out: Optional[Tensor], shape, *inputs: Optional[Tensor]) -> bool:
    """Whether `out` can take a result of `shape` computed from `inputs`."""
    if out is None or out.shape != shape or out.dtype != torch.float32 or not out.is_contiguous():
        return False
    storage = out.untyped_storage().data_ptr()
    return all(t is None or t.untyped_storage().data_ptr() != storage for t in inputs)

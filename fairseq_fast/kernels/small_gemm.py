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
(>= 8 row groups, e.g. beam 5 x 32 sentences) widens each block once into a per-thread buffer
instead, so the FMA ports do not convert the same block again for every group of rows.

Numerics: every output is one float32 accumulator over k in order with fused multiply-adds, then
+ bias, whatever the row count, thread count or instruction set; it differs from F.linear's
summation order in the last bits (~1e-6 relative), as oneDNN's does.

The C source is compiled on first use with the system C compiler (`$CC`, default `cc`) for the
machine it runs on (-march=native: AVX-512, or AVX2 with FMA and F16C), into
`$FAIRSEQ_FAST_CACHE` (default ~/.cache/fairseq_fast), keyed by source, compiler and CPU. Where
that is not possible (no compiler, another architecture), `available()` is False, a warning says
why once, and callers use oneDNN / F.linear (same outputs up to rounding, slower).
FAIRSEQ_FAST_SMALL_GEMM=0 turns the kernel off (to compare).
"""
import ctypes
import hashlib
import logging
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch  # first: the kernel's OpenMP then binds to the libgomp torch has loaded
from torch import Tensor

logger = logging.getLogger("fairseq_fast")

CSRC = Path(__file__).with_name("csrc")
# one library; the others are used by cpu_attention.py, fused_layer.py, beam_search.py and
# ngram_blocker.py
SOURCES = (CSRC / "small_gemm.c", CSRC / "attention.c", CSRC / "decoder_layer.c",
           CSRC / "beam_step.c", CSRC / "ngram_block.c")
_lib = None
_tried = False


@dataclass
class Packed:
    data: Tensor  # [blocks, in, block] float32 or float16
    out_features: int
    in_features: int


def _cache_dir() -> Path:
    return Path(os.environ.get("FAIRSEQ_FAST_CACHE")
                or Path.home() / ".cache" / "fairseq_fast")


def _cpu_key() -> str:
    """What -march=native depends on: the architecture and the CPU's feature flags."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        pass
    return platform.machine() + flags


def _build() -> ctypes.CDLL:
    cc = os.environ.get("CC", "cc")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                             check=True).stdout
    key = hashlib.sha1(b"".join(f.read_bytes() for f in SOURCES) + version.encode()
                       + _cpu_key().encode())
    target = _cache_dir() / f"small_gemm-{key.hexdigest()[:16]}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        done = subprocess.run([cc, "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                               *map(str, SOURCES), "-o", str(tmp)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            tmp.unlink(missing_ok=True)
            first = (done.stderr.strip().splitlines() or ["?"])[0]
            raise RuntimeError(f"{cc} failed: {first}")
        os.replace(tmp, target)  # atomic: concurrent first uses each build, one file wins
    lib = ctypes.CDLL(str(target))
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    for name in ("sg_linear_f32", "sg_linear_f16"):
        fn = getattr(lib, name)
        fn.argtypes = [p, i64, i64, p, p, p, i64, p, ctypes.c_int, ctypes.c_int]
        fn.restype = None
    lib.sg_block.restype = ctypes.c_int
    lib.fa_attend_f32.argtypes = [p, i64, i64, i64, ctypes.c_float, p, p, i64, i64, i64, p,
                                  i64, i64, i64, i64, i64, i64, p, p, p, p, i64, p,
                                  ctypes.c_int]
    lib.fa_attend_f32.restype = None
    lib.dl_layer_f32.argtypes = [p, p, i64, i64, p, p, i64, i64, i64, p, i64, p, p, i64, p, p,
                                 i64, i64, i64, i64, i64, p, p, p, p, ctypes.c_int]
    lib.dl_layer_f32.restype = None
    for name, real in (("bs_candidates_f32", ctypes.c_float),
                       ("bs_candidates_f64", ctypes.c_double)):
        fn = getattr(lib, name)
        fn.argtypes = [p, i64, p, i64, i64, i64, i64, i64, i64, i64, real, i64, ctypes.c_int,
                       p, p, p, ctypes.c_int]
        fn.restype = None
    lib.fa_head_mean.argtypes = [p, i64, i64, i64, p]
    lib.fa_head_mean.restype = None
    for name in ("ng_block_f32", "ng_block_f64"):
        fn = getattr(lib, name)
        fn.argtypes = [p, i64, i64, i64, i64, p, i64, i64, ctypes.c_int]
        fn.restype = None
    return lib


def available() -> bool:
    """Whether the kernel is built and loaded (tries once per process)."""
    global _lib, _tried
    if not _tried:
        _tried = True
        if os.environ.get("FAIRSEQ_FAST_SMALL_GEMM", "1") == "0":
            logger.info("fairseq_fast: small-matrix kernel off (FAIRSEQ_FAST_SMALL_GEMM=0)")
        else:
            try:
                _lib = _build()
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                logger.warning("fairseq_fast: small-matrix kernel unavailable (%s); decoder "
                               "matmuls use oneDNN / F.linear instead (slower)", e)
    return _lib is not None


def typed(name: str, x: Tensor):
    """The kernel `name`_f32 or `name`_f64 matching x's dtype, or None where it does not run on
    x (another dtype, not on CPU, x recording gradients, kernels not built)."""
    suffix = {torch.float32: "_f32", torch.float64: "_f64"}.get(x.dtype)
    if (suffix is None or x.device.type != "cpu" or (torch.is_grad_enabled() and x.requires_grad)
            or not available()):
        return None
    return getattr(_lib, name + suffix)


def pack(weight: Tensor) -> Packed:
    """weight [out, in] float32 on CPU -> blocks of `block` outputs, k-major; float16 when every
    value is a float16 number (exactly the same products), else float32."""
    block = _lib.sg_block()
    w = weight.detach()
    half = w.half()
    if torch.equal(half.float(), w):
        w = half
    out, inp = w.shape
    blocks = -(-out // block)
    padded = w.new_zeros(blocks * block, inp)
    padded[:out] = w
    data = padded.view(blocks, block, inp).transpose(1, 2).contiguous()
    return Packed(data, out, inp)


def linear(x: Tensor, packed: Packed, bias: Optional[Tensor] = None,
           residual: Optional[Tensor] = None, relu: bool = False) -> Tensor:
    """x [..., in] float32 on CPU -> [..., out] = x W^T + bias (+ residual [..., out])
    (then relu): the same bits as those torch ops applied one after another."""
    x = x.contiguous()
    rows = x.numel() // packed.in_features
    y = x.new_empty(x.shape[:-1] + (packed.out_features,))
    if rows == 0:
        return y
    fn = _lib.sg_linear_f16 if packed.data.dtype == torch.float16 else _lib.sg_linear_f32
    bias_ptr = None
    if bias is not None:
        bias = bias.detach().contiguous()
        bias_ptr = bias.data_ptr()
    residual_ptr = None
    if residual is not None:
        residual = residual.detach().expand(y.shape).contiguous()
        residual_ptr = residual.data_ptr()
    fn(x.data_ptr(), rows, packed.in_features, packed.data.data_ptr(), bias_ptr, y.data_ptr(),
       packed.out_features, residual_ptr, int(relu), torch.get_num_threads())
    return y

"""Linear layers for decoder steps: the small-matrix kernel or oneDNN, weights packed once.

    linear = PackedLinear()                   # one per decoder: it caches that decoder's weights
    linear = packed_linear.of(decoder)        # the one every generator on `decoder` shares
    y = linear(x, weight, bias)               # = F.linear(x, weight, bias) up to float32 rounding

torch's F.linear sends float32 CPU matmuls to MKL's sgemm, which for the few rows of a decoder
step spends most of a call in set-up and in reading the weight. `route()` picks, per call:

    "kernel"    small_gemm.py: weights of 2^14+ elements, at most 160 rows (KERNEL_MAX_ROWS:
                the row count up to which it is at least as fast as oneDNN; below it, it is
                faster than both F.linear and oneDNN for every decoder weight shape of the demo
                pair, from 128x128 to 4008x256). Weights packed once.
    "onednn"    torch's oneDNN ops on a weight reordered once into their blocked layout: where
                the kernel cannot be built, or past 160 rows; for weights of 2^17+ elements
                with 2+ rows or 2,048+ outputs, where it beats F.linear (for smaller weights
                its per-call set-up costs more than it saves).
    "f_linear"  everything else: float64 and half precision, other devices, calls that record
                gradients, weights too small to gain.

The route depends on shapes and dtypes only, so the same inputs always take the same kernel.

`stacked()` runs weights that share an input as one stacked matmul, so that e.g. q/k/v of 256
dims (three 65,536-element weights) take one call.

Memory: a packed weight is a second copy of the model's (the layouts differ). Nothing else is:
the stacked weights' storage becomes the parts' own, and packing makes no weight-sized
temporaries. That changes the model's Parameters: the same objects with the same values, each
now a view of its rows of the stack (`.data =`), its old storage freed and handed back to the
OS. With FAIRSEQ_FAST_SHARE_WEIGHTS=0 (read at each stacking) the Parameters are left as they
are and each stack is a copy of its parts.

Numerics: another kernel sums in another order, so results differ from F.linear's in the last
bits of float32 (~1e-6 relative), as F.linear's own results differ between row counts (which is
why stock and lean decoding already agree to rounding, not bits; the float64 equality tests run
on F.linear). A weight changed in place or replaced (`.data =`, `.to()`) is packed again on its
next use.
"""
import ctypes
import logging
import os
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from fairseq_fast.kernels import small_gemm
from fairseq_fast.runtime import ModelRuntime

logger = logging.getLogger("fairseq_fast")

SHARE_ENV = "FAIRSEQ_FAST_SHARE_WEIGHTS"
KERNEL_MIN_WEIGHT = 1 << 14  # weight elements from which the kernel is used
KERNEL_MAX_ROWS = 160  # rows up to which it was measured at least as fast as oneDNN
MIN_WEIGHT = 1 << 17  # weight elements from which oneDNN is faster (with 2+ rows)
WIDE = 2048  # output features from which one row is already faster on oneDNN
_ONEDNN = None  # whether torch's oneDNN linear ops are there (checked once)


def onednn_available() -> bool:
    """Whether torch's oneDNN linear ops (private: torch.ops.mkldnn._reorder_linear_weight and
    _linear_pointwise, what torch.compile's CPU freezing uses) are there and still behave as
    this module calls them: checked once, on a small product against F.linear. Where they are
    gone or changed, F.linear runs instead (one log line)."""
    global _ONEDNN
    if _ONEDNN is None:
        _ONEDNN = False
        ops = getattr(torch.ops, "mkldnn", None)
        if (torch.backends.mkldnn.is_available() and ops is not None
                and hasattr(ops, "_linear_pointwise") and hasattr(ops, "_reorder_linear_weight")):
            try:
                with torch.no_grad():
                    x, w, b = torch.ones(2, 16), torch.full((24, 16), 0.5), torch.ones(24)
                    packed = ops._reorder_linear_weight(w, None)
                    y = ops._linear_pointwise(x, packed, b, "none", [], "")
                _ONEDNN = bool(torch.equal(y, F.linear(x, w, b)))
            except (RuntimeError, TypeError):
                pass
        if not _ONEDNN:
            logger.info("fairseq_fast: torch's oneDNN linear ops are not there (or changed); "
                        "using F.linear")
    return _ONEDNN


def _identities(tensors) -> list:
    """(tensor, data_ptr, version) of each tensor that is not None: what _same_tensors compares."""
    return [(t, t.data_ptr(), t._version) for t in tensors if t is not None]


def _same_tensors(old: list, new: list) -> bool:
    """Whether two lists of (tensor, data_ptr, version) name the same, unchanged tensors."""
    return len(old) == len(new) and all(
        a is b and pa == pb and va == vb for (a, pa, va), (b, pb, vb) in zip(old, new))


class PackedLinear:
    def __init__(self, enabled: bool = True, kernel: bool = True):
        """enabled: False keeps F.linear everywhere (--no-fast-linear); kernel: False leaves the
        small-matrix kernel out (oneDNN / F.linear only: to compare)."""
        self.enabled = enabled
        self.kernel = kernel
        # (id(weight), route) -> (weight, data_ptr, version, packed): the weight is held so that
        # its id and address cannot be reused by another tensor while the entry exists
        self._packed: Dict[Tuple[int, str], Tuple[Tensor, int, int, object]] = {}
        # ids of weights used together -> ((part, data_ptr, version) per weight and bias,
        # stacked weight, stacked bias): see stacked()
        self._stacked: Dict[tuple, Tuple[list, Tensor, Optional[Tensor]]] = {}

    @property
    def backends(self) -> str:
        """What calls can take besides F.linear ("" when nothing: disabled or unavailable)."""
        if not self.enabled:
            return ""
        return ", ".join(name for name, ok in (
            ("small-matrix kernel", self.kernel and small_gemm.available()),
            ("oneDNN", onednn_available())) if ok)

    def route(self, x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> str:
        """"kernel", "onednn" or "f_linear" for F.linear(x, weight, bias) (module docstring)."""
        return self._route(x, weight, weight.numel(), weight.size(0),
                           weight.requires_grad or (bias is not None and bias.requires_grad),
                           bias is None or bias.dtype == torch.float32)

    def _route(self, x: Tensor, weight: Tensor, numel: int, out: int, grad: bool,
               bias_ok: bool = True) -> str:
        """route() for a weight of `numel` elements and `out` outputs (several weights stacked:
        their sums) that is `weight`'s dtype and device and records gradients if `grad`."""
        if not (self.enabled and weight.dtype == torch.float32 and x.dtype == torch.float32
                and bias_ok and weight.device.type == "cpu" and x.device.type == "cpu"
                and not (torch.is_grad_enabled() and (grad or x.requires_grad))):
            return "f_linear"
        rows = x.numel() // max(x.size(-1), 1)
        if (self.kernel and numel >= KERNEL_MIN_WEIGHT and rows <= KERNEL_MAX_ROWS
                and x.size(-1) > 0 and small_gemm.available()):
            return "kernel"
        if numel >= MIN_WEIGHT and (rows >= 2 or out >= WIDE) and onednn_available():
            return "onednn"
        return "f_linear"

    def packed(self, weight: Tensor, route: str = "onednn"):
        """weight packed for `route` ("kernel" or "onednn"), once per weight and route."""
        key = (id(weight), route)
        entry = self._packed.get(key)
        if (entry is None or entry[0] is not weight or entry[1] != weight.data_ptr()
                or entry[2] != weight._version):
            if route == "kernel":
                packed = small_gemm.pack(weight)
            else:
                packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), None)
            entry = (weight, weight.data_ptr(), weight._version, packed)
            self._packed[key] = entry
        return entry[3]

    def __call__(self, x: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                 residual: Optional[Tensor] = None, relu: bool = False,
                 out: Optional[Tensor] = None) -> Tensor:
        """F.linear(x, weight, bias), then + residual, then relu (each optional): on the kernel
        route one call (the same bits), elsewhere torch's ops one after another. `out`: where
        the kernel may write the result (small_gemm.linear); use the tensor returned."""
        route = self.route(x, weight, bias)
        if route == "kernel":
            return small_gemm.linear(x, self.packed(weight, route), bias, residual, relu, out)
        y = self._run(route, x, weight, bias)
        if residual is not None:
            y = y + residual
        return F.relu(y) if relu else y

    def _run(self, route: str, x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        if route == "kernel":
            return small_gemm.linear(x, self.packed(weight, route), bias)
        if route == "onednn":
            if bias is not None:
                bias = bias.detach()
            return torch.ops.mkldnn._linear_pointwise(x, self.packed(weight, route), bias,
                                                      "none", [], "")
        return F.linear(x, weight, bias)

    def stacked(self, x: Tensor, weights: Sequence[Tensor],
                biases: Sequence[Optional[Tensor]]) -> List[Tensor]:
        """[self(x, w, b) for w, b in zip(weights, biases)] for weights that share an input (a
        self-attention's q/k/v, a cross-attention's k/v), as one matmul over the weights stacked
        (built once, rebuilt when one changes) when that matmul leaves F.linear; otherwise one
        call per weight, exactly as before. Outputs are views of one [..., sum of outputs]
        tensor."""
        route = self._route(
            x, weights[0], sum(w.numel() for w in weights), sum(w.size(0) for w in weights),
            any(t.requires_grad for t in (*weights, *biases) if t is not None),
            all(b is None or b.dtype == torch.float32 for b in biases))
        if route == "f_linear":
            return [self(x, w, b) for w, b in zip(weights, biases)]  # the stack is not built
        weight, bias = self.stack(weights, biases)
        y = self._run(route, x, weight, bias)
        return list(y.split([w.size(0) for w in weights], dim=-1))

    def stack(self, weights: Sequence[Tensor],
              biases: Sequence[Optional[Tensor]]) -> Tuple[Tensor, Optional[Tensor]]:
        """The weights concatenated along the outputs, and their biases (zeros for a missing
        one; None if all are missing): built once, rebuilt when a part has changed. The weights
        then become views of it where they can (_share_storage): no second copy is held."""
        key = tuple(id(w) for w in weights)
        parts = _identities((*weights, *biases))
        entry = self._stacked.get(key)
        if entry is None or not _same_tensors(entry[0], parts):  # new, or a part has changed
            if entry is not None:
                for r in ("kernel", "onednn"):
                    self._packed.pop((id(entry[1]), r), None)
            weight = torch.cat([w.detach() for w in weights])
            if share_weights() and _share_storage(weights, weight):
                parts = _identities((*weights, *biases))  # their new addresses
                _return_freed_memory()  # the weights' old storages
            bias = None
            if any(b is not None for b in biases):
                bias = torch.cat([w.new_zeros(w.size(0)) if b is None else b.detach()
                                  for w, b in zip(weights, biases)])
            entry = (parts, weight, bias)
            self._stacked[key] = entry
        return entry[1], entry[2]


def share_weights() -> bool:
    """Whether stacking makes the parts views of the stack: FAIRSEQ_FAST_SHARE_WEIGHTS is not 0."""
    return os.environ.get(SHARE_ENV, "1").strip() != "0"


def _share_storage(weights: Sequence[Tensor], stacked: Tensor) -> bool:
    """Make each weight a view of its rows of `stacked` (`.data =`: the same values, the same
    Parameter objects), so that the stack holds no copy of its own. Only where every weight is
    a distinct contiguous tensor that owns its whole storage: a weight that is already a view
    (of another stack, or of a fused projection) keeps its storage, and this stack its copy.
    Each view starts 64-byte aligned, as its own storage did (a matmul library's results may
    depend on alignment). Returns whether the weights were moved."""
    if len({id(w) for w in weights}) != len(weights) or not all(
            w.is_contiguous() and w.storage_offset() == 0
            and w.untyped_storage().nbytes() == w.numel() * w.element_size()
            and w.numel() * w.element_size() % 64 == 0 for w in weights):
        return False
    start = 0
    for w in weights:
        w.data = stacked[start:start + w.size(0)]
        start += w.size(0)
    return True


_MALLOC_TRIM = None  # glibc's malloc_trim, or False where there is none (looked up once)


def _return_freed_memory() -> None:
    """Hand the C allocator's free memory back to the OS (glibc's malloc_trim(0); nothing
    elsewhere). Freed tensors of a few MiB stay in glibc's free lists, still counted in the
    process's resident memory, until something of their size is allocated again; a model's
    weights freed once are not. It takes well under a millisecond when nothing is free."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
            _MALLOC_TRIM.argtypes, _MALLOC_TRIM.restype = [ctypes.c_size_t], ctypes.c_int
        except (OSError, AttributeError, TypeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


def of(module: torch.nn.Module, kernels: bool = True) -> PackedLinear:
    """The PackedLinear of `module` (a decoder; its model's encoder packs into the same one),
    one per module and `kernels` setting (PackedLinear's `enabled`) for as long as the module
    lives: every generator built on the same model shares its packed weights. The hub builds a
    new generator for each translate() call; with one PackedLinear per generator, each call
    would pack the weights again, a large share of a one-sentence call."""
    per_module = ModelRuntime.of(module).packed
    linear = per_module.get(kernels)
    if linear is None:
        linear = per_module[kernels] = PackedLinear(enabled=kernels)
    return linear


def share(module: torch.nn.Module, owner: torch.nn.Module) -> None:
    """Make `module` (a view of some of `owner`'s layers) use `owner`'s PackedLinear objects
    (of()), so that the weights they share are packed and stacked once."""
    ModelRuntime.of(module).packed = ModelRuntime.of(owner).packed

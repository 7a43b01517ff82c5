"""Linear layers on oneDNN with each weight packed once (float32 on CPU); F.linear otherwise.

    linear = PackedLinear()                   # one per decoder: it caches that decoder's weights
    y = linear(x, weight, bias)               # = F.linear(x, weight, bias) up to float32 rounding

torch's F.linear sends float32 CPU matmuls to MKL's sgemm. On the AMD EPYC machines this project is
measured on, MKL's kernels for a few rows run at ~10% of the cores' peak (estimated). oneDNN's JIT
kernels (shipped inside torch, used by torch.compile's CPU backend), on a weight reordered once
into their blocked layout, were 1.1-3.6x faster for every weight of 196,608+ elements (768x256,
1024x256, 256x1024, 1536x128, 4008x128) at 2 to 160 rows (a verify pass, beams, batches), and for
output layers 2,048+ wide even at one row; for weights of 65,536 elements or fewer (256x256,
512x128, 128x128) they were up to 2.9x *slower* at 1 to 40 rows, on par at 160 (session 8,
`scripts/benchmark_linear.py --kernels-only`; the table is in the README). So: oneDNN for weights
of 2^17+ elements with 2+ rows or 2,048+ outputs, F.linear for the rest. Nothing here depends on
the machine: the same rule everywhere, so the same inputs always take the same kernel.

`stacked()` runs weights that share an input as one stacked matmul, so that e.g. q/k/v of 256
dims (three 65,536-element weights) take oneDNN as one 768x256 weight.

Numerics: another kernel sums in another order, so results differ from F.linear's in the last
bits of float32 (~1e-6 relative), as F.linear's own results differ between row counts (which is
why stock and lean decoding already agree to rounding, not bits; the float64 equality tests run
on F.linear: oneDNN has no float64 kernels). Float64 and half precision, other devices and calls
that record gradients use F.linear. A weight changed in place or replaced (`.data =`,
`.to()`) is packed again on its next use.
"""
import logging
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

logger = logging.getLogger("fairseq_fast")

MIN_WEIGHT = 1 << 17  # weight elements from which oneDNN is faster (with 2+ rows)
WIDE = 2048  # output features from which one row is already faster on oneDNN
_ONEDNN = None  # whether torch's oneDNN linear ops are there (checked once)


def onednn_available() -> bool:
    global _ONEDNN
    if _ONEDNN is None:
        ops = getattr(torch.ops, "mkldnn", None)
        _ONEDNN = bool(torch.backends.mkldnn.is_available() and ops is not None
                       and hasattr(ops, "_linear_pointwise")
                       and hasattr(ops, "_reorder_linear_weight"))
        if not _ONEDNN:
            logger.info("fairseq_fast: this torch has no oneDNN linear ops; using F.linear")
    return _ONEDNN


def _same_tensors(old: list, new: list) -> bool:
    """Whether two lists of (tensor, data_ptr, version) name the same, unchanged tensors."""
    return len(old) == len(new) and all(
        a is b and pa == pb and va == vb for (a, pa, va), (b, pb, vb) in zip(old, new))


class PackedLinear:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        # id(weight) -> (weight, data_ptr, version, packed): the weight is held so that its id
        # and address cannot be reused by another tensor while the entry exists
        self._packed: Dict[int, Tuple[Tensor, int, int, Tensor]] = {}
        # ids of weights used together -> ((part, data_ptr, version) per weight and bias,
        # stacked weight, stacked bias): see stacked()
        self._stacked: Dict[tuple, Tuple[list, Tensor, Optional[Tensor]]] = {}

    @property
    def active(self) -> bool:
        """Whether any call can take oneDNN (enabled, and torch has the ops)."""
        return self.enabled and onednn_available()

    def uses_onednn(self, x: Tensor, weight: Tensor) -> bool:
        """The rule: a large weight and 2+ rows or a wide output; float32 on CPU; no autograd."""
        return self._rule(x, weight, weight.numel(), weight.size(0), weight.requires_grad)

    def _rule(self, x: Tensor, weight: Tensor, numel: int, out: int, grad: bool) -> bool:
        """uses_onednn for a weight of `numel` elements and `out` outputs (several weights
        stacked: their sums) that is `weight`'s dtype and device and records gradients if
        `grad`."""
        return (self.enabled and numel >= MIN_WEIGHT
                and (x.numel() >= 2 * x.size(-1) or out >= WIDE)
                and weight.dtype == torch.float32 and x.dtype == torch.float32
                and weight.device.type == "cpu" and x.device.type == "cpu"
                and not (torch.is_grad_enabled() and (grad or x.requires_grad))
                and onednn_available())

    def packed(self, weight: Tensor) -> Tensor:
        entry = self._packed.get(id(weight))
        if (entry is None or entry[0] is not weight or entry[1] != weight.data_ptr()
                or entry[2] != weight._version):
            packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), None)
            entry = (weight, weight.data_ptr(), weight._version, packed)
            self._packed[id(weight)] = entry
        return entry[3]

    def __call__(self, x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
        if not self.uses_onednn(x, weight):
            return F.linear(x, weight, bias)
        return self._onednn(x, weight, bias)

    def _onednn(self, x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        if bias is not None:
            bias = bias.detach()
        return torch.ops.mkldnn._linear_pointwise(x, self.packed(weight), bias, "none", [], "")

    def stacked(self, x: Tensor, weights: Sequence[Tensor],
                biases: Sequence[Optional[Tensor]]) -> List[Tensor]:
        """[self(x, w, b) for w, b in zip(weights, biases)] for weights that share an input (a
        self-attention's q/k/v, a cross-attention's k/v), as one matmul over the weights stacked
        (built once, rebuilt when one changes) when that matmul takes oneDNN; otherwise one call
        per weight, exactly as before. Three 256x256 weights are each too small for oneDNN, the
        stacked 768x256 is not: per call 0.9-1.8x faster than three F.linear calls at 2 to 160
        rows, a demo-target verify pass 3-6% faster (session 9). Outputs are views of one
        [..., sum of outputs] tensor."""
        if not self._rule(x, weights[0], sum(w.numel() for w in weights),
                          sum(w.size(0) for w in weights), any(w.requires_grad for w in weights)):
            return [self(x, w, b) for w, b in zip(weights, biases)]  # the stack is not built
        key = tuple(id(w) for w in weights)
        parts = [(t, t.data_ptr(), t._version) for t in (*weights, *biases) if t is not None]
        entry = self._stacked.get(key)
        if entry is None or not _same_tensors(entry[0], parts):  # new, or a part has changed
            if entry is not None:
                self._packed.pop(id(entry[1]), None)
            weight = torch.cat([w.detach() for w in weights])
            bias = None
            if any(b is not None for b in biases):
                bias = torch.cat([w.new_zeros(w.size(0)) if b is None else b.detach()
                                  for w, b in zip(weights, biases)])
            entry = (parts, weight, bias)
            self._stacked[key] = entry
        _, weight, bias = entry
        y = self._onednn(x, weight, bias)
        return list(y.split([w.size(0) for w in weights], dim=-1))

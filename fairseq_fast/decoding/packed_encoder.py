"""Long sources on CPU in float32: each encoder layer's matmuls over the batch's real tokens
packed together, self-attention sentence by sentence through torch.

    out = encode_packed(encoder, layers, linear, net_input)   # fairseq's encoder-output dict

A source too long for one C call of the fused encoder (fused_layer.FusedEncoder: at most
KERNEL_MAX_ROWS tokens a call) would otherwise run fairseq's own layers (F.linear, by length
groups: unpadded_encoder.py). Here the same layers run as

    tokens = the embedded batch without its padding          [T, C], sentence after sentence
    per layer: q, k, v = tokens W_qkv^T + b                   one small-matrix kernel call
               each sentence's own rows: softmax(q k^T * scaling) v   torch's attention
               tokens = (ctx W_o^T + b) + residual, layer norm, feed-forward likewise

The linears, nearly all of the arithmetic, are the small-matrix kernel's (small_gemm.py, in
C calls of a few hundred rows), which runs faster than F.linear on the CPUs measured; the kernel
sums each output row in one fixed order whatever the other rows of its call are. The attention of
a sentence reads only that sentence's rows. So a sentence's encoding does not depend on the
other sentences of its batch nor on their padding, bit for bit; it differs from fairseq's in the
last bits of float32 only (another summation order in the matmuls, the softmax scaling applied to
the scores instead of the queries: docs/exactness.md).

The padding positions of the output hold zeros (every reader masks them, as with
unpadded_encoder.py), and the encoder states are not kept (nothing that reaches here asks for
them). `encode_packed(..., linear=None)` runs the same steps on F.linear: the reference the
float64 tests compare with fairseq's encoder.
"""
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fairseq_fast.kernels import small_gemm
from fairseq_fast.decoding.model_gate import layerdrop_draws
from fairseq_fast.decoding.unpadded_encoder import encoder_output


class _Kernel:
    """The layers' linears on the small-matrix kernel, whatever the row count (the weights
    packed once, in the PackedLinear cache the fused layers share)."""

    def __init__(self, linear):
        self.linear = linear

    def __call__(self, x: Tensor, weight: Tensor, bias: Optional[Tensor],
                 residual: Optional[Tensor] = None, relu: bool = False,
                 out: Optional[Tensor] = None) -> Tensor:
        return small_gemm.linear(x, self.linear.packed(weight, "kernel"), bias, residual, relu,
                                 out=out)

    def stacked(self, x: Tensor, weights: List[Tensor], biases: List[Optional[Tensor]],
                out: Optional[Tensor] = None):
        weight, bias = self.linear.stack(weights, biases)
        y = self(x, weight, bias, out=out)
        return y.split([w.size(0) for w in weights], dim=-1)


class _Torch:
    """The same linears on F.linear (float64 reference)."""

    def __call__(self, x: Tensor, weight: Tensor, bias: Optional[Tensor],
                 residual: Optional[Tensor] = None, relu: bool = False,
                 out: Optional[Tensor] = None) -> Tensor:
        y = F.linear(x, weight, bias)
        if residual is not None:
            y = y + residual
        return F.relu(y) if relu else y

    def stacked(self, x: Tensor, weights: List[Tensor], biases: List[Optional[Tensor]],
                out: Optional[Tensor] = None):
        return [self(x, w, b) for w, b in zip(weights, biases)]


def encode_packed(encoder: nn.Module, layers: List[nn.Module], linear, net_input: dict,
                  ) -> Dict[str, List[Tensor]]:
    """fairseq's encoder-output dict for net_input: `encoder` is fairseq's TransformerEncoder,
    `layers` its layers as fused_layer.layer_supported() accepts them; `linear` the
    PackedLinear whose kernel runs the matmuls (None: F.linear)."""
    src_tokens = net_input["src_tokens"]
    padding = src_tokens.eq(encoder.padding_idx)
    x, embedding = encoder.forward_embedding(src_tokens)
    layerdrop_draws(encoder.layers)  # what stock's loop over its layers draws
    real = ~padding
    lengths = real.sum(dim=1)
    tokens = x[real]  # [T, C]: each sentence's tokens in order, one sentence after another
    spans = []
    start = 0
    for length in lengths.tolist():
        spans.append((start, length))
        start += length
    run = _Torch() if linear is None else _Kernel(linear)
    buffers = _Buffers(tokens)
    for layer in layers:
        tokens = _layer(layer, tokens, spans, run, buffers)
    if encoder.layer_norm is not None:
        tokens = encoder.layer_norm(tokens)
    out = x.new_zeros(x.shape)
    out[real] = tokens
    return encoder_output(out.transpose(0, 1), padding, embedding, [], lengths)


class _Buffers:
    """The layers' widest intermediates, allocated once per batch and reused by every layer: a
    fresh tensor of that size is memory the system maps anew, page by page, at each layer."""

    def __init__(self, tokens: Tensor):
        self.tokens = tokens
        self.held: Dict[str, Tensor] = {}

    def __call__(self, name: str, width: int) -> Tensor:
        buffer = self.held.get(name)
        if buffer is None or buffer.size(1) != width:
            buffer = self.held[name] = self.tokens.new_empty(self.tokens.size(0), width)
        return buffer


def _layer(layer: nn.Module, x: Tensor, spans, run, buffers: _Buffers) -> Tensor:
    """fairseq's TransformerEncoderLayer.forward (eval mode) on packed tokens x [T, C]."""
    pre = layer.normalize_before
    residual = x
    h = layer.self_attn_layer_norm(x) if pre else x
    attn = layer.self_attn
    q, k, v = run.stacked(h, [attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight],
                          [attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias],
                          out=buffers("qkv", 3 * attn.embed_dim))
    context = _attention(q, k, v, spans, attn.num_heads, attn.scaling,
                         buffers("context", x.size(1)))
    x = run(context, attn.out_proj.weight, attn.out_proj.bias, residual=residual)
    if not pre:
        x = layer.self_attn_layer_norm(x)
    residual = x
    h = layer.final_layer_norm(x) if pre else x
    relu = layer.activation_fn is F.relu
    h = run(h, layer.fc1.weight, layer.fc1.bias, relu=relu,
            out=buffers("ffn", layer.fc1.out_features))
    if not relu and h.dtype == torch.float32:
        torch.ops.aten.gelu_(h)  # what fairseq's gelu and F.gelu compute in float32, in place
    elif not relu:
        h = layer.activation_fn(h)
    x = run(h, layer.fc2.weight, layer.fc2.bias, residual=residual)
    if not pre:
        x = layer.final_layer_norm(x)
    return x


def _attention(q: Tensor, k: Tensor, v: Tensor, spans, heads: int, scaling: float,
               context: Tensor) -> Tensor:
    """Each sentence's self-attention over its own rows: q, k, v [T, C] (views) -> context
    [T, C]."""
    head_dim = q.size(1) // heads
    for start, length in spans:
        if length == 0:
            continue
        rows = slice(start, start + length)
        # [1, H, L, D] views: torch's CPU flash-attention kernel takes 4-d inputs (3-d ones
        # go to the unfused math path, several times slower)
        q_s, k_s, v_s = (t[rows].view(1, length, heads, head_dim).transpose(1, 2)
                         for t in (q, k, v))
        out = F.scaled_dot_product_attention(q_s, k_s, v_s, scale=scaling)
        context[rows].view(1, length, heads, head_dim).copy_(out.transpose(1, 2))
    return context

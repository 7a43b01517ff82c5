"""A whole Transformer layer step in one C call (csrc/decoder_layer.c), for the lean decoder and
the speculative generator's encoders.

    fused = FusedLayers.build(layers, packed_linear)   # None unless every layer is plain
    if fused is not None and fused.ready(rows):
        fused.run(x, state, start, total)              # x [B, n, C] float32, in place
    encoder_out = encode(model, FusedEncoder.build(model.encoder, packed_linear), net_input)

lean_decoder.py runs a layer as ~25 tensor ops and kernel calls from Python; inside a real step
each costs tens of microseconds (its data and the dispatcher's code evicted by the weights
streamed before it), which on the demo pair is as much as the matmuls themselves. The C layer
does the same arithmetic (the matmul kernel, the attention kernel, layer norms, the cache write)
without leaving C. Used for float32 on CPU with the kernels built, up to DECODER_MAX_ROWS rows
per decoder call (KERNEL_MAX_ROWS per encoder call), for layers of the plain fairseq kind: ReLU
or GELU, affine layer norms (pre- or post-norm), equal query/key/value sizes, no NormFormer
extras; anything else takes the Python path, which is the reference (and what float64 tests
check against stock). The layers read the self-attention cache through a state's `origin`
where it has one (fairseq's generator on CPU: beams reordered without copies, decoder_state.py)
and, when asked, hand back the last layer's encoder attention probabilities (fairseq's generator
stores them at every step).

fc2 reads relu(fc1(x)), mostly zeros in a trained model: the C layer gives it to the matmul
kernel's sparse-input variant, which skips them where that is cheaper (the same bits; see
sparse_ffn()). GELU's outputs are seldom zero: its fc2 is the dense kernel.

Weights are the ones packed_linear.py packs (the same cache: packed once, packed again when a
weight changes); the per-layer argument structs are rebuilt only when a parameter (or the
sparse_ffn() setting) changes, which is checked once per batch (at the first call after
LeanDecoder.init_state's `new_batch()`, and in every FusedEncoder.forward), not per call:
checking every parameter at every call would be a visible share of a batch-1 speculative run,
which makes dozens of calls a sentence.
"""
import os
import weakref
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fairseq_fast.kernels import calls, fused, loader, small_gemm
from fairseq_fast.decoding.decoder_state import DecoderState
from fairseq_fast.decoding.model_gate import all_layers, encoder_refusal, layerdrop_draws, log_once
from fairseq_fast.decoding.packed_encoder import encode_packed
from fairseq_fast.decoding.unpadded_encoder import ENV as UNPADDED_ENV
from fairseq_fast.decoding.unpadded_encoder import encode_by_length, encoder_output
from fairseq_fast.kernels.packed_linear import KERNEL_MAX_ROWS

# Rows (batch rows x inputs per row) up to which a decoder call stays in C. Past
# KERNEL_MAX_ROWS a single matmul is a little faster on oneDNN, but a whole pass in C still
# beats the Python layer path around it, and every pass in C gives a row the same bits whatever
# rows share its call (docs/exactness.md); past this many the matmuls dominate and oneDNN's
# speed wins.
DECODER_MAX_ROWS = 1024
SPARSE_FFN_ENV = "FAIRSEQ_FAST_SPARSE_FFN"
SPARSE_NEVER, SPARSE_CHEAPER, SPARSE_ALWAYS = (loader.CONSTANTS[f"SPARSE_{mode}"]  # kernels.h
                                              for mode in ("NEVER", "CHEAPER", "ALWAYS"))


def sparse_ffn() -> int:
    """How fc2 treats the zeros of its input, relu(fc1(x)) (csrc/small_gemm.c: skipping them
    gives the dense kernel's bits for a finite weight, which each layer's struct checks):
    skipped where that is cheaper, or never with FAIRSEQ_FAST_SPARSE_FFN=0; read whenever the
    structs are built."""
    return SPARSE_NEVER if os.environ.get(SPARSE_FFN_ENV, "1") == "0" else SPARSE_CHEAPER


def plain_norm(module) -> bool:
    return (isinstance(module, nn.LayerNorm) and module.elementwise_affine
            and len(module.normalized_shape) == 1 and module.bias is not None)


def activation(layer: nn.Module) -> Optional[int]:
    """The layer's activation as decoder_layer.c names it (fused.ACT_*), None for one it lacks:
    ReLU, or GELU as fairseq's `gelu` (F.gelu on float32) computes it."""
    from fairseq.modules.gelu import gelu

    fn = layer.activation_fn
    return fused.ACT_RELU if fn is F.relu else fused.ACT_GELU if fn in (gelu, F.gelu) else None


def layer_supported(layer: nn.Module) -> bool:
    """A decoder (or encoder) layer whose step decoder_layer.c computes as the Python path does
    (the same operations; float32 rounding aside)."""
    attn = layer.self_attn
    dim = attn.embed_dim
    if (getattr(layer, "c_attn", None) is not None or getattr(layer, "attn_ln", None) is not None
            or getattr(layer, "ffn_layernorm", None) is not None
            or getattr(layer, "w_resid", None) is not None
            or activation(layer) is None
            or attn.num_heads * attn.head_dim != dim
            or not plain_norm(layer.self_attn_layer_norm)
            or not plain_norm(layer.final_layer_norm)
            or layer.fc1.in_features != dim or layer.fc2.out_features != dim):
        return False
    cross = getattr(layer, "encoder_attn", None)
    for a in (attn, cross):
        if a is not None and (a.bias_k is not None or a.add_zero_attn
                              or getattr(a, "use_xformers", False)
                              or getattr(a, "rotary_pe", None) is not None):
            return False
    if cross is not None and (cross.embed_dim != dim or cross.num_heads != attn.num_heads
                              or cross.head_dim != attn.head_dim
                              or not plain_norm(layer.encoder_attn_layer_norm)):
        return False
    return True


class FusedLayers:
    def __init__(self, layers: List[nn.Module], linear):
        """layers: the decoder's layers; linear: the lean decoder's PackedLinear (its cache of
        packed and stacked weights is shared)."""
        self.layers = layers
        self.linear = linear
        # the parameter dicts of every module in the layers: the structs are rebuilt when any
        # parameter in them changes in place, is reassigned or moves (read straight from the
        # dicts: Module.parameters() is several times slower)
        self._owners = [m._parameters for layer in layers for m in layer.modules()
                        if m._parameters]
        self._signature = None
        self._checked = False  # the parameters checked since new_batch()
        self._structs: List[fused.Layer] = []
        self._keep: list = []  # tensors the structs point into
        self._held = None  # the last state's tensors and call arguments (_state_args)

    @classmethod
    def build(cls, layers: List[nn.Module], linear) -> Optional["FusedLayers"]:
        if not layers or not all(layer_supported(layer) for layer in layers):
            return None
        return cls(layers, linear)

    def ready(self, rows: int, most: Optional[int] = None) -> bool:
        """Whether a call of `rows` rows can run here: the kernels built and on (its matmuls are
        the small-matrix kernel's), float32 CPU weights, no autograd, <= `most` rows (None:
        DECODER_MAX_ROWS)."""
        most = DECODER_MAX_ROWS if most is None else most
        weight = self.layers[0].fc1.weight  # the model moves as a whole (.half(), .cuda())
        return (self.linear.enabled and self.linear.kernel
                and weight.dtype == torch.float32 and weight.device.type == "cpu"
                and not torch.is_grad_enabled() and 0 < rows <= most
                and small_gemm.available())

    # -- argument structs ------------------------------------------------------------------
    def _linear_struct(self, weight: Tensor, bias: Optional[Tensor]) -> fused.Linear:
        return linear_struct(self.linear, weight, bias, self._keep)

    def _norm_struct(self, module: Optional[nn.LayerNorm]) -> fused.Norm:
        return norm_struct(module, self._keep)

    def _layer_struct(self, layer: nn.Module) -> fused.Layer:
        attn = layer.self_attn
        cross = getattr(layer, "encoder_attn", None)
        proj = (attn.q_proj, attn.k_proj, attn.v_proj)
        qkv_w, qkv_b = self.linear.stack([m.weight for m in proj], [m.bias for m in proj])
        # 0 x inf is NaN, which skipping would not give (checked once per packed weight)
        finite = self.linear.packed(layer.fc2.weight, "kernel").finite
        act = activation(layer)
        return fused.layer(
            dim=attn.embed_dim, heads=attn.num_heads, head_dim=attn.head_dim,
            ffn=layer.fc1.out_features, normalize_before=layer.normalize_before,
            scaling=attn.scaling, self_norm=self._norm_struct(layer.self_attn_layer_norm),
            final_norm=self._norm_struct(layer.final_layer_norm),
            qkv=self._linear_struct(qkv_w, qkv_b),
            out=self._linear_struct(attn.out_proj.weight, attn.out_proj.bias),
            fc1=self._linear_struct(layer.fc1.weight, layer.fc1.bias),
            fc2=self._linear_struct(layer.fc2.weight, layer.fc2.bias),
            sparse_ffn=sparse_ffn() if finite and act == fused.ACT_RELU else SPARSE_NEVER,
            activation=act,
            cross=None if cross is None else (
                cross.scaling, self._norm_struct(layer.encoder_attn_layer_norm),
                self._linear_struct(cross.q_proj.weight, cross.q_proj.bias),
                self._linear_struct(cross.out_proj.weight, cross.out_proj.bias)))

    def new_batch(self) -> None:
        """A batch starts: its first call checks the parameters. A parameter changed after
        that, within the same batch, is not seen (the structs keep pointing to the packed copies
        of the weights the batch started with, which they keep alive)."""
        self._checked = False

    def refresh(self) -> None:
        """Rebuild the argument structs if a parameter changed since the last check."""
        self._checked = True
        signature = (sparse_ffn(),) + tuple((p.data_ptr(), p._version) for params in self._owners
                                            for p in params.values() if p is not None)
        if signature != self._signature:
            self._keep = []
            self._structs = [self._layer_struct(layer) for layer in self.layers]
            self._signature = signature

    # -- the step ---------------------------------------------------------------------------
    def run(self, x: Tensor, state: DecoderState, start: Tensor, total: int,
            need_attn: bool = False) -> Optional[Tensor]:
        """x [B, n, C] contiguous float32: all layers, in place. The state's self-attention
        cache receives the n new keys/values of row b at slots start[b] .. start[b] + n - 1.
        With need_attn (and encoder K/V), returns the last layer's encoder attention averaged
        over heads, [B, n, src_len] (as lean_decoder's Python path)."""
        caches, crosses, pad = self._state_args(state, x.size(0))
        probs = self.probs_buffer(state, *x.shape[:2]) if need_attn else None
        self._call(x, caches, start.contiguous(), total, None, crosses, pad, state.origin,
                   probs)
        return None if probs is None else head_mean(probs)

    def probs_buffer(self, state: DecoderState, bsz: int, n: int) -> Optional[Tensor]:
        """Room [B, H, n, S] for the last layer's encoder attention probabilities over n inputs
        per row; None without encoder K/V."""
        if not state.cross_k:
            return None
        return torch.empty(bsz, self.layers[-1].encoder_attn.num_heads, n,
                           state.cross_k[-1].size(2))

    def _state_args(self, state: DecoderState, bsz: int):
        """The state's per-layer cache and encoder K/V arguments, worked out again only when
        one of its tensors was replaced (growth, rows leaving, reordered sentences): the steps
        of a batch reuse them. Only weak references to the state's tensors are kept, so that a
        finished batch's cache is freed (a reference that died never matches); held strongly
        are only the source-padding mask (in the arguments) and any encoder K/V copies the
        pointers point into."""
        tensors = (state.self_k, state.self_v, state.cross_mask, state.cross_rows,
                   *state.cross_k, *state.cross_v)
        held = self._held
        if (held is not None and len(held[0]) == len(tensors) and held[1] == bsz
                and all((r is None and t is None) or (r is not None and r() is t)
                        for r, t in zip(held[0], tensors))):
            return held[2]
        pad = None
        if state.cross_mask is not None:
            pad = state.cross_mask.reshape(state.cross_mask.size(0), -1).contiguous()
        crosses, copies = [], []
        rows = state.cross_rows  # the sentences' encoder rows (None: row s for sentence s)
        for i in range(len(self.layers)):
            if not state.cross_k:
                crosses.append(fused.NO_CROSS)
                continue
            ck, cv = state.cross_k[i], state.cross_v[i]
            if ck.stride() != cv.stride() or ck.stride(3) != 1:
                ck, cv = ck.contiguous(), cv.contiguous()
                copies += [ck, cv]  # held with the arguments that point into them
            crosses.append(fused.cross_args(
                ck, cv, bsz // (ck.size(0) if rows is None else rows.numel()), rows))
        args = ([fused.cache_args(k, v) for k, v in zip(state.self_k, state.self_v)], crosses,
                pad)
        refs = tuple(None if t is None else weakref.ref(t) for t in tensors)
        self._held = (refs, bsz, args, copies)
        return args

    def _call(self, x: Tensor, caches, start: Optional[Tensor], total: int,
              self_pad: Optional[Tensor], crosses, pad: Optional[Tensor],
              origin: Optional[Tensor] = None, probs: Optional[Tensor] = None) -> None:
        """Every layer on x [B, n, C] in place (fused.run_layers); caches[i] = layer i's self-
        attention K/V arguments (fused.cache_args); crosses[i] = its encoder K/V arguments
        (fused.NO_CROSS: none); origin: the state's (DecoderState.origin); probs [B, H, n, S]
        receives the last layer's encoder attention probabilities."""
        if not self._checked:
            self.refresh()
        bsz, n, dim = x.shape
        work = x.new_empty(fused.layer_work_floats(bsz * n, dim,
                                                   max(s.ffn for s in self._structs)))
        fused.run_layers(self._structs, x, caches, crosses, start=start, total=total,
                         self_pad=self_pad, origin=origin, pad=pad, probs=probs, work=work)


def linear_struct(linear, weight: Tensor, bias: Optional[Tensor], keep: list) -> fused.Linear:
    """The dl_linear struct of weight (packed for the kernel by `linear`, a PackedLinear) and
    bias; `keep` receives the tensors it points into (alive even if the cache packs the weight
    again)."""
    packed = linear.packed(weight, "kernel")
    return fused.linear(packed.data, bias, in_features=packed.in_features,
                        out_features=packed.out_features, keep=keep)


def norm_struct(module: Optional[nn.LayerNorm], keep: list) -> fused.Norm:
    """The dl_norm struct of a layer norm (None: none)."""
    if module is None:
        return fused.norm(None, None, 0.0, keep)
    return fused.norm(module.weight, module.bias, module.eps, keep)


def head_mean(probs: Tensor) -> Tensor:
    """probs [B, H, *rest] (contiguous float32) -> the mean over heads [B, *rest], in C (one pass,
    where torch's mean over a strided dimension is slow)."""
    mean = calls.head_mean(probs)
    return probs.mean(1) if mean is None else mean


class FusedEncoder:
    """fairseq's TransformerEncoder.forward with each layer one C call (decoder_layer.c in
    encoder mode: not causal, source padding masked, no cross attention). The embedding, the
    padding zeroing and the final layer norm are fairseq's own code and modules; the output is
    fairseq's encoder-output dict (encoder_out a [S, B, C] view of a batch-first tensor)."""

    def __init__(self, encoder: nn.Module, layers: FusedLayers):
        self.encoder = encoder
        self.layers = layers

    @classmethod
    def build(cls, encoder: Optional[nn.Module], linear) -> Optional["FusedEncoder"]:
        """None unless `encoder` is fairseq's own TransformerEncoder code that model_gate.py
        passes (a refusal is logged once) with layers of the plain kind."""
        from fairseq.models.transformer import TransformerEncoderBase

        if not isinstance(encoder, TransformerEncoderBase):
            return None
        reason = encoder_refusal(encoder)
        if reason is not None:
            log_once(reason, f"fairseq_fast: the encoder runs on fairseq's own code ({reason})")
            return None
        fused = FusedLayers.build(all_layers(encoder.layers), linear)
        return None if fused is None else cls(encoder, fused)

    def usable(self, src_tokens: Tensor) -> bool:
        """CPU, and one sentence fits a call (a batch runs in calls of whole sentences)."""
        return (src_tokens.device.type == "cpu"
                and self.layers.ready(src_tokens.size(1), KERNEL_MAX_ROWS))

    def packable(self, src_tokens: Tensor) -> bool:
        """CPU, the kernels on for these weights, and FAIRSEQ_FAST_UNPADDED_ENCODER not 0:
        packed_encoder.py can run the batch (sources too long for usable())."""
        return (src_tokens.device.type == "cpu" and src_tokens.numel() > 0
                and os.environ.get(UNPADDED_ENV, "1") != "0" and self.layers.ready(1))

    def forward(self, net_input: dict) -> dict:
        enc = self.encoder
        src_tokens = net_input["src_tokens"]
        padding = src_tokens.eq(enc.padding_idx)
        has_pads = bool(padding.any())
        x, embedding = enc.forward_embedding(src_tokens)
        layerdrop_draws(enc.layers)  # what stock's loop over its layers draws
        if has_pads:
            x = x * (1 - padding.unsqueeze(-1).type_as(x))
        x = x.contiguous()
        if x.data_ptr() == embedding.data_ptr():
            x = x.clone()  # the layers write x in place; encoder_embedding must stay
        bsz, length = x.shape[:2]
        # Calls of at most KERNEL_MAX_ROWS tokens, whole sentences each (a row's result does
        # not depend on the other rows of its call, so the chunking changes no bit).
        per_call = max(1, KERNEL_MAX_ROWS // length)
        scratch = {}  # one K/V buffer per attention shape, shared by the layers and calls
        caches = []
        for layer in self.layers.layers:
            shape = (2, min(bsz, per_call), layer.self_attn.num_heads, length,
                     layer.self_attn.head_dim)
            if shape not in scratch:
                scratch[shape] = x.new_empty(shape)
            caches.append(fused.cache_args(*scratch[shape]))
        self.layers.refresh()
        if has_pads:
            padding = padding.contiguous()
        for first in range(0, bsz, per_call):
            chunk = slice(first, first + per_call)
            self.layers._call(x[chunk], caches, None, length,
                              padding[chunk] if has_pads else None,
                              [fused.NO_CROSS] * len(caches), None)
        if enc.layer_norm is not None:
            x = enc.layer_norm(x)
        return encoder_output(x.transpose(0, 1), padding, embedding, [],
                              src_tokens.ne(enc.padding_idx).sum(dim=1))


def encode(model: nn.Module, fused: Optional[FusedEncoder], net_input: dict) -> Optional[dict]:
    """model.encoder's output for net_input (None for a model without an encoder), through
    `fused` (FusedEncoder.build(model.encoder, ...), or None) where it is usable, else for long
    sources through its layers' matmul kernel without padding (packed_encoder.py), else for long
    sources of different lengths without their padding (unpadded_encoder.py), else by fairseq's
    encoder as it is."""
    encoder = getattr(model, "encoder", None)
    if encoder is None:
        return None
    if fused is not None and fused.usable(net_input["src_tokens"]):
        return fused.forward(net_input)
    if fused is not None and fused.packable(net_input["src_tokens"]):
        return encode_packed(fused.encoder, fused.layers.layers, fused.layers.linear, net_input)
    by_length = encode_by_length(encoder, net_input)
    return by_length if by_length is not None else encoder.forward_torchscript(net_input)

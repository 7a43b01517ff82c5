"""The model gate: the fairseq decoders (and encoders) the fast path implements, and nothing else.

The fast path does not call a decoder's modules: lean_decoder.py reads their weights and computes
the forward pass itself, and the fused C layers do the same for decoder and encoder layers. A
module it did not know about would be skipped without a word. So before the fast path takes a
model, this gate walks the whole decoder (and each encoder whose layers the C kernels run) and
checks every module against the explicit list below: where it sits, its exact type, and each
attribute that changes what it computes. Anything else is a refusal that names the module and
the reason; the caller then keeps fairseq's own path for that model (one log line, stock's
output).

    decoder                  TransformerDecoderBase, its forward-pass methods not overridden,
                             no cross_self_attention, at least one layer
      embed_tokens           nn.Embedding (its weights read) or AdaptiveInput (called)
      quant_noise            nn.Linear: quant-noise models' extra projection of the embeddings
      project_in_dim, project_out_dim        nn.Linear
      embed_positions        LearnedPositionalEmbedding, SinusoidalPositionalEmbedding
      layernorm_embedding, layer_norm        a layer norm (below)
      layers                 nn.ModuleList, or LayerDropModuleList (in eval every layer runs;
                             the random numbers it draws per forward pass are drawn too)
      output_projection      nn.Linear
      adaptive_softmax       AdaptiveSoftmax (called, through the model's get_normalized_probs)
      dropout_module         dropout not applied at inference (FairseqDropout)
    decoder layer            TransformerDecoderLayerBase, forward and residual_connection not
                             overridden; activation_checkpoint's wrapper allowed
      self_attn, encoder_attn                MultiheadAttention (below)
      *_layer_norm, attn_ln, ffn_layernorm   a layer norm; c_attn, w_resid: NormFormer scales
      fc1, fc2               nn.Linear
    encoder (C layers)       TransformerEncoderBase, its forward-pass methods not overridden;
                             embeddings and final norm are run by fairseq's own code
      layers                 TransformerEncoderLayerBase, as above, return_fc off
    MultiheadAttention       forward and apply_sparse_mask not overridden; q/k/v/out_proj
                             nn.Linear; no add_bias_kv, add_zero_attn or xformers; self-attention
                             with kdim = vdim = embed_dim
    nn.Linear, nn.Embedding  exactly those types (no parametrizations), no max_norm
    a layer norm             nn.LayerNorm or Fp32LayerNorm
    every module             no forward hooks (quant-noise's, which acts only in training,
                             aside), no forward set on the instance

The attention the generators keep is the last layer's encoder attention averaged over all heads:
what fairseq's decoder returns in incremental decoding (a model's alignment_layer and
alignment_heads apply to forward_align, which stays fairseq's).
"""
import functools
import logging
from typing import Callable, Dict, List, Optional

import torch
from torch import nn


logger = logging.getLogger("fairseq_fast")
_logged = set()


class _Refused(Exception):
    pass


def log_once(reason: str, message: str) -> None:
    """A refusal's log line, once per process and reason (every batch asks again; a speculative
    generator that falls back to the default generator is refused for the same reason twice)."""
    if reason not in _logged:
        _logged.add(reason)
        logger.warning(message)


def decoder_refusal(decoder: nn.Module) -> Optional[str]:
    """None if the fast path implements every part of `decoder`; else why not, in a few words."""
    return _global_hooks() or _ask(_decoder, decoder, "decoder")


def encoder_refusal(encoder: nn.Module) -> Optional[str]:
    """The same for an encoder whose layers the C kernels would run."""
    return _global_hooks() or _ask(_encoder, encoder, "encoder")


def ensemble_refusal(models) -> Optional[str]:
    """The same for every model of an ensemble (decoders; one target dictionary)."""
    for i, model in enumerate(models):
        reason = decoder_refusal(getattr(model, "decoder", None))
        if reason is not None:
            return reason if len(models) == 1 else f"model {i + 1}: {reason}"
    symbols = [list(m.decoder.dictionary.symbols) for m in models]
    if any(s != symbols[0] for s in symbols[1:]):
        return "the ensemble's models have different target dictionaries"
    return None


def plain_log_softmax(model: nn.Module) -> bool:
    """Whether the model's get_normalized_probs(..., log_probs=True) is fairseq's plain one:
    F.log_softmax(logits, dim=-1, dtype=torch.float32), no adaptive softmax, no method of the
    chain overridden (a caller may then compute the same op in place)."""
    from fairseq.models import BaseFairseqModel, FairseqDecoder
    from fairseq.models.transformer.transformer_base import TransformerModelBase

    decoder = getattr(model, "decoder", None)
    return (type(model).get_normalized_probs in (BaseFairseqModel.get_normalized_probs,
                                                 TransformerModelBase.get_normalized_probs)
            and type(model).get_normalized_probs_scriptable
            is BaseFairseqModel.get_normalized_probs_scriptable
            and isinstance(decoder, FairseqDecoder)
            and type(decoder).get_normalized_probs is FairseqDecoder.get_normalized_probs
            and type(decoder).get_normalized_probs_scriptable
            is FairseqDecoder.get_normalized_probs_scriptable
            and getattr(decoder, "adaptive_softmax", None) is None
            and not getattr(decoder, "onnx_trace", False)
            and all("get_normalized_probs" not in vars(m) for m in (model, decoder)))


def all_layers(layers: nn.ModuleList) -> List[nn.Module]:
    """Every layer of a ModuleList, without iterating it: a LayerDropModuleList's iterator draws
    random numbers and, in training mode, skips layers."""
    return list(layers._modules.values())


def layerdrop_draws(layers) -> None:
    """Draw the random numbers fairseq's LayerDropModuleList draws each time a forward pass
    iterates it (also in eval, where every layer still runs), so that sampling after a fast
    forward pass reads the same random stream as after stock's."""
    from fairseq.modules.layer_drop import LayerDropModuleList

    if isinstance(layers, LayerDropModuleList):
        torch.empty(len(layers)).uniform_()  # LayerDropModuleList.__iter__'s draw


def _global_hooks() -> Optional[str]:
    """Hooks registered for every module (torch.nn.modules.module.register_module_forward_*)."""
    from torch.nn.modules import module

    if getattr(module, "_global_forward_hooks", None) or getattr(
            module, "_global_forward_pre_hooks", None):
        return "global module forward hooks are registered"
    return None


def _ask(check: Callable, module, where: str) -> Optional[str]:
    try:
        check(module, where)
    except _Refused as e:
        return str(e)
    return None


def _require(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise _Refused(f"{where}: {what}")


# -- every module ---------------------------------------------------------------------------------
def _is_quant_noise_hook(hook) -> bool:
    return (getattr(hook, "__module__", None) == "fairseq.modules.quant_noise"
            and getattr(hook, "__name__", None) == "_forward_pre_hook")


def _plain_calls(module: nn.Module, where: str) -> None:
    """No hook and no instance-level forward stand between a call and the class's code."""
    _require(not module._forward_hooks, where, "has a forward hook")
    _require(all(_is_quant_noise_hook(h) for h in module._forward_pre_hooks.values()), where,
             "has a forward pre-hook")
    forward = module.__dict__.get("forward")
    if forward is not None:
        from fairseq.modules.checkpoint_activations import _checkpointed_forward

        inner = getattr(module, "precheckpoint_forward", None)
        _require(isinstance(forward, functools.partial) and forward.func is _checkpointed_forward
                 and getattr(inner, "__func__", None) is type(module).forward, where,
                 "its forward is replaced on the instance")


def _children(module: nn.Module, where: str, allowed: Dict[str, Callable]) -> None:
    """Each child is one `allowed` names, and passes that name's check."""
    for name, child in module.named_children():
        _require(name in allowed, f"{where}.{name}",
                 f"{type(child).__name__} is not a part the fast path implements")
        allowed[name](child, f"{where}.{name}")


def _parameters(module: nn.Module, where: str, names=()) -> None:
    extra = [n for n, p in module._parameters.items() if p is not None and n not in names]
    _require(not extra, where, f"unknown parameter {extra[0] if extra else ''}")


def _methods(module: nn.Module, base: type, names, where: str) -> None:
    _require(isinstance(module, base), where, f"{type(module).__name__} is not a {base.__name__}")
    for name in names:
        _require(getattr(type(module), name) is getattr(base, name), where,
                 f"{type(module).__name__} overrides {name}()")


# -- leaves ------------------------------------------------------------------------------------
def _linear(module, where: str) -> None:
    _require(type(module) is nn.Linear, where, f"{type(module).__name__} is not an nn.Linear")
    _plain_calls(module, where)


def _embedding(module, where: str) -> None:
    from fairseq.modules.adaptive_input import AdaptiveInput

    if type(module) is AdaptiveInput:  # called: fairseq's code, any token shape
        _plain_calls(module, where)
        return
    _require(type(module) is nn.Embedding, where,
             f"{type(module).__name__} input embeddings are not implemented")
    _require(module.max_norm is None, where, "embeddings with max_norm")
    _plain_calls(module, where)


def _layer_norm(module, where: str) -> None:
    from fairseq.modules.layer_norm import Fp32LayerNorm

    _require(type(module) in (nn.LayerNorm, Fp32LayerNorm), where,
             f"{type(module).__name__} is not a layer norm the fast path implements")
    _plain_calls(module, where)


def _dropout(module, where: str) -> None:
    from fairseq.modules.fairseq_dropout import FairseqDropout

    _require(type(module) in (FairseqDropout, nn.Dropout), where,
             f"{type(module).__name__} is not a dropout module")
    _require(not getattr(module, "apply_during_inference", False) or module.p == 0, where,
             "dropout applied at inference (--retain-dropout)")


def _positions(module, where: str) -> None:
    from fairseq.modules.learned_positional_embedding import LearnedPositionalEmbedding
    from fairseq.modules.sinusoidal_positional_embedding import SinusoidalPositionalEmbedding

    _require(type(module) in (LearnedPositionalEmbedding, SinusoidalPositionalEmbedding), where,
             f"{type(module).__name__} positions are not implemented")
    _require(getattr(module, "max_norm", None) is None, where, "positions with max_norm")
    _require(module.padding_idx is not None, where, "positions without a padding index")
    _plain_calls(module, where)


def _adaptive_softmax(module, where: str) -> None:
    from fairseq.modules.adaptive_softmax import AdaptiveSoftmax

    _require(type(module) is AdaptiveSoftmax, where,
             f"{type(module).__name__} is not fairseq's AdaptiveSoftmax")


def _attention(module, where: str, cross: bool) -> None:
    from fairseq.modules.multihead_attention import MultiheadAttention

    _methods(module, MultiheadAttention, ("forward", "apply_sparse_mask"), where)
    _require(module.bias_k is None and module.bias_v is None and not module.add_zero_attn,
             where, "add_bias_kv / add_zero_attn attention")
    _require(not getattr(module, "use_xformers", False), where, "xformers attention")
    _require(getattr(module, "rotary_pe", None) is None, where, "rotary attention")
    _require(module.num_heads * module.head_dim == module.q_proj.out_features, where,
             "heads x head_dim differ from the projections' size")
    if cross:
        _require(module.encoder_decoder_attention, where, "not encoder-decoder attention")
    else:
        _require(module.self_attention and module.qkv_same_dim, where,
                 "self-attention with kdim/vdim other than embed_dim")
    _plain_calls(module, where)
    _parameters(module, where)
    _children(module, where, dict(q_proj=_linear, k_proj=_linear, v_proj=_linear,
                                  out_proj=_linear, dropout_module=_dropout))


def _self_attention(module, where):
    _attention(module, where, cross=False)


def _cross_attention(module, where):
    _attention(module, where, cross=True)


# -- layers ------------------------------------------------------------------------------------
def _layer_list(check_layer: Callable) -> Callable:
    def check(module, where: str) -> None:
        from fairseq.modules.layer_drop import LayerDropModuleList

        _require(type(module) in (nn.ModuleList, LayerDropModuleList), where,
                 f"{type(module).__name__} is not a list of layers")
        _plain_calls(module, where)
        for name, layer in module.named_children():
            check_layer(layer, f"{where}.{name}")

    return check


def _decoder_layer(layer, where: str) -> None:
    from fairseq.modules.transformer_layer import TransformerDecoderLayerBase

    _methods(layer, TransformerDecoderLayerBase, ("forward", "residual_connection"), where)
    _require(not layer.cross_self_attention, where, "cross_self_attention")
    _plain_calls(layer, where)
    _parameters(layer, where, ("c_attn", "w_resid"))
    _children(layer, where, dict(
        self_attn=_self_attention, encoder_attn=_cross_attention, dropout_module=_dropout,
        activation_dropout_module=_dropout, self_attn_layer_norm=_layer_norm,
        encoder_attn_layer_norm=_layer_norm, final_layer_norm=_layer_norm, attn_ln=_layer_norm,
        ffn_layernorm=_layer_norm, fc1=_linear, fc2=_linear))


def _encoder_layer(layer, where: str) -> None:
    from fairseq.modules.transformer_layer import TransformerEncoderLayerBase

    _methods(layer, TransformerEncoderLayerBase, ("forward", "residual_connection"), where)
    _require(not getattr(layer, "return_fc", False), where, "return_fc")
    _plain_calls(layer, where)
    _parameters(layer, where)
    _children(layer, where, dict(
        self_attn=_self_attention, dropout_module=_dropout, activation_dropout_module=_dropout,
        self_attn_layer_norm=_layer_norm, final_layer_norm=_layer_norm, fc1=_linear,
        fc2=_linear))


# -- whole stacks ----------------------------------------------------------------------------------
DECODER_METHODS = ("forward", "extract_features", "extract_features_scriptable", "output_layer",
                   "max_positions")
ENCODER_METHODS = ("forward", "forward_scriptable", "forward_torchscript", "forward_embedding")


def _decoder(decoder, where: str) -> None:
    from fairseq.models.transformer import TransformerDecoderBase

    _require(decoder is not None, "model", "has no decoder")
    _methods(decoder, TransformerDecoderBase, DECODER_METHODS, where)
    _require(not decoder.cross_self_attention, where, "cross_self_attention")
    _require(len(decoder.layers) > 0, where, "no layers")
    _require(decoder.output_projection is not None or decoder.adaptive_softmax is not None,
             where, "no output projection")
    _plain_calls(decoder, where)
    _parameters(decoder, where)
    _children(decoder, where, dict(
        embed_tokens=_embedding, quant_noise=_linear, project_in_dim=_linear,
        project_out_dim=_linear, embed_positions=_positions, layernorm_embedding=_layer_norm,
        layers=_layer_list(_decoder_layer), layer_norm=_layer_norm, output_projection=_linear,
        adaptive_softmax=_adaptive_softmax, dropout_module=_dropout))


def _called(module, where: str) -> None:
    """A part fairseq's own code calls (the encoder's embeddings and final norm)."""


def _encoder(encoder, where: str) -> None:
    from fairseq.models.transformer import TransformerEncoderBase

    _methods(encoder, TransformerEncoderBase, ENCODER_METHODS, where)
    _plain_calls(encoder, where)
    _parameters(encoder, where)
    _children(encoder, where, dict(
        embed_tokens=_called, embed_positions=_called, layernorm_embedding=_called,
        quant_noise=_called, dropout_module=_called, layer_norm=_called,
        layers=_layer_list(_encoder_layer)))

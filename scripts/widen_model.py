#!/usr/bin/env python3
"""Widen a trained fairseq Transformer F times without changing what it computes.

    python scripts/widen_model.py IN.pt OUT.pt --factor F [--untie] [--data DICT_DIR]

Function-preserving widening (Net2Net, Chen et al. 2016; the width operator of Shen et al. 2022,
"Staged training for transformer language models"): the widened model gives the same tokens and
scores as the original, up to float rounding, at F times the width and about F^2 times the
weights. It turns a small trained model into a realistically sized one for benchmarking without
training it. The demo target (256 dims, FFN 1024, 4 heads) widened x4 has transformer-big's
shape: 1024 dims, FFN 4096, 16 heads of 64.

Construction, with every widened vector laid out as F copies side by side, [x, x, ..., x]:

    residual stream  every hidden unit is duplicated: x (d) -> [x, ..., x] (F d)
    linear layers    W (out, in) -> W tiled F x F, divided by F (each output reads F copies
                     of its inputs, so the sum is unchanged); bias tiled
    attention        heads replicated: F H heads of the same head_dim, so fairseq's scaling
                     head_dim ** -0.5 stays; head j of the widened model is head j mod H of the
                     original; out_proj reads F copies of every head (divided by F)
    FFN              hidden units duplicated the same way (ReLU/GELU act elementwise)
    layer norms      gamma, beta tiled: [x, ..., x] has the mean and the (population) variance
                     of x, and eps is unchanged
    embeddings       columns tiled. embed_scale = sqrt(d) becomes sqrt(F d), so the table is
                     multiplied by sqrt(d) / sqrt(F d) to keep embed_scale * E (with
                     --no-scale-embedding the factor is 1)
    positions        learned: columns tiled. Sinusoidal: fairseq's sinusoids of width F d are
                     different functions, not copies of those of width d, so the model is
                     converted to LEARNED positions (--encoder/decoder-learned-pos) holding
                     the original sinusoid table, tiled; it has max_positions + padding_idx + 1
                     rows, exactly the table fairseq builds, so lengths are limited as before
    output layer     logits = features . W_out: W_out's columns are tiled and divided by F

Tied embeddings (--share-decoder-input-output-embed, --share-all-embeddings): the input side wants
the table times s = sqrt(d) / sqrt(F d) (1 with --no-scale-embedding), the output side wants it
divided by F; one matrix cannot be both. When the decoder's features come out of a layer norm
(pre-norm with the final norm: decoder.layer_norm; post-norm: the last layer's final_layer_norm),
that layer norm feeds nothing but the output projection, so its gamma and beta are multiplied by
1 / (F s) (1/sqrt(F) with embed_scale) and the tied table, scaled for the input side, gives the
original logits. The embeddings then stay tied and the widened checkpoint keeps the original's
flags and layout. Otherwise (or with --untie) the embeddings are untied: --share-all-embeddings
and --share-decoder-input-output-embed are switched off in the widened checkpoint, which stores
separate tensors, and the script says so.

Weights are computed in float64 from the checkpoint's values and stored in float32 (float64
stays float64): 1/F and 1/sqrt(F) are not half-precision numbers for most F. The widened model
still sums F times as many terms in another order, so in float32 its scores differ from the
original's by rounding (~1e-6), and a near-tie between two tokens can rarely go the other way.
The checkpoint keeps the original's config (widths, heads and the flags above updated), drops
optimizer state and loads with stock fairseq-generate and checkpoint_utils. With the
dictionaries at hand (--data, default IN.pt's folder) the script also checks the widened model
against the original: teacher-forced log-probabilities on random sentences.

Not supported (refused with a message): adaptive softmax or input, project_in/out_dim
(decoder_input_dim or decoder_output_dim != decoder_embed_dim), NormFormer's extra norms and
scales, add_bias_kv, quant-noise, and any parameter this script does not know.
"""
import argparse
import math
import os
import re
import sys
from argparse import Namespace
from typing import Dict, List, Tuple

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

Tensor = torch.Tensor

# flags of a flat fairseq Transformer config (fairseq-train's args) multiplied by F
WIDTHS = ["encoder_embed_dim", "decoder_embed_dim", "encoder_ffn_embed_dim",
          "decoder_ffn_embed_dim", "encoder_attention_heads", "decoder_attention_heads",
          "decoder_output_dim", "decoder_input_dim"]

_LINEAR = re.compile(r"^(encoder|decoder)\.layers\.\d+\."
                     r"(self_attn\.(q|k|v|out)_proj|encoder_attn\.(q|k|v|out)_proj|fc1|fc2)"
                     r"\.(weight|bias)$")
_NORM = re.compile(r"^(encoder|decoder)\.(layers\.\d+\.(self_attn_layer_norm"
                   r"|encoder_attn_layer_norm|final_layer_norm)|layer_norm|layernorm_embedding)"
                   r"\.(weight|bias)$")
_PASS = re.compile(r"^(encoder|decoder)\.version$")
_DROP = re.compile(r"^(encoder|decoder)\.embed_positions\.(_float_tensor|weights)$")


class WidenError(ValueError):
    """The model has something this script cannot widen exactly."""


def _get(cfg, name, default=None):
    """A flag from a flat model config (argparse.Namespace, dict or DictConfig)."""
    if isinstance(cfg, Namespace):
        return getattr(cfg, name, default)
    return cfg.get(name, default) if hasattr(cfg, "get") else default


def _set(cfg, name, value):
    if isinstance(cfg, Namespace):
        setattr(cfg, name, value)
    else:
        cfg[name] = value


def _copy_cfg(cfg):
    if isinstance(cfg, Namespace):
        return Namespace(**vars(cfg))
    from omegaconf import OmegaConf

    if OmegaConf.is_config(cfg):
        return OmegaConf.create(OmegaConf.to_container(cfg))
    return dict(cfg)


def check_supported(state: Dict[str, Tensor], cfg) -> None:
    """Raise WidenError naming the first feature the construction does not cover."""
    for flag in ("adaptive_softmax_cutoff", "adaptive_input", "tie_adaptive_weights",
                 "cross_self_attention", "scale_attn", "scale_fc", "scale_heads",
                 "scale_resids"):
        if _get(cfg, flag):
            raise WidenError(f"--{flag.replace('_', '-')} is not supported")
    for flag in ("quant_noise_pq", "quant_noise_scalar"):
        if _get(cfg, flag, 0):
            raise WidenError(f"--{flag.replace('_', '-')} > 0 is not supported")
    for side in ("encoder", "decoder"):
        d = _get(cfg, f"{side}_embed_dim")
        if d is None:
            raise WidenError(f"model config has no {side}_embed_dim (a fairseq Transformer "
                             "with a flat config is expected)")
    d = _get(cfg, "decoder_embed_dim")
    for flag in ("decoder_input_dim", "decoder_output_dim"):
        if _get(cfg, flag, d) != d:
            raise WidenError(f"{flag} != decoder_embed_dim (project_in/out_dim) is not supported")
    if _get(cfg, "encoder_embed_dim") != d and _get(cfg, "share_all_embeddings"):
        raise WidenError("--share-all-embeddings with different encoder/decoder widths")
    for key in state:
        if not (_LINEAR.match(key) or _NORM.match(key) or _PASS.match(key) or _DROP.match(key)
                or key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight",
                           "encoder.embed_positions.weight", "decoder.embed_positions.weight",
                           "decoder.output_projection.weight",
                           "decoder.output_projection.bias")):
            raise WidenError(f"do not know how to widen parameter {key}")


def _tile(t: Tensor, factor: int, dims: Tuple[int, ...]) -> Tensor:
    reps = [1] * t.dim()
    for dim in dims:
        reps[dim] = factor
    return t.repeat(*reps)


def _feature_norm(cfg) -> str:
    """The layer norm whose output is the decoder's features (it feeds only the output
    projection), or '' when there is none."""
    if _get(cfg, "decoder_normalize_before"):
        return "" if _get(cfg, "no_decoder_final_norm") else "decoder.layer_norm"
    last = _get(cfg, "decoder_layers") - 1
    return f"decoder.layers.{last}.final_layer_norm"


def widen_state_dict(state: Dict[str, Tensor], cfg, factor: int, untie: bool = False,
                     padding_idx: int = 1) -> Tuple[Dict[str, Tensor], object, List[str]]:
    """Widen a fairseq Transformer's state dict F times.

    state: the model's state dict (as saved in a checkpoint's "model"); cfg: its flat model
    config (argparse.Namespace, dict or DictConfig: encoder_embed_dim, ...); padding_idx: the
    dictionaries' pad index (positions start after it). Returns (widened state dict, widened
    config (a copy), notes: one line per change to the model's flags). Tied tensors stay one
    tensor under every name unless the embeddings are untied.
    """
    if factor < 1 or int(factor) != factor:
        raise WidenError(f"--factor must be a positive integer (got {factor})")
    check_supported(state, cfg)
    F = int(factor)
    out_dtype = torch.float64 if any(v.dtype == torch.float64 for v in state.values()) \
        else torch.float32
    new_cfg = _copy_cfg(cfg)
    notes: List[str] = []
    for flag in WIDTHS:
        if _get(cfg, flag) is not None:
            _set(new_cfg, flag, F * _get(cfg, flag))

    def wide(t: Tensor, dims, scale: float = 1.0) -> Tensor:
        w = _tile(t.detach().to(torch.float64), F, dims)
        return (w * scale if scale != 1.0 else w).to(out_dtype)

    out: Dict[str, Tensor] = {}
    for key, t in state.items():
        if _PASS.match(key):
            out[key] = t.clone()
        elif _LINEAR.match(key):
            out[key] = wide(t, (0, 1), 1.0 / F) if key.endswith("weight") else wide(t, (0,))
        elif _NORM.match(key):
            out[key] = wide(t, (0,))
        elif key.endswith("embed_positions.weight"):
            out[key] = wide(t, (1,))

    # sinusoidal positions -> learned positions holding the original (tiled) table
    from fairseq.modules.sinusoidal_positional_embedding import SinusoidalPositionalEmbedding

    for side, limit in (("encoder", "max_source_positions"), ("decoder", "max_target_positions")):
        if _get(cfg, "no_token_positional_embeddings") or _get(cfg, f"{side}_learned_pos"):
            continue
        rows = _get(cfg, limit) + padding_idx + 1
        table = SinusoidalPositionalEmbedding.get_embedding(
            rows, _get(cfg, f"{side}_embed_dim"), padding_idx)
        out[f"{side}.embed_positions.weight"] = wide(table, (1,))
        _set(new_cfg, f"{side}_learned_pos", True)
        notes.append(f"{side}: sinusoidal positions -> learned positions holding the original "
                     f"sinusoid table ({rows} rows), tiled")

    # embeddings, output projection, and their ties
    def input_scale(side):
        if _get(cfg, "no_scale_embedding"):
            return 1.0
        d = _get(cfg, f"{side}_embed_dim")
        return math.sqrt(d) / math.sqrt(F * d)

    share_all = bool(_get(cfg, "share_all_embeddings"))
    tied = share_all or bool(_get(cfg, "share_decoder_input_output_embed"))
    encoder_embed = wide(state["encoder.embed_tokens.weight"], (1,), input_scale("encoder"))
    decoder_embed = (encoder_embed if share_all else
                     wide(state["decoder.embed_tokens.weight"], (1,), input_scale("decoder")))
    out["encoder.embed_tokens.weight"] = encoder_embed
    out["decoder.embed_tokens.weight"] = decoder_embed
    proj = state.get("decoder.output_projection.weight", state["decoder.embed_tokens.weight"])
    norm = _feature_norm(cfg)
    if tied and norm and not untie:
        # features . (E tiled * s) = F s (features . E): fold 1 / (F s) into the feature norm
        fold = 1.0 / (F * input_scale("decoder"))
        for part in ("weight", "bias"):
            out[f"{norm}.{part}"] = wide(state[f"{norm}.{part}"], (0,), fold)
        out["decoder.output_projection.weight"] = decoder_embed
        notes.append(f"embeddings stay tied: {norm} scaled by {fold:g} so that the tied table "
                     "gives the original logits")
    else:
        out["decoder.output_projection.weight"] = wide(proj, (1,), 1.0 / F)
        if tied:
            _set(new_cfg, "share_all_embeddings", False)
            _set(new_cfg, "share_decoder_input_output_embed", False)
            if share_all:  # separate tensors for the encoder and decoder tables
                out["decoder.embed_tokens.weight"] = decoder_embed.clone()
            why = "--untie" if untie else "the decoder's features come out of no layer norm"
            notes.append(f"embeddings UNTIED ({why}): share_all_embeddings and "
                         "share_decoder_input_output_embed set to False, separate input tables "
                         "and output projection")
    if "decoder.output_projection.bias" in state:
        out["decoder.output_projection.bias"] = state["decoder.output_projection.bias"].to(
            out_dtype).clone()
    return out, new_cfg, notes


def widen_checkpoint(in_path: str, out_path: str, factor: int, untie: bool = False,
                     padding_idx: int = None) -> List[str]:
    """Write OUT = IN widened F times as a fairseq checkpoint; returns the notes of
    widen_state_dict. The config is the original's (model widths and flags updated); optimizer
    state is dropped, a minimal optimizer_history and extra_state are kept for fairseq's loader.
    """
    import fairseq_fast  # noqa: F401  (adds fairseq's checkpoint types to torch's allowlist)
    from fairseq import checkpoint_utils
    from omegaconf import OmegaConf

    state = checkpoint_utils.load_checkpoint_to_cpu(in_path)
    cfg = state["cfg"]
    if OmegaConf.is_config(cfg):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    if padding_idx is None:
        padding_idx = int(_get(cfg["model"], "pad", 1))
    model, cfg["model"], notes = widen_state_dict(state["model"], cfg["model"], factor, untie,
                                                  padding_idx)
    history = state.get("optimizer_history") or [{}]
    epoch = int((state.get("extra_state") or {}).get("epoch", 1))
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    tmp = out_path + ".tmp"
    torch.save({"cfg": cfg, "model": model, "args": None,
                "optimizer_history": [{"criterion_name": history[-1].get("criterion_name",
                                                                         "CrossEntropyCriterion"),
                                       "optimizer_name": history[-1].get("optimizer_name", "Adam"),
                                       "num_updates": int(history[-1].get("num_updates", 0)),
                                       "lr_scheduler_state": {"best": None}}],
                "extra_state": {"epoch": epoch,
                                "train_iterator": {"epoch": epoch, "iterations_in_epoch": 0}}},
               tmp)
    os.replace(tmp, out_path)  # a half-written file never passes for a finished one
    return notes


def compare(original: str, widened: str, data: str, sentences: int = 4, length: int = 20,
            seed: int = 0) -> float:
    """Largest |difference| of teacher-forced log-probabilities between the two checkpoints on
    `sentences` random source/target pairs (dictionaries read from `data`)."""
    import fairseq_fast  # noqa: F401
    from fairseq import checkpoint_utils

    models = []
    for path in (original, widened):
        ms, _, task = checkpoint_utils.load_model_ensemble_and_task([path],
                                                                    arg_overrides={"data": data})
        models.append(ms[0].float().eval())
    src_dict, tgt_dict = task.source_dictionary, task.target_dictionary
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(src_dict.nspecial, len(src_dict), (sentences, length), generator=g)
    src[:, -1] = src_dict.eos()
    prev = torch.randint(tgt_dict.nspecial, len(tgt_dict), (sentences, length), generator=g)
    prev[:, 0] = tgt_dict.eos()
    lengths = torch.full((sentences,), length)
    with torch.no_grad():
        out = [m.get_normalized_probs(m(src, lengths, prev), log_probs=True) for m in models]
    return float((out[0] - out[1]).abs().max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="fairseq Transformer checkpoint")
    ap.add_argument("output", help="where to write the widened checkpoint")
    ap.add_argument("--factor", type=int, required=True, help="width multiplier F (>= 1)")
    ap.add_argument("--untie", action="store_true",
                    help="untie tied embeddings even where a layer norm could keep them tied")
    ap.add_argument("--padding-idx", type=int, default=None,
                    help="the dictionaries' pad index (default: the config's 'pad', else 1)")
    ap.add_argument("--data", default=None,
                    help="folder with the dictionaries, for the check against the original "
                         "(default: IN.pt's folder when the dictionaries are there)")
    args = ap.parse_args()
    try:
        notes = widen_checkpoint(args.input, args.output, args.factor, args.untie,
                                 args.padding_idx)
    except WidenError as e:
        sys.exit(f"widen_model: {e}")
    size = os.path.getsize(args.output)
    print(f"[widen] {args.input} x{args.factor} -> {args.output} ({size / 2**20:.0f} MiB)")
    for note in notes:
        print(f"[widen] {note}")
    data = args.data or os.path.dirname(os.path.abspath(args.input))
    if any(name.startswith("dict.") for name in os.listdir(data)):
        diff = compare(args.input, args.output, data)
        print(f"[widen] teacher-forced log-probabilities, widened vs original: largest "
              f"difference {diff:.2e}")
    else:
        print(f"[widen] no dictionaries in {data}: not compared with the original (--data)")


if __name__ == "__main__":
    main()

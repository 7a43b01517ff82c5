"""Stage `export`: a trained checkpoint as a half-precision, weights-only file for --draft-path.

Keeps the model config (fairseq needs it to rebuild the model) and the weights in float16; drops
optimizer state, training meters and anything else. A checkpoint trained with the `draft_kd`
criterion gets a plain criterion entry and no user dir, so loading it needs neither. Tied
weights (shared embeddings) stay tied: one tensor per storage.
"""
import os
from typing import Optional

import torch
from omegaconf import OmegaConf


def slim(src: str, dst: str, data: Optional[str] = ".") -> int:
    """Write `src`'s model as `dst`; its task's data folder becomes `data` (where its
    dictionaries are: "." for beside the file). Returns dst's size in bytes."""
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(src)
    cfg = state["cfg"]
    if OmegaConf.is_config(cfg):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    cfg["task"]["data"] = data
    for key in ("checkpoint", "distributed_training", "optimizer", "lr_scheduler"):
        cfg.pop(key, None)
    cfg["common"]["user_dir"] = None
    cfg["criterion"] = {"_name": "label_smoothed_cross_entropy",
                        "label_smoothing": (cfg.get("criterion") or {}).get("label_smoothing",
                                                                            0.0)}
    history = state.get("optimizer_history") or [{}]
    write_half(state["model"], cfg, dst, num_updates=int(history[-1].get("num_updates", 0)),
               epoch=int(state.get("extra_state", {}).get("epoch", 0)))
    return os.path.getsize(dst)


def write_half(weights, cfg, dst: str, num_updates: int = 0, epoch: int = 0) -> None:
    """A fairseq checkpoint of `cfg` and the state dict `weights` at `dst` (whole or not at
    all): floating-point tensors in float16, tensors that share storage (tied embeddings)
    written once, and the minimum of training state fairseq's loader expects."""
    halves = {}
    model = {}
    for k, v in weights.items():
        if v.is_floating_point():
            key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape))
            v = halves.setdefault(key, v.half())
        model[k] = v
    part = dst + ".part"
    torch.save({"cfg": cfg, "model": model, "args": None,
                # the minimum fairseq's checkpoint upgrade code expects; plain numbers only
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                       "optimizer_name": "Adam", "num_updates": num_updates,
                                       "lr_scheduler_state": {"best": None}}],
                "extra_state": {"epoch": epoch,
                                "train_iterator": {"epoch": epoch, "iterations_in_epoch": 0}}},
               part)
    os.replace(part, dst)

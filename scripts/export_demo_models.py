#!/usr/bin/env python3
"""Export trained checkpoints as half-precision, weights-only files for user_dir_examples/.

    python scripts/export_demo_models.py --target work/ckpt/target/checkpoint_best.pt \
        --draft work/ckpt/kd/checkpoint_best.pt --data work/data --out user_dir_examples/bible_es_en

Either may be left out (that file is then not rewritten). Keeps the model config (fairseq needs
it to rebuild the model; a draft trained with scripts/distill_kd gets a plain criterion entry and
no user dir) and the weights in float16; drops optimizer state, training meters and anything
else. Copies the dictionaries, the sentencepiece model and the raw test set beside them.
"""
import argparse
import os
import shutil

import torch
from omegaconf import OmegaConf


def slim(src, dst):
    state = torch.load(src, map_location="cpu", weights_only=False)
    cfg = state["cfg"]
    if OmegaConf.is_config(cfg):
        cfg = OmegaConf.to_container(cfg, resolve=True)
    cfg["task"]["data"] = "."  # dictionaries sit beside the checkpoint
    for key in ("checkpoint", "distributed_training", "optimizer", "lr_scheduler"):
        cfg.pop(key, None)
    # a draft trained with scripts/distill_kd: loading it must not need that user dir
    cfg["common"]["user_dir"] = None
    cfg["criterion"] = {"_name": "label_smoothed_cross_entropy",
                        "label_smoothing": cfg["criterion"].get("label_smoothing", 0.0)}
    halves = {}  # keep tied weights (shared embeddings) tied: one tensor per storage
    model = {}
    for k, v in state["model"].items():
        if v.is_floating_point():
            key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape))
            v = halves.setdefault(key, v.half())
        model[k] = v
    history = state.get("optimizer_history") or [{}]
    num_updates = int(history[-1].get("num_updates", 0))
    epoch = int(state.get("extra_state", {}).get("epoch", 0))
    torch.save({"cfg": cfg, "model": model, "args": None,
                # the minimum fairseq's checkpoint upgrade code expects; plain numbers only
                "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                       "optimizer_name": "Adam", "num_updates": num_updates,
                                       "lr_scheduler_state": {"best": None}}],
                "extra_state": {"epoch": epoch,
                                "train_iterator": {"epoch": epoch, "iterations_in_epoch": 0}}},
               dst)
    return os.path.getsize(dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", help="target checkpoint (left as it is when not given)")
    ap.add_argument("--draft", help="draft checkpoint (left as it is when not given)")
    ap.add_argument("--draft-name", default="draft.pt",
                    help="the draft's file name in --out (draft_big.pt for stage `big`)")
    ap.add_argument("--data", default="work/data", help="prepare_data.py output folder")
    ap.add_argument("--out", default="user_dir_examples/bible_es_en")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for src, name in ((args.target, "target.pt"), (args.draft, args.draft_name)):
        if src:
            total += slim(src, os.path.join(args.out, name))
    copies = [("bin/dict.es.txt", "dict.es.txt"), ("bin/dict.en.txt", "dict.en.txt"),
              ("spm.model", "spm.model"), ("raw/test.es", "test.es"), ("raw/test.en", "test.en"),
              ("raw/test.ref", "test.ref")]
    for src, dst in copies:
        shutil.copy(os.path.join(args.data, src), os.path.join(args.out, dst))
        total += os.path.getsize(os.path.join(args.out, dst))
    print(f"[export] {args.out}: {total / 2**20:.1f} MiB in all")


if __name__ == "__main__":
    main()

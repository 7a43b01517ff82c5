#!/usr/bin/env python3
"""A draft started from the target's own weights: the target with only its first N decoder layers.

    python scripts/draft_from_target.py user_dir_examples/bible_es_en/target.pt \
        work/ckpt/big-init.pt --decoder-layers 2

Encoder, embeddings, output projection and the decoder's final layer norm are kept as they are,
decoder layers N.. are dropped (layer dropping: the kept layers start from weights that already
read the target's representations), in float32. The result is a starting point for distillation
(`--finetune-from-model` in scripts/train_demo_models.sh, stage `big`), not a draft as it is.
"""
import argparse
import copy
import re

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", help="a fairseq Transformer checkpoint")
    ap.add_argument("out")
    ap.add_argument("--decoder-layers", type=int, default=2, help="decoder layers to keep")
    args = ap.parse_args()
    state = torch.load(args.target, map_location="cpu", weights_only=False)
    model_cfg = state["cfg"]["model"]
    have = model_cfg.decoder_layers
    if not 1 <= args.decoder_layers <= have:
        raise SystemExit(f"--decoder-layers must be between 1 and {have} (got "
                         f"{args.decoder_layers})")
    kept = {}
    for name, value in state["model"].items():
        layer = re.match(r"decoder\.layers\.(\d+)\.", name)
        if layer is None or int(layer.group(1)) < args.decoder_layers:
            kept[name] = value.float() if value.is_floating_point() else value
    state = dict(state, model=kept, cfg=copy.deepcopy(state["cfg"]))
    state["cfg"]["model"].decoder_layers = args.decoder_layers
    torch.save(state, args.out)
    print(f"[draft] {args.out}: {args.decoder_layers} of {have} decoder layers, "
          f"{sum(v.numel() for v in kept.values()) / 1e6:.1f}M parameters")


if __name__ == "__main__":
    main()

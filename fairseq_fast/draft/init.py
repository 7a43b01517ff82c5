"""Stage `init`: the draft's starting point, the target with only its first K decoder layers.

Encoder, embeddings, output projection and the decoder's final layer norm are kept as they are;
decoder layers K.. are dropped (layer dropping: the kept layers start from weights that already
read the target's representations, and the dictionaries and embedding space are the target's by
construction). Weights in float32, for training.

With the encoder frozen (the default; `--train-encoder` trains it), a target that shares all its
embeddings gets a draft whose decoder embeddings are a copy of them (the draft's decoder input
and output embeddings stay tied): training changes the decoder's copy, and the encoder keeps the
target's exactly, so the speculative generator can run the encoder once for both models.
"""
import copy
import math
import re

import torch

from fairseq_fast.draft.target import option, set_option


def default_layers(target_layers: int) -> int:
    """K for a target of `target_layers` decoder layers: a quarter of them, rounded up (6 -> 2,
    12 -> 3, 24 -> 6). A draft step then reads about K / target_layers of a target step's layer
    weights, plus the output projection."""
    return max(1, math.ceil(target_layers / 4))


def layer_dropped(state: dict, layers: int, train_encoder: bool) -> dict:
    """The checkpoint state of the draft's starting point (see the module doc)."""
    kept = {}
    for name, value in state["model"].items():
        layer = re.match(r"decoder\.layers\.(\d+)\.", name)
        if layer is None or int(layer.group(1)) < layers:
            kept[name] = value.float() if value.is_floating_point() else value
    cfg = copy.deepcopy(state["cfg"])
    model = cfg["model"] if isinstance(cfg, dict) else cfg.model
    set_option(model, "decoder_layers", layers)
    for name in ("decoder_layers_to_keep", "encoder_layers_to_keep"):
        if option(model, name) is not None:
            set_option(model, name, None)
    if not train_encoder and option(model, "share_all_embeddings"):
        set_option(model, "share_all_embeddings", False)
        set_option(model, "share_decoder_input_output_embed", True)
        # two tensors now, equal at the start: the decoder's is trained, the encoder's is not
        for key in ("decoder.embed_tokens.weight", "decoder.output_projection.weight"):
            if key in kept:
                kept[key] = kept[key].clone()
    return {"cfg": cfg, "model": kept, "args": None,
            "optimizer_history": [{"criterion_name": "CrossEntropyCriterion",
                                   "optimizer_name": "Adam", "num_updates": 0,
                                   "lr_scheduler_state": {"best": None}}],
            "extra_state": {"epoch": 1,
                            "train_iterator": {"epoch": 1, "iterations_in_epoch": 0}}}


def write(state: dict, path: str) -> None:
    torch.save(state, path)

"""Whether a draft's encoder is the target's, so that the speculative loop runs it once for both.

A draft made by `fairseq-fast-draft` keeps the target's encoder, untrained (the distillation
criterion's --teacher-encoder), and is exported in float16. Its encoder is the target's when the
two modules have the same structure (module types in order, and the plain attributes that steer
a forward pass in eval mode: normalize_before, embed_scale, activation_fn, ...; not dropout
rates) and the same weights, the
draft's possibly being the target's rounded to float16.

Sharing changes what the draft computes, never the output: greedy output is the target's
whatever the draft proposes, and rejection sampling uses the draft's distribution as computed
from the encoder output it was given.
"""
import types
from typing import Optional

import torch
from torch import nn

from fairseq_fast.checkpoints import PLACEHOLDERS

_PLAIN = (bool, int, float, str, type(None), types.FunctionType, types.BuiltinFunctionType)
TRAINING_ONLY = ("training", "encoder_layerdrop")


def _attributes(module: nn.Module) -> dict:
    """The public attributes of a module that are plain values (not tensors or submodules),
    but for those that act in training only (dropout rates, layer drop)."""
    from fairseq.modules.fairseq_dropout import FairseqDropout

    plain = {k: v for k, v in vars(module).items()
             if not k.startswith("_") and k not in TRAINING_ONLY and isinstance(v, _PLAIN)}
    if isinstance(module, nn.Dropout) or (isinstance(module, FairseqDropout)
                                          and not module.apply_during_inference):
        plain.pop("p", None)
    return plain


def _same_values(draft: torch.Tensor, target: torch.Tensor) -> bool:
    if draft.shape != target.shape or draft.dtype != target.dtype:
        return False
    if torch.equal(draft, target):
        return True
    return draft.is_floating_point() and torch.equal(
        draft, target.to(torch.float16).to(draft.dtype))


def same_encoder(target: nn.Module, draft: nn.Module) -> bool:
    """True when draft.encoder computes what target.encoder computes (see the module doc)."""
    mine: Optional[nn.Module] = getattr(target, "encoder", None)
    theirs: Optional[nn.Module] = getattr(draft, "encoder", None)
    if mine is None or theirs is None:
        return False
    if mine is theirs:
        return True
    a, b = list(mine.named_modules()), list(theirs.named_modules())
    if len(a) != len(b):
        return False
    for (name_a, mod_a), (name_b, mod_b) in zip(a, b):
        if name_a != name_b or type(mod_a) is not type(mod_b):
            return False
        if _attributes(mod_a) != _attributes(mod_b):
            return False
    ours, others = mine.state_dict(), theirs.state_dict()
    if list(ours) != list(others):
        return False
    return all(_same_values(others[k], ours[k]) for k in ours if not k.endswith(PLACEHOLDERS))

"""What the plugin keeps per model, for as long as the model lives: one ModelRuntime each.

    runtime = ModelRuntime.of(model)       # made on first use, gone with the model

The hub builds a new generator for every translate() call, and fairseq-generate one per run, so
what is worth keeping across generators is kept per model here, not per generator:

    packed          {kernels setting: PackedLinear}   the packed and stacked weights of a decoder
                                                      (and its model's encoder), shared with the
                                                      early-layer drafts made of it
                                                      (kernels/packed_linear.py)
    drafts          {(path, mtime): draft model}      drafts loaded for this target
                                                      (speculative/draft_loading.py)
    shared_encoder  {draft: bool}                     whether a draft's encoder is this
                                                      target's (draft_loading.py)
    draft_lengths   {draft: {key: schedule}}          measured draft-length schedules
                                                      (speculative/draft_length.py)
    layer_views     {K: model}                        the target's first K decoder layers as a
                                                      draft (speculative/self_draft.py)
    copies_source   bool or None                      whether the source shares the target
                                                      dictionary (self_draft.py)

Drafts are held weakly where they are keys (a draft dies with the last generator using it),
and the runtime itself only while its model lives. Not kept here: each generator's decoder
backends (decoding/backends.py), whose scratch buffers and argument structs must not be shared
by generators that run at once (threads calling the hub).
"""
import weakref
from typing import Dict, Optional

from torch import nn

_RUNTIMES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class ModelRuntime:
    __slots__ = ("packed", "drafts", "shared_encoder", "draft_lengths", "layer_views",
                 "copies_source", "__weakref__")

    def __init__(self):
        self.packed: Dict[bool, object] = {}
        self.drafts: Dict[tuple, nn.Module] = {}
        self.shared_encoder: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self.draft_lengths: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self.layer_views: Dict[int, nn.Module] = {}
        self.copies_source: Optional[bool] = None

    @classmethod
    def of(cls, model: nn.Module) -> "ModelRuntime":
        runtime = _RUNTIMES.get(model)
        if runtime is None:
            runtime = _RUNTIMES[model] = cls()
        return runtime

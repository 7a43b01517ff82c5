"""Drafts that need no draft model: the target's own first layers, and what n-gram lookup needs.

    draft = early_layers(target, 3)      # a model whose decoder is the target's first 3 layers
    same_dictionary(target, tgt_dict)    # may a lookup copy from the source?

`early_layers` is self-speculative decoding (Draft & Verify, Zhang et al. 2023; LayerSkip,
Elhoushi et al. 2024): the target's embeddings, its first K decoder layers, its final layer norm
and its output projection, read as a draft model by the speculative loop. It is a view: every
weight is the target's own (no copy, no training), its encoder is the target's (so the loop runs
it once for both, shared_encoder.py), and the target is left as it was. One view per target and
K, kept while the target lives, so the hub's generators (one per translate() call) share it and
the adaptive draft length's measurements.

The verify pass computes every layer again for the window's positions, the first K included,
where LayerSkip reuses the draft's K/V of those layers. What that reuse could save is the first K
layers' work for the positions the draft already computed: the benchmark (scripts/
benchmark_draft_free.py) measures it against a pass, and docs/benchmarks.md says whether it
pays.
"""
import copy

from torch import nn

from fairseq_fast.errors import UserError
from fairseq_fast.kernels import packed_linear
from fairseq_fast.runtime import ModelRuntime



def default_layers(depth: int) -> int:
    """K for a target of `depth` decoder layers: half of them, rounded down, at least 1."""
    return max(depth // 2, 1)


def _shallow(module: nn.Module) -> nn.Module:
    """A copy of `module` that shares its submodules, parameters and buffers; replacing one of
    the copy's submodules leaves `module` as it is."""
    twin = copy.copy(module)
    for registry in ("_modules", "_parameters", "_buffers"):
        setattr(twin, registry, dict(getattr(module, registry)))
    return twin


def early_layers(target: nn.Module, layers: int = 0) -> nn.Module:
    """The target's first `layers` decoder layers as a draft model (0: default_layers)."""
    decoder = getattr(target, "decoder", None)
    depth = len(getattr(decoder, "layers", ()))
    if depth < 2:
        raise UserError(f"--draft-method layers needs a target with at least 2 decoder layers "
                        f"(this one has {depth})")
    k = int(layers) or default_layers(depth)
    if not 1 <= k < depth:
        raise UserError(f"--draft-layers must be between 1 and {depth - 1}, the target's "
                        f"decoder layers but one (got {k})")
    per_target = ModelRuntime.of(target).layer_views
    view = per_target.get(k)
    if view is None:
        view = _shallow(target)
        draft_decoder = _shallow(decoder)
        draft_decoder.layers = nn.ModuleList(list(decoder.layers)[:k])
        if hasattr(draft_decoder, "num_layers"):
            draft_decoder.num_layers = k
        view.decoder = draft_decoder
        packed_linear.share(draft_decoder, decoder)  # the layers' weights packed once
        per_target[k] = view
    return view


def same_dictionary(model: nn.Module, tgt_dict) -> bool:
    """Whether the model's source tokens are the target's (an encoder whose dictionary has the
    target dictionary's symbols), so that an n-gram lookup may copy from the source; checked once
    per model. A decoder-only model: False (its prompt is already the row's own text)."""
    runtime = ModelRuntime.of(model)
    if runtime.copies_source is None:
        encoder = getattr(model, "encoder", None)
        src_dict = getattr(encoder, "dictionary", None)
        runtime.copies_source = src_dict is not None and (src_dict is tgt_dict
                                                          or src_dict.symbols == tgt_dict.symbols)
    return runtime.copies_source

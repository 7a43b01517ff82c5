"""fairseq's SequenceGenerator with the plugin's faster defaults (what `--generator default` runs
once the plugin is loaded; overrides.py's `fast_defaults` entry builds these).

Not a new search: fairseq's own `_generate` loop, search strategies and finalisation run
unchanged, except for plain beam search on the fast cache (below). Six parts are swapped, each
behind its flag:

    --no-fast-cache    FastEnsembleModel (decoding/ensemble.py): lean decoder, in-place K/V cache,
                       encoder K/V once per source, minimal reorders
    --no-fast-prefill  forced prefixes through the decoder in one pass (needs the fast cache)
    --no-fast-linear   the lean decoder on torch's own ops instead of the plugin's kernels:
                       F.linear instead of the small-matrix kernel / oneDNN with packed weights
                       (packed_linear.py), matmul/softmax instead of the attention kernel, and
                       no C layers or CUDA graphs (`kernels`; needs the fast cache)
    --no-fast-ngram    VectorisedNGramBlock: the n-gram rule fairseq's CUDA kernel implements,
                       in torch, on any device (fairseq's CPU path blocks nothing: #5206)
    --no-fast-beam     plain beam search (search.BeamSearch, no prefix / constraints / LM) on
                       the fast cache runs beam_search.py's loop: fairseq's rule, candidates
                       chosen in one pass, attention history gathered per hypothesis, greedy
                       steps looked ahead several at a time (needs the fast cache)
    --no-fast-diverse  PlacedDiverseBeamSearch for --diverse-beam-groups: fairseq's search with
                       each sentence's group overlap found by its place in the batch, not by its
                       dataset id (fairseq's fails on most batches: below)
"""
import copy
import logging
from dataclasses import dataclass

import torch
from fairseq import search
from fairseq.ngram_repeat_block import NGramRepeatBlock
from fairseq.sequence_generator import (EnsembleModel, EnsembleModelWithAlignment,
                                        SequenceGenerator, SequenceGeneratorWithAlignment)
from torch import Tensor, nn

from fairseq_fast.generators import beam_search
from fairseq_fast.errors import RunError
from fairseq_fast.decoding.ensemble import FastEnsembleModel, fast_ensemble
from fairseq_fast.decoding.model_gate import log_once
from fairseq_fast.decoding.ngram_blocker import block_last_ngrams

logger = logging.getLogger("fairseq_fast")


def batch_max_len(src_len: int, min_len: int, max_len_a: float, max_len_b: int,
                  positions: int) -> int:
    """The most tokens a batch with sources of src_len may generate (fairseq's rule). Where that
    leaves no room for min_len, a RunError, not the assertion (a traceback) fairseq raises."""
    max_len = min(int(max_len_a * src_len + max_len_b), positions - 1)
    if min_len > max_len:
        raise RunError(f"--min-len {min_len} is more than the {max_len} tokens this batch allows "
                       f"(--max-len-a {max_len_a} x source length {src_len} + --max-len-b "
                       f"{max_len_b}, at most the model's {positions - 1} positions)")
    return max_len


@dataclass
class FastDefaults:
    cache: bool = True
    prefill: bool = True
    ngram: bool = True
    kernels: bool = True  # the plugin's kernels (--no-fast-linear turns them off)
    beam_loop: bool = True
    diverse: bool = True

    def any(self) -> bool:
        return self.cache or self.ngram or self.diverse


class VectorisedNGramBlock(nn.Module):
    """Drop-in for fairseq's NGramRepeatBlock: same call, the kernel's rule, no host copies."""

    def __init__(self, no_repeat_ngram_size: int):
        super().__init__()
        self.n = no_repeat_ngram_size

    def forward(self, tokens: Tensor, lprobs: Tensor, bsz: int, beam_size: int, step: int):
        return block_last_ngrams(lprobs, tokens[:, : step + 1], self.n)


def retyped_copy(module: nn.Module, cls: type) -> nn.Module:
    """A shallow copy of `module` as a `cls`: its attributes, parameters and submodules shared,
    its registries its own, so that setting one on the copy leaves `module` as it was."""
    twin = copy.copy(module)
    for registry in ("_modules", "_parameters", "_buffers"):  # shared by a shallow copy
        setattr(twin, registry, dict(getattr(module, registry)))
    twin.__class__ = cls
    return twin


class PlacedDiverseBeamSearch(search.DiverseBeamSearch):
    """fairseq's DiverseBeamSearch (--diverse-beam-groups), its overlap rows found by place.

    fairseq's keeps each sentence's group overlap in a row of a tensor of the batch's size, but
    reads and writes that row at `original_batch_idxs`, which its generator fills with the
    sample's ids: dataset indices. A batch whose ids are not 0 .. bsz-1 (every batch of
    fairseq-generate but the first, and most first ones: batches are ordered by length) fails
    with an IndexError, and one whose ids are those numbers in another order reads other
    sentences' overlaps. Here each id is mapped to the place its sentence had in the batch at
    step 0, the index fairseq's generator gives a sample without ids; so this searches as
    fairseq's does wherever the ids are 0 .. bsz-1 in order, and a sentence's hypotheses no
    longer depend on its id."""

    @classmethod
    def of(cls, stock: search.DiverseBeamSearch) -> "PlacedDiverseBeamSearch":
        """A copy of `stock` (its settings and submodules shared) that searches this way."""
        placed = retyped_copy(stock, cls)
        placed.batch_ids = None
        return placed

    def step(self, step: int, lprobs, scores, prev_output_tokens=None,
             original_batch_idxs=None):
        if original_batch_idxs is not None:
            if step == 0:  # a new batch: its ids sorted, and the place of each
                self.batch_ids = original_batch_idxs.sort()
            ids, places = self.batch_ids
            original_batch_idxs = places[torch.searchsorted(ids, original_batch_idxs)]
        return super().step(step, lprobs, scores, prev_output_tokens, original_batch_idxs)

    def stock(self) -> search.DiverseBeamSearch:
        """fairseq's own search with the same settings (what TorchScript compiles)."""
        plain = retyped_copy(self, search.DiverseBeamSearch)
        del plain.batch_ids
        return plain


class _FastMixin:
    def _accelerate(self, fast: FastDefaults, with_alignment: bool) -> None:
        self.fast = fast
        if fast.cache:
            model = fast_ensemble(self.model.models, fast.prefill, with_alignment, fast.kernels)
            if model is not None:
                model.set_decoder_beam_size(self.beam_size)
                model.eval()
                self.model = model
        if fast.ngram and self.repeat_ngram_blocker is not None:
            self.repeat_ngram_blocker = VectorisedNGramBlock(
                self.repeat_ngram_blocker.no_repeat_ngram_size)
        if fast.diverse and type(self.search) is search.DiverseBeamSearch:
            self.search = PlacedDiverseBeamSearch.of(self.search)
        lean = isinstance(self.model, FastEnsembleModel)
        linears = self.model.backends[0].lean.linear.backends if lean else ""
        param = next(self.model.models[0].parameters(), None) if lean else None
        if param is not None and (param.device.type != "cpu" or param.dtype != torch.float32):
            linears = ""  # the kernels and oneDNN serve float32 on CPU only: torch's ops here
        backend = self.model.backends[0].name if lean else ""
        on = [name for name, active in (
            (f"fast cache ({backend} decoder)", lean),
            ("prefill", lean and self.model.prefill),
            (f"packed linears ({linears})", bool(linears)),
            ("own beam-search loop", lean and fast.beam_loop),
            ("vectorised n-gram blocker", isinstance(self.repeat_ngram_blocker,
                                                     VectorisedNGramBlock)),
            ("diverse beam search by place", isinstance(self.search, PlacedDiverseBeamSearch)))
              if active]
        logger.info(f"fairseq_fast: {type(self).__name__} with " + (", ".join(on) or "nothing"))

    def __prepare_scriptable__(self):
        """What torch.jit.script compiles in place of this generator: fairseq's own generator with
        the same settings, on fairseq's ensemble and n-gram blocker (ours run Python and C that
        TorchScript cannot compile), and fairseq's own diverse beam search. This generator is
        left as it was."""
        log_once("torch.jit.script", "fairseq_fast: torch.jit.script compiles fairseq's own "
                                     "SequenceGenerator (the plugin's fast paths are not "
                                     "TorchScript)")
        with_alignment = isinstance(self, SequenceGeneratorWithAlignment)
        stock = retyped_copy(self, SequenceGeneratorWithAlignment if with_alignment
                             else SequenceGenerator)
        del stock.fast
        models = self.model.models
        stock.model = (EnsembleModelWithAlignment if with_alignment else EnsembleModel)(models)
        stock.model.eval()
        if isinstance(self.repeat_ngram_blocker, VectorisedNGramBlock):
            stock.repeat_ngram_blocker = NGramRepeatBlock(self.repeat_ngram_blocker.n)
        if isinstance(self.search, PlacedDiverseBeamSearch):
            stock.search = self.search.stock()
        return stock

    def _set_prefix(self, prefix_tokens):
        if isinstance(self.model, FastEnsembleModel):
            self.model.begin_batch(prefix=prefix_tokens)

    def _check_lengths(self, sample):
        """fairseq asserts `min_len <= max_len` (a traceback) where the lengths leave no room."""
        net_input = sample["net_input"]
        source = next((net_input[k] for k in ("src_tokens", "source", "features")
                       if k in net_input), None)
        if self.match_source_len or source is None:
            return
        batch_max_len(source.size(1), self.min_len, self.max_len_a, self.max_len_b, self.max_len)

    @torch.no_grad()
    def generate(self, models, sample, **kwargs):
        self._set_prefix(kwargs.get("prefix_tokens"))
        try:
            return super().generate(models, sample, **kwargs)
        finally:
            self._set_prefix(None)

    def _generate(self, sample, prefix_tokens=None, constraints=None, bos_token=None):
        self._set_prefix(prefix_tokens)
        self._check_lengths(sample)
        if self.fast.beam_loop and beam_search.usable(self, sample, prefix_tokens, constraints):
            return beam_search.generate(self, sample, bos_token, prefix_tokens)
        return super()._generate(sample, prefix_tokens=prefix_tokens, constraints=constraints,
                                 bos_token=bos_token)


class FastSequenceGenerator(_FastMixin, SequenceGenerator):
    def __init__(self, models, tgt_dict, fast: FastDefaults = FastDefaults(), **kwargs):
        super().__init__(models, tgt_dict, **kwargs)
        self._accelerate(fast, with_alignment=False)


class FastSequenceGeneratorWithAlignment(_FastMixin, SequenceGeneratorWithAlignment):
    def __init__(self, models, tgt_dict, fast: FastDefaults = FastDefaults(), **kwargs):
        super().__init__(models, tgt_dict, **kwargs)
        self._accelerate(fast, with_alignment=True)

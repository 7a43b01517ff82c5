"""The target as the draft tool sees it: what kind of model it is, its task on the user's
data-bin, and greedy generation with the plugin's generators.

A target is a fairseq Transformer (task `translation`) or Transformer language model (task
`language_modeling`). A language model's "sources" are prompts: the first tokens of a line of
its data (at most PROMPT_TOKENS, half the line at most), continued by NEW_TOKENS tokens.
"""
import os
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

import torch
from omegaconf import OmegaConf, open_dict

from fairseq_fast.errors import UserError

TRANSLATION, LANGUAGE_MODEL = "translation", "language_modeling"
PROMPT_TOKENS = 32
MIN_PROMPT_TOKENS = 4
NEW_TOKENS = 64


def model_config(state: dict):
    """The model config of a checkpoint's state (a Namespace for legacy architectures)."""
    cfg = state.get("cfg")
    model = cfg.get("model") if isinstance(cfg, dict) else getattr(cfg, "model", None)
    if model is None and state.get("args") is not None:
        model = state["args"]
    return model


def option(config, name, default=None):
    """A value of a model or task config, whatever its container (Namespace, dict, DictConfig)."""
    if isinstance(config, dict):
        return config.get(name, default)
    return getattr(config, name, default)


def set_option(config, name, value) -> None:
    if isinstance(config, dict):
        config[name] = value
    elif OmegaConf.is_config(config):
        with open_dict(config):
            config[name] = value
    else:
        setattr(config, name, value)


@dataclass
class TargetInfo:
    """What the tool needs to know about the target before loading it."""
    path: str
    kind: str  # TRANSLATION or LANGUAGE_MODEL
    arch: str
    decoder_layers: int
    source_lang: Optional[str]
    target_lang: Optional[str]
    parameters: int
    share_all_embeddings: bool


def inspect(path: str, state: dict) -> TargetInfo:
    """The target's kind and shape from its checkpoint; a UserError for anything else than a
    fairseq Transformer or Transformer language model."""
    from fairseq.models import ARCH_MODEL_REGISTRY
    from fairseq.models.transformer import TransformerModelBase
    from fairseq.models.transformer_lm import TransformerLanguageModel

    model_cfg = model_config(state)
    cfg = state.get("cfg") or {}
    task_cfg = cfg.get("task") if isinstance(cfg, dict) else getattr(cfg, "task", None)
    if model_cfg is None or task_cfg is None or not isinstance(state.get("model"), dict):
        raise UserError(f"{path} is not a fairseq checkpoint (no model config or weights)")
    arch = option(model_cfg, "arch") or option(model_cfg, "_name")
    cls = ARCH_MODEL_REGISTRY.get(arch)
    task = option(task_cfg, "_name") or option(task_cfg, "task")
    if cls is not None and issubclass(cls, TransformerModelBase) and task == TRANSLATION:
        kind = TRANSLATION
    elif cls is not None and issubclass(cls, TransformerLanguageModel) and \
            task == LANGUAGE_MODEL:
        kind = LANGUAGE_MODEL
    else:
        raise UserError(
            f"--target {path}: a {arch} model for task {task}; fairseq-fast-draft takes a "
            f"fairseq Transformer (task {TRANSLATION}) or Transformer language model (task "
            f"{LANGUAGE_MODEL})")
    layers = option(model_cfg, "decoder_layers")
    if layers is None:  # a dataclass config nests it
        layers = option(option(model_cfg, "decoder", {}), "layers")
    weights = state["model"]
    return TargetInfo(
        path=path, kind=kind, arch=arch, decoder_layers=int(layers),
        source_lang=option(task_cfg, "source_lang"), target_lang=option(task_cfg, "target_lang"),
        parameters=parameters(weights),
        share_all_embeddings=bool(option(model_cfg, "share_all_embeddings", False)))


def parameters(weights: dict) -> int:
    """Parameters in a state dict, tied weights (one storage) counted once."""
    seen = {}
    for value in weights.values():
        if torch.is_tensor(value) and value.is_floating_point():
            seen[(value.untyped_storage().data_ptr(), value.storage_offset())] = value.numel()
    return sum(seen.values())


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load(path: str, data: str, info: TargetInfo):
    """(model, task) of the target on the user's data-bin; the model in eval mode on the tool's
    device (float32 on a CPU, float16 on a GPU)."""
    from fairseq import checkpoint_utils

    overrides = {"data": data}
    if info.kind == TRANSLATION:
        overrides.update(source_lang=info.source_lang, target_lang=info.target_lang)
    (model,), _, task = checkpoint_utils.load_model_ensemble_and_task(
        [path], arg_overrides=overrides)
    where = device()
    model = model.to(where).eval()
    model = model.half() if where.type == "cuda" else model.float()
    return model, task


def generation_args(info: TargetInfo, **ours):
    """A generation config for task.build_generator: greedy, stock's length limits (a language
    model: NEW_TOKENS after its prompt), and the plugin's options `ours` (generator=...)."""
    from fairseq.dataclass.configs import GenerationConfig

    args = OmegaConf.structured(GenerationConfig)
    with open_dict(args):
        args.beam = 1
        if info.kind == LANGUAGE_MODEL:
            args.max_len_a, args.max_len_b = 0, PROMPT_TOKENS + NEW_TOKENS
        for key, value in ours.items():
            args[key] = value
    return args


@dataclass
class Source:
    """One input of generation: a translation's source sentence or a language model's prompt."""
    id: int
    tokens: torch.Tensor  # as the data-bin stores them (EOS at the end of a source)


def indexed(task, data: str, info: TargetInfo, split: str):
    """The source side of a split (a language model's lines), as fairseq-preprocess wrote it."""
    from fairseq.data import data_utils

    prefix = split_prefixes(data, info, split)[0]
    dataset = data_utils.load_indexed_dataset(prefix, task.source_dictionary)
    if dataset is None:
        raise UserError(f"--data {data}: no {split} split ({prefix}.bin / .idx)")
    return dataset


def sources(dataset, info: TargetInfo, ids, max_positions: Optional[int] = None
            ) -> List[Source]:
    """The inputs of these ids of a split (indexed()), in that order; sources longer than
    max_positions and lines too short to prompt are left out."""
    out = []
    for i in ids:
        tokens = dataset[int(i)]
        if info.kind == TRANSLATION:
            if max_positions is not None and tokens.numel() > max_positions:
                continue
        else:
            length = min(PROMPT_TOKENS, (tokens.numel() - 1) // 2)
            if length < MIN_PROMPT_TOKENS:
                continue
            tokens = tokens[:length]
        out.append(Source(int(i), tokens))
    return out


def batches(items: List[Source], max_tokens: int, max_sentences: int,
            info: TargetInfo) -> Iterator[List[Source]]:
    """Batches of similar lengths (a language model's: of equal prompt lengths)."""
    order = sorted(items, key=lambda s: s.tokens.numel())
    batch: List[Source] = []
    for item in order:
        longest = item.tokens.numel()  # in ascending order
        full = batch and (len(batch) >= max_sentences or longest * (len(batch) + 1) > max_tokens
                          or (info.kind == LANGUAGE_MODEL
                              and item.tokens.numel() != batch[0].tokens.numel()))
        if full:
            yield batch
            batch = []
        batch.append(item)
    if batch:
        yield batch


def generate(task, generator, model, batch: List[Source], info: TargetInfo) -> Dict[int, torch.Tensor]:
    """Greedy output for each input of the batch: {id: tokens}, EOS last (a language model's
    output includes its prompt)."""
    from fairseq.data import data_utils

    left_pad = info.kind == TRANSLATION and getattr(task.cfg, "left_pad_source", True)
    where = next(model.parameters()).device
    tokens = data_utils.collate_tokens([s.tokens for s in batch], task.source_dictionary.pad(),
                                       left_pad=left_pad).to(where)
    lengths = torch.tensor([s.tokens.numel() for s in batch], device=where)
    sample = {"id": torch.tensor([s.id for s in batch]),
              "net_input": {"src_tokens": tokens, "src_lengths": lengths}}
    # a language model's task passes the prompts as the prefix, after its BOS
    prefix = tokens if info.kind == LANGUAGE_MODEL else None
    hypos = task.inference_step(generator, [model], sample, prefix_tokens=prefix)
    return {s.id: h[0]["tokens"].cpu() for s, h in zip(batch, hypos)}


def dictionary_files(data: str, info: TargetInfo) -> List[str]:
    """The dictionary files a data-bin holds for the target's task."""
    if info.kind == TRANSLATION:
        return [os.path.join(data, f"dict.{lang}.txt")
                for lang in (info.source_lang, info.target_lang)]
    return [os.path.join(data, "dict.txt")]


def split_prefixes(data: str, info: TargetInfo, split: str) -> List[str]:
    """The indexed-dataset prefixes of a split in a data-bin."""
    if info.kind == TRANSLATION:
        pair = f"{info.source_lang}-{info.target_lang}"
        return [os.path.join(data, f"{split}.{pair}.{lang}")
                for lang in (info.source_lang, info.target_lang)]
    return [os.path.join(data, split)]

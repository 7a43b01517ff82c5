"""Load a draft checkpoint for a target model: once, checked, and following the target.

The draft is built with the target's task, so it reads the same dictionaries. It must have been
trained with them: if a dictionary file stands beside the draft (or in the data folder its
checkpoint names), its symbols must equal the target's; the embedding sizes must match in any case.
Loaded drafts are cached per target model and path, and moved to the target's device and dtype
whenever a generator is built (so hub.cuda() / hub.half() carry the draft along), and so is
whether a draft's encoder is the target's (shares_encoder).
"""
import logging
import os
import re
from typing import Optional

import torch

from fairseq_fast.checkpoints import (MalformedCheckpoint, UnreadableCheckpoint, model_class,
                                      state_dict_mismatch)
from fairseq_fast.errors import UserError
from fairseq_fast.runtime import ModelRuntime
from fairseq_fast.speculative.shared_encoder import same_encoder

logger = logging.getLogger(__name__)
loads = 0  # how many drafts were read from disk (tests check reuse)


def dictionary_file(checkpoint: str, data, names) -> Optional[str]:
    """The first of the file `names` beside a checkpoint, or in the data folder its config
    names (`data`: as training named it, from where it ran or from the checkpoint's folder)."""
    beside = os.path.dirname(os.path.abspath(checkpoint))
    dirs = [beside]
    if data:
        data = str(data).split(":")[0]
        dirs += [data, os.path.join(beside, data)]
    for d in dirs:
        for name in names:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return path
    return None


def first_difference(theirs, ours) -> Optional[int]:
    """Index of the first symbol where two fairseq Dictionaries differ; None if they are equal."""
    if theirs.symbols == ours.symbols:
        return None
    return next((i for i, (a, b) in enumerate(zip(theirs.symbols, ours.symbols)) if a != b),
                min(len(theirs), len(ours)))


def _check_dictionary(task, draft_path, draft_cfg):
    from fairseq.data import Dictionary

    lang = getattr(getattr(task, "cfg", None), "target_lang", None) or getattr(
        getattr(task, "args", None), "target_lang", None)
    names = ([f"dict.{lang}.txt"] if lang else []) + ["dict.txt"]
    path = dictionary_file(draft_path, getattr(getattr(draft_cfg, "task", None), "data", None),
                           names)
    if path is None:
        logger.warning("no dictionary file found beside draft %s; checking sizes only", draft_path)
        return
    theirs = Dictionary.load(path)
    if getattr(task, "data_manager", None) is not None and hasattr(task, "langs"):
        # the multilingual task appends its language tokens to the file's symbols
        from fairseq.data.multilingual.multilingual_utils import augment_dictionary

        augment_dictionary(dictionary=theirs, language_list=task.langs,
                           lang_tok_style=task.args.lang_tok_style,
                           langtoks_specs=task.args.langtoks_specs,
                           extra_data=task.args.extra_data)
    ours = task.target_dictionary
    diff = first_difference(theirs, ours)
    if diff is not None:
        raise UserError(
            f"draft {draft_path} uses a different target dictionary ({path}: {len(theirs)} "
            f"symbols) than the target model ({len(ours)} symbols); first difference at index "
            f"{diff}")


def _embeddings_only(error: str) -> bool:
    """Whether a load_state_dict error is only other sizes of the embeddings and output
    projection: the draft was trained with other dictionaries."""
    sizes = re.findall(r"size mismatch for ([^:\s]+):", error)
    return (0 < len(sizes) == error.count("\n\t")  # torch puts each problem on a line
            and all("embed_tokens" in name or "output_projection" in name for name in sizes))


def load_draft(task, draft_path: str, target_model: torch.nn.Module) -> torch.nn.Module:
    global loads
    from fairseq import checkpoint_utils

    key = (os.path.abspath(draft_path), os.path.getmtime(draft_path))
    per_target = ModelRuntime.of(target_model).drafts
    draft = per_target.get(key)
    if draft is None:
        try:
            state = checkpoint_utils.load_checkpoint_to_cpu(draft_path)
        except UnreadableCheckpoint as e:
            raise UserError(f"cannot read draft checkpoint {draft_path}: {e.reason}") from None
        except MalformedCheckpoint as e:
            raise UserError(f"draft checkpoint {draft_path} is not a fairseq checkpoint: "
                            f"{e.reason}") from None
        except UserError:
            raise
        except Exception as e:
            raise UserError(f"cannot read draft checkpoint {draft_path}: "
                            f"{type(e).__name__}: {str(e).splitlines()[0]}") from None
        cfg = state.get("cfg")
        if cfg is None:
            raise UserError(f"{draft_path} is not a fairseq checkpoint (no 'cfg')")
        _check_dictionary(task, draft_path, cfg)
        try:
            draft = task.build_model(cfg.model, from_checkpoint=True)
            draft.load_state_dict(state["model"], strict=True, model_cfg=cfg.model)
        except RuntimeError as e:
            mismatch = state_dict_mismatch(e)
            if mismatch is None:
                raise
            if _embeddings_only(str(e)):
                raise UserError(
                    f"draft {draft_path} does not fit the target's dictionaries (embedding sizes "
                    f"differ: {len(task.target_dictionary)} target symbols)") from None
            raise UserError(f"draft {draft_path} does not fit the {model_class(e)} its "
                            f"configuration builds: {mismatch}") from None
        draft.eval()
        per_target[key] = draft
        loads += 1
    param = next(target_model.parameters())
    return draft.to(device=param.device, dtype=param.dtype)


def shares_encoder(target_model: torch.nn.Module, draft: torch.nn.Module) -> bool:
    """Whether the draft's encoder is the target's (shared_encoder.same_encoder), checked once
    per pair of models: the hub builds a generator for every call."""
    verdicts = ModelRuntime.of(target_model).shared_encoder
    if draft not in verdicts:
        verdicts[draft] = same_encoder(target_model, draft)
    return verdicts[draft]

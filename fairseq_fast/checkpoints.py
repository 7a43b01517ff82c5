"""Loading fairseq checkpoints on torch >= 2.6 without unpickling arbitrary objects.

torch.load now defaults to weights_only=True, which rejects the argparse.Namespace and OmegaConf
objects that fairseq 0.12 checkpoints contain. Instead of switching the safety off
(TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1), the plugin adds exactly the types fairseq checkpoints are
made of to torch's weights-only allowlist, while it loads a checkpoint and no longer: the host
program's own torch.load keeps torch's allowlist. A checkpoint that needs anything else fails
with one line naming the type; a user who trusts the file opts in with
FAIRSEQ_FAST_TRUST_CHECKPOINTS=1.
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, torch's own switch (stock fairseq needs it), does not turn
the guard off: it is warned about once and ignored while the plugin loads a checkpoint.

A file torch cannot read (truncated, corrupted, not a checkpoint), a checkpoint whose floating
point values include NaN or infinity (its bytes overwritten: every output would be garbage, or
generation would fail at the length limit) and a file torch reads that is not a fairseq
checkpoint (not a dict, no 'model' of tensors, no 'cfg' or 'args', no training record for
fairseq's upgrade code) are one-line errors naming the file, not tracebacks. So are weights
that do not fit the model the checkpoint's configuration builds (missing, unexpected or
other-sized parameters; guarded_ensemble).
"""
import argparse
import collections
import collections.abc
import os
import pickle
import re
import sys
import typing
from contextlib import contextmanager

import torch

from fairseq_fast.errors import UserError, existing_file

TRUST_ENV = "FAIRSEQ_FAST_TRUST_CHECKPOINTS"
TORCH_ENV = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"
_warned = []


def safe_types() -> list:
    import numpy
    import omegaconf
    from omegaconf import base, dictconfig, listconfig, nodes

    types = [argparse.Namespace, collections.OrderedDict, collections.defaultdict, typing.Any,
             dict, list, set, tuple, int, float, bool, str,
             dictconfig.DictConfig, listconfig.ListConfig, base.ContainerMetadata, base.Metadata,
             omegaconf.nodes.AnyNode, nodes.StringNode, nodes.IntegerNode, nodes.FloatNode,
             nodes.BooleanNode, nodes.EnumNode, nodes.ValueNode,
             # numbers fairseq-train stores in extra_state (best loss, meters)
             numpy.dtype, numpy.core.multiarray.scalar, numpy.ndarray,
             numpy.core.multiarray._reconstruct]
    types += [type(numpy.dtype(t)) for t in ("float64", "float32", "int64", "int32", "bool")]
    return types


@contextmanager
def fairseq_types_allowed():
    """torch's weights-only allowlist widened by safe_types() for the duration of one load: the
    types it did not hold already are taken out again afterwards, so the allowlist is the one
    the host program set, before and after."""
    held = torch.serialization.get_safe_globals()
    with torch.serialization.safe_globals([t for t in safe_types() if t not in held]):
        yield


@contextmanager
def _plugin_loading():
    """How the plugin reads a checkpoint: fully unpickled where the user trusts checkpoints,
    else weights-only (whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says) with fairseq's types
    allowed."""
    with _torch_env("1") if trusted() else _weights_only(), fairseq_types_allowed():
        yield


def checkpoint_file(flag, path) -> None:
    """The checkpoint file a flag (--path, --draft-path) names exists and is not a folder."""
    existing_file(flag, path, "a checkpoint file")


def trusted() -> bool:
    return os.environ.get(TRUST_ENV, "0").lower() in ("1", "true", "yes")


@contextmanager
def _torch_env(value):
    """TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD set to `value` (None: unset) for one load."""
    old = os.environ.get(TORCH_ENV)
    if value is None:
        os.environ.pop(TORCH_ENV, None)
    else:
        os.environ[TORCH_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(TORCH_ENV, None)
        else:
            os.environ[TORCH_ENV] = old


def _truthy(value) -> bool:
    return (value or "0").lower() in ("1", "y", "yes", "true")  # as torch reads its switches


def _weights_only():
    """Weights-only loading, whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says (warned once)."""
    if _truthy(os.environ.get(TORCH_ENV)) and not _warned:
        _warned.append(True)
        sys.stderr.write(f"fairseq_fast: warning: {TORCH_ENV} is set; the plugin ignores it "
                         f"and loads checkpoints weights-only (set {TRUST_ENV}=1 to unpickle "
                         f"files you trust)\n")
        sys.stderr.flush()
    return _torch_env(None)


class UnreadableCheckpoint(UserError):
    """torch cannot read the file; `reason` says why."""

    def __init__(self, path, reason):
        super().__init__(f"cannot read checkpoint {path}: {reason}")
        self.reason = reason


def _read_error(path, e) -> UnreadableCheckpoint:
    first = (str(e).strip().splitlines() or [""])[0].split(". ")[0]
    return UnreadableCheckpoint(path, f"{type(e).__name__}: {first} (the file is truncated, "
                                      f"corrupted or not a checkpoint)")


def _raised_by_torch_load(e) -> bool:
    tb = e.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename.replace(os.sep, "/")
        if name.endswith(("torch/serialization.py", "torch/_weights_only_unpickler.py")):
            return True
        tb = tb.tb_next
    return False


class MalformedCheckpoint(UserError):
    """torch reads the file, but it is not a fairseq checkpoint; `reason` says why."""

    def __init__(self, path, reason):
        super().__init__(f"checkpoint {path} is not a fairseq checkpoint: {reason}")
        self.reason = reason


def _few(names, n=3) -> str:
    names = [str(name) for name in names]
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def structure_problem(state) -> typing.Optional[str]:
    """What keeps `state`, as torch.load or fairseq's load_checkpoint_to_cpu returns it, from
    being a checkpoint fairseq can build a model from: a dict whose 'model' maps parameter names
    to tensors, with 'args' or a 'cfg' that has 'model' and 'task' sections. None if nothing
    does."""
    if not isinstance(state, dict):
        return f"it holds a {type(state).__name__}, not a dict"
    if not state:
        return "it is an empty dict"
    if "model" not in state:
        return f"it has no 'model' (the weights); its keys are {_few(state, 8)}"
    model = state["model"]
    if not isinstance(model, dict):
        return f"its 'model' is a {type(model).__name__}, not a dict of tensors"
    if not model:
        return "its 'model' is empty"
    odd = [name for name, value in model.items() if not isinstance(value, torch.Tensor)
           and not str(name).endswith("_extra_state")]  # a module's get_extra_state(): any type
    if odd:
        return (f"its 'model' holds {type(model[odd[0]]).__name__} where tensors belong: "
                f"{_few(odd)}")
    args, cfg = state.get("args"), state.get("cfg")
    if args is not None:
        if not isinstance(args, argparse.Namespace):
            return f"its 'args' is a {type(args).__name__}, not an argparse.Namespace"
        return None
    if cfg is None:
        return "it has neither 'cfg' nor 'args' (the model's configuration)"
    if not isinstance(cfg, collections.abc.Mapping):
        return f"its 'cfg' is a {type(cfg).__name__}, not a configuration"
    if cfg.get("model") is None:
        return "its 'cfg' has no 'model' section (the architecture)"
    if cfg.get("task") is None:
        return "its 'cfg' has no 'task' section (the data the model reads)"
    return None


def _bookkeeping_problem(state) -> typing.Optional[str]:
    """What fairseq's checkpoint upgrade (_upgrade_state_dict) reads beside the model and
    `state` lacks: the training history every checkpoint fairseq-train writes has."""
    history = state.get("optimizer_history")
    if history is None:
        if "optimizer" not in state or "best_loss" not in state:
            return ("it has no 'optimizer_history' (the training record fairseq-train "
                    "writes, which fairseq's checkpoint upgrade reads)")
    elif not (isinstance(history, list) and history
              and all(isinstance(entry, dict) for entry in history)):
        return "its 'optimizer_history' is not a list of dicts"
    if not isinstance(state.get("extra_state"), dict) and "epoch" not in state:
        return ("it has no 'extra_state' (the training record fairseq-train writes, which "
                "fairseq's checkpoint upgrade reads)")
    return None


def _malformed(path) -> typing.Optional[str]:
    """After fairseq failed to make sense of the file torch read: what, in the file as torch
    reads it, is not a fairseq checkpoint (None if that is not why)."""
    try:
        from fairseq.file_io import PathManager

        with _plugin_loading(), open(PathManager.get_local_path(path), "rb") as f:
            state = torch.load(f, map_location=torch.device("cpu"))
    except Exception:  # noqa: BLE001 (the caller re-raises fairseq's own error)
        return None
    return structure_problem(state) or (
        _bookkeeping_problem(state) if isinstance(state, dict) else None)


def state_dict_mismatch(error) -> typing.Optional[str]:
    """torch's load_state_dict error ("Error(s) in loading state_dict for ...") in a few words:
    the first missing, unexpected and other-sized parameters. None for any other error."""
    text = str(error)
    if not text.startswith("Error(s) in loading state_dict for"):
        return None
    parts = []
    for label, heading in (("missing", "Missing key(s) in state_dict: "),
                           ("unexpected", "Unexpected key(s) in state_dict: ")):
        found = re.search(re.escape(heading) + r"(.*)", text)
        if found:
            names = re.findall(r'"([^"]+)"', found.group(1))
            parts.append(f"{label} {_few(names)}")
    sizes = re.findall(r"size mismatch for ([^:\s]+): copying a param with shape "
                       r"torch\.Size\((\[[^\]]*\])\) from checkpoint, the shape in current "
                       r"model is torch\.Size\((\[[^\]]*\])\)", text)
    if sizes:
        parts.append("other sizes " + _few(f"{name} {theirs} (the model's {ours})"
                                           for name, theirs, ours in sizes))
    if not parts:
        parts.append(text.splitlines()[1].strip()[:200] if "\n" in text else text[:200])
    return "; ".join(parts)


def model_class(error) -> str:
    """The model class a load_state_dict error names."""
    found = re.match(r"Error\(s\) in loading state_dict for (\w+)", str(error))
    return found.group(1) if found else "model"


# fairseq's placeholder buffers (AdaptiveInput, AdaptiveSoftmax, old sinusoidal positions):
# torch.FloatTensor(1), saved uninitialised and only ever read for its dtype and device, so it
# may hold NaN in a sound checkpoint
PLACEHOLDERS = ("._float_tensor",)


# elements a step of all_finite reads: its scratch stays in cache, and the steps are few (each
# op over a chunk is a parallel region, whose threads wait for each other: on a busy machine,
# many small regions cost far more than their arithmetic)
FINITE_CHUNK = 1 << 18


def all_finite(value: torch.Tensor) -> bool:
    """Whether a floating-point tensor holds no NaN or infinity: the largest magnitude of each
    chunk is finite (a NaN makes the maximum NaN). Chunk by chunk, so that no scratch the size
    of the tensor is allocated (on the CPU, torch.isfinite over a half-precision tensor is a
    slow path, and a fresh tensor-sized scratch costs a page fault per page)."""
    flat = value.detach().reshape(-1)
    return all(bool(torch.isfinite(flat[i:i + FINITE_CHUNK].abs().amax()))
               for i in range(0, flat.numel(), FINITE_CHUNK))


def check_finite(path, state) -> None:
    """Refuse a checkpoint whose model weights hold NaN or infinity (fairseq's uninitialised
    placeholder buffers aside)."""
    model = state.get("model") if isinstance(state, dict) else None
    if not isinstance(model, dict):
        return
    for name, value in model.items():
        if (isinstance(value, torch.Tensor) and value.is_floating_point()
                and not name.endswith(PLACEHOLDERS) and not all_finite(value)):
            bad = int((~torch.isfinite(value)).sum())
            if bad:
                raise UserError(f"checkpoint {path} is corrupted: {name} holds {bad} non-finite "
                                f"value{'s' if bad > 1 else ''} (NaN or infinity)")


def guarded_load(original):
    """Wrap fairseq's checkpoint_utils.load_checkpoint_to_cpu (see overrides.py)."""

    def load_checkpoint_to_cpu(path, arg_overrides=None, load_on_all_ranks=False):
        if trusted() and _truthy(os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD")):
            raise UserError(f"{TRUST_ENV}=1 asks for full unpickling and "
                            "TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 forbids it; unset one of them")
        try:
            with _plugin_loading():
                state = original(path, arg_overrides, load_on_all_ranks)
        except UserError:
            raise
        except pickle.UnpicklingError as e:
            text = str(e)
            if "Weights only load failed" not in text:
                raise _read_error(path, e) from None
            found = re.search(r"GLOBAL ([\w.]+)", text)
            if found is None:
                why = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", text)
                raise UnreadableCheckpoint(path, (
                    f"{why.group(1) if why else 'weights-only loading failed'} (the file is "
                    f"truncated or corrupted, or holds objects only full unpickling reads: if "
                    f"you trust it, set {TRUST_ENV}=1)")) from None
            raise UserError(
                f"{path}: checkpoint contains {found.group(1)}, which is not loaded without "
                f"trust; if you trust this file, set {TRUST_ENV}=1 to unpickle it "
                f"fully") from None
        except Exception as e:
            if _raised_by_torch_load(e) or (isinstance(e, OSError) and e.filename is not None):
                raise _read_error(path, e) from None
            reason = _malformed(path)  # fairseq's upgrade of what torch read failed: why?
            if reason is not None:
                raise MalformedCheckpoint(path, reason) from None
            raise
        reason = structure_problem(state)
        if reason is not None:
            raise MalformedCheckpoint(path, reason)
        check_finite(path, state)
        return state

    load_checkpoint_to_cpu.__wrapped__ = original
    return load_checkpoint_to_cpu


def _loading_state_of(error) -> typing.Optional[str]:
    """The file whose weights fairseq's load_model_ensemble_and_task was putting into its model
    (model.load_state_dict) when `error` was raised; None if the error was raised elsewhere."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        code = tb.tb_frame.f_code
        if (code.co_name == "load_model_ensemble_and_task"
                and code.co_filename.replace(os.sep, "/").endswith("fairseq/checkpoint_utils.py")
                and tb.tb_next.tb_frame.f_code.co_name == "load_state_dict"):
            return tb.tb_frame.f_locals.get("filename")
        tb = tb.tb_next
    return None


def guarded_ensemble(original):
    """Wrap fairseq's checkpoint_utils.load_model_ensemble_and_task (see overrides.py): weights
    that do not fit the model the checkpoint's own configuration builds (parameters missing,
    unexpected or of other sizes) are a one-line error naming the file."""

    def load_model_ensemble_and_task(filenames, *args, **kwargs):
        try:
            return original(filenames, *args, **kwargs)
        except RuntimeError as e:
            mismatch = state_dict_mismatch(e)
            path = _loading_state_of(e) if mismatch else None
            if path is None:
                raise
            raise UserError(f"checkpoint {path} does not fit the {model_class(e)} its "
                            f"configuration builds: {mismatch}") from None

    load_model_ensemble_and_task.__wrapped__ = original
    return load_model_ensemble_and_task

"""Loading fairseq checkpoints on torch >= 2.6 without unpickling arbitrary objects.

torch.load now defaults to weights_only=True, which rejects the argparse.Namespace and OmegaConf
objects that fairseq 0.12 checkpoints contain. Instead of switching the safety off
(TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1), the plugin adds exactly the types fairseq checkpoints are
made of to torch's weights-only allowlist. A checkpoint that needs anything else fails with one
line naming the type; a user who trusts the file opts in with FAIRSEQ_FAST_TRUST_CHECKPOINTS=1.
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, torch's own switch (stock fairseq needs it), does not turn
the guard off: it is warned about once and ignored while the plugin loads a checkpoint.

A file torch cannot read (truncated, corrupted, not a checkpoint) and a checkpoint whose floating
point values include NaN or infinity (its bytes overwritten: every output would be garbage, or
generation would fail at the length limit) are one-line errors, not tracebacks.
"""
import argparse
import collections
import os
import pickle
import re
import sys
import typing
from contextlib import contextmanager

import torch

from fairseq_fast.errors import UserError

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


def allow_fairseq_types() -> None:
    torch.serialization.add_safe_globals(safe_types())


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


# fairseq's placeholder buffers (AdaptiveInput, AdaptiveSoftmax, old sinusoidal positions):
# torch.FloatTensor(1), saved uninitialised and only ever read for its dtype and device, so it
# may hold NaN in a sound checkpoint
PLACEHOLDERS = ("._float_tensor",)


def check_finite(path, state) -> None:
    """Refuse a checkpoint whose model weights hold NaN or infinity (fairseq's uninitialised
    placeholder buffers aside)."""
    model = state.get("model") if isinstance(state, dict) else None
    if not isinstance(model, dict):
        return
    for name, value in model.items():
        if (isinstance(value, torch.Tensor) and value.is_floating_point()
                and not name.endswith(PLACEHOLDERS)):
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
            with _torch_env("1") if trusted() else _weights_only():
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
            raise
        check_finite(path, state)
        return state

    load_checkpoint_to_cpu.__wrapped__ = original
    return load_checkpoint_to_cpu

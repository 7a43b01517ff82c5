"""Loading fairseq checkpoints on torch >= 2.6 without unpickling arbitrary objects.

torch.load now defaults to weights_only=True, which rejects the argparse.Namespace and OmegaConf
objects that fairseq 0.12 checkpoints contain. Instead of switching the safety off
(TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1), the plugin adds exactly the types fairseq checkpoints are
made of to torch's weights-only allowlist. A checkpoint that needs anything else fails with one
line naming the type; a user who trusts the file opts in with FAIRSEQ_FAST_TRUST_CHECKPOINTS=1.
"""
import argparse
import collections
import os
import pickle
import re
import typing
from contextlib import contextmanager

import torch

from fairseq_fast.errors import UserError

TRUST_ENV = "FAIRSEQ_FAST_TRUST_CHECKPOINTS"


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
def _full_unpickling():
    old = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"]
        else:
            os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = old


def guarded_load(original):
    """Wrap fairseq's checkpoint_utils.load_checkpoint_to_cpu (see overrides.py)."""

    def load_checkpoint_to_cpu(path, arg_overrides=None, load_on_all_ranks=False):
        if trusted():
            with _full_unpickling():
                return original(path, arg_overrides, load_on_all_ranks)
        try:
            return original(path, arg_overrides, load_on_all_ranks)
        except pickle.UnpicklingError as e:
            if "Weights only load failed" not in str(e):
                raise
            found = re.search(r"GLOBAL ([\w.]+)", str(e))
            what = found.group(1) if found else "an object outside the allowlist"
            raise UserError(
                f"{path}: checkpoint contains {what}, which is not loaded without trust; if you "
                f"trust this file, set {TRUST_ENV}=1 to unpickle it fully") from None

    load_checkpoint_to_cpu.__wrapped__ = original
    return load_checkpoint_to_cpu

"""Loading a checkpoint without first filling the model it builds with random numbers.

fairseq's load_model_ensemble_and_task builds each model from its configuration, which fills
every parameter at random (uniform_, normal_, xavier_uniform_, ...), and then overwrites all of
them with the checkpoint's weights: the load is strict, so a parameter or persistent buffer that
the file lacks is an error. The random fills cost a random number per weight and a first write
to every page of the model's memory; the load then writes every page again.

`skipping_ensemble` marks the load, and `skipping_build` (fairseq.models.build_model, which
every task's build_model calls) builds the marked load's models under a torch function mode,
`SkipRandomFills` (such a mode is thread-local: other threads are untouched), in which those
fills return their tensor as it is: never written, until the checkpoint's weights are copied in.
The mode follows what the skipped tensors' values flow into (every op it sees with one of them
among its inputs taints its outputs; a value read out into Python, such as item(), stops the
skip). After the load, every tainted tensor that a loaded model still holds (a parameter, a
buffer, a tensor kept as an attribute) must be a parameter or persistent buffer, which the strict
load overwrote; a tainted tensor the model dropped (a projection's own weight, replaced by the
tied embedding's) leaves nothing behind. Otherwise (a non-persistent buffer drawn at random, or
computed from such a draw) the load runs again the stock way, from the random state it started
with.

What changes is the random state after loading: the skipped fills drew nothing. fairseq-generate
and fairseq-interactive seed the generator before they load, so only a run that draws random
numbers after loading could tell: sampling, and --retain-dropout. The skip is therefore on only
in a command-line tool whose command line asks for neither (`allow`, called when it parses its
command line), for a strict load of an unsharded checkpoint. The hub and other programs load as
stock fairseq does unless they ask: a load whose arg_overrides hold `skip_init` (the hub's
keyword arguments are its arg_overrides) skips with True and never with False, whatever the
command line; the key is taken out of the overrides fairseq applies.

    hub = TransformerModel.from_pretrained(folder, "model.pt", ".", skip_init=True, ...)

FAIRSEQ_FAST_OFF=skip_init switches the skip off (overrides.py): fairseq then loads as it does,
and ignores a `skip_init` among the overrides as it ignores any name it does not know.
"""
import inspect
import logging
import threading
from typing import Optional

import torch
from torch.overrides import TorchFunctionMode

from fairseq_fast.errors import UserError

logger = logging.getLogger("fairseq_fast")

_init = torch.nn.init
# in-place random fills: torch.nn.init's, and the Tensor methods they (and modules) call
FILLS = frozenset([
    _init.uniform_, _init.normal_, _init.trunc_normal_, _init.xavier_uniform_,
    _init.xavier_normal_, _init.kaiming_uniform_, _init.kaiming_normal_, _init.orthogonal_,
    _init.sparse_,
    torch.Tensor.uniform_, torch.Tensor.normal_, torch.Tensor.random_, torch.Tensor.bernoulli_,
    torch.Tensor.exponential_, torch.Tensor.cauchy_, torch.Tensor.log_normal_,
    torch.Tensor.geometric_,
])
# ops that read a tensor's shape and kind, not its values (attribute getters, `__get__`, too)
METADATA = frozenset([
    torch.Tensor.dim, torch.Tensor.ndimension, torch.Tensor.size, torch.Tensor.numel,
    torch.Tensor.nelement, torch.Tensor.stride, torch.Tensor.storage_offset,
    torch.Tensor.element_size, torch.Tensor.__len__, torch.Tensor.is_floating_point,
    torch.Tensor.is_complex, torch.Tensor.is_contiguous, torch.Tensor.get_device,
    torch.Tensor.data_ptr, torch.Tensor.untyped_storage, torch.Tensor.__hash__,
    torch.is_tensor, torch.is_floating_point, torch.numel,
])

# ops whose results take only a tensor's shape and kind from it, not its values
SHAPE_ONLY = frozenset([
    torch.zeros_like, torch.ones_like, torch.full_like, torch.empty_like, torch.Tensor.new_zeros,
    torch.Tensor.new_ones, torch.Tensor.new_full, torch.Tensor.new_empty,
])

_allowed = [False]  # set by a command-line tool's parse (allow), never by importing the plugin
HUB_KEY = "skip_init"  # a load's own choice, in its arg_overrides (the hub's keywords)
_local = threading.local()  # .mode: the SkipRandomFills of the load this thread is running


def allow(parsed) -> None:
    """Let loads skip the random fills, unless this command line draws random numbers after
    loading (sampling, --retain-dropout)."""
    _allowed[0] = not (getattr(parsed, "sampling", False)
                       or getattr(parsed, "retain_dropout", False))


def _storage(t: torch.Tensor):
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # no storage (meta, sparse, ...)
        return None


def _tensors(obj):
    """The tensors in `obj` and in the lists, tuples and dicts it nests."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)


class SkipRandomFills(TorchFunctionMode):
    """While active (on this thread), in-place random fills of floating-point tensors leave
    them as they are; `skipped` counts them, `tainted` holds the storages (their addresses)
    that hold such a tensor or a value computed from one, and `leaked` is set where such a
    value was read into Python."""

    def __init__(self):
        super().__init__()
        self.skipped = 0
        self.tainted = set()
        self.leaked = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FILLS:
            tensor = args[0] if args else kwargs["tensor"]
            if tensor.is_floating_point():
                self.skipped += 1
                self._taint([tensor])
                return tensor
        out = func(*args, **kwargs)
        if self.tainted and func not in SHAPE_ONLY:
            inputs = list(_tensors((args, kwargs)))
            if any(_storage(t) in self.tainted for t in inputs):
                produced = list(_tensors(out))
                if produced:
                    self._taint(produced)
                elif out is None:  # written in place (__setitem__, ...): its tensors
                    self._taint(inputs)
                elif func not in METADATA and getattr(func, "__name__", "") != "__get__":
                    self.leaked = True
        return out

    def _taint(self, tensors) -> None:
        self.tainted.update(p for p in map(_storage, tensors) if p is not None)


def held_tensors(model: torch.nn.Module):
    """Every tensor `model` holds: its modules' parameters, buffers and tensor attributes (also
    inside a list, tuple or dict attribute), each once."""
    seen = set()
    for module in model.modules():
        for t in _tensors(list(vars(module).values())):
            if id(t) not in seen:
                seen.add(id(t))
                yield t


def left_unfilled(mode: SkipRandomFills, models) -> bool:
    """Whether a loaded model may hold a value from a skipped fill that the load did not
    overwrite: a tainted tensor that is not a parameter or persistent buffer, or a value read
    into Python."""
    if mode.leaked:
        return True
    loaded = {_storage(t) for model in models
              for t in model.state_dict(keep_vars=True).values() if isinstance(t, torch.Tensor)}
    return any(_storage(t) in mode.tainted and _storage(t) not in loaded
               for model in models for t in held_tensors(model))


def skipping_build(original):
    """Wrap fairseq.models.build_model: under a load that skipping_ensemble marked, build the
    model with SkipRandomFills."""

    def build_model(*args, **kwargs):
        mode = getattr(_local, "mode", None)
        if mode is None:
            return original(*args, **kwargs)
        with mode:
            return original(*args, **kwargs)

    build_model.__wrapped__ = original
    return build_model


def _asked(call) -> Optional[bool]:
    """The load's own `skip_init` (True, False) from its arg_overrides, taken out of them; None
    where it has none."""
    overrides = call.arguments.get("arg_overrides")
    if not isinstance(overrides, dict) or HUB_KEY not in overrides:
        return None
    asked = overrides[HUB_KEY]
    if not isinstance(asked, bool):
        raise UserError(f"{HUB_KEY} takes True or False, not {asked!r}")
    call.arguments["arg_overrides"] = {k: v for k, v in overrides.items() if k != HUB_KEY}
    return asked


def skipping_ensemble(original):
    """Wrap fairseq's checkpoint_utils.load_model_ensemble_and_task (see the module docstring)."""
    signature = inspect.signature(inspect.unwrap(original))

    def load_model_ensemble_and_task(*args, **kwargs):
        try:
            call = signature.bind(*args, **kwargs)
        except TypeError:  # fairseq's own error message
            return original(*args, **kwargs)
        call.apply_defaults()
        asked = _asked(call)
        if asked is not None:  # the key is the plugin's: fairseq's overrides never see it
            args, kwargs = call.args, call.kwargs
        allowed = _allowed[0] if asked is None else asked
        if (not allowed or getattr(_local, "mode", None) is not None
                or not call.arguments["strict"] or call.arguments["num_shards"] != 1):
            return original(*args, **kwargs)
        state = torch.random.get_rng_state()
        _local.mode = mode = SkipRandomFills()
        try:
            result = original(*args, **kwargs)
        finally:
            _local.mode = None
        if not mode.skipped or not left_unfilled(mode, result[0]):
            return result
        logger.info("a model holds values drawn at random that its checkpoint does not "
                    "overwrite: loading it again with fairseq's initialisation")
        del result
        torch.random.set_rng_state(state)
        return original(*args, **kwargs)

    load_model_ensemble_and_task.__wrapped__ = original
    return load_model_ensemble_and_task

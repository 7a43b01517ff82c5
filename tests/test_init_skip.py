"""Loading a checkpoint without the random fills of the model it overwrites (init_skip.py): the
same weights as fairseq's load, no random draws, and fairseq's own load wherever a skipped fill
would not be overwritten or random draws follow the load."""
import argparse
import os

import pytest
import torch

from fairseq_fast import init_skip

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "user_dir_examples", "bible_es_en")


def load(path="target.pt"):
    from fairseq import checkpoint_utils

    models, _, _ = checkpoint_utils.load_model_ensemble_and_task(
        [os.path.join(EXAMPLE, path)], arg_overrides={"data": EXAMPLE})
    return models[0]


def loaded_with_rng(allowed, monkeypatch, path="target.pt"):
    """(the model, whether the load drew random numbers)"""
    monkeypatch.setattr(init_skip, "_allowed", [allowed])
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    model = load(path)
    return model, not torch.equal(before, torch.random.get_rng_state())


def same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("path", ["target.pt", "draft.pt"])
def test_a_load_skips_the_random_fills_and_gives_fairseqs_weights(monkeypatch, path):
    stock, drew = loaded_with_rng(False, monkeypatch, path)
    assert drew  # fairseq's load fills the model at random first
    skipped, drew = loaded_with_rng(True, monkeypatch, path)
    assert not drew
    assert same_weights(stock, skipped)


class Noisy(torch.nn.Module):
    """A linear layer, and a buffer drawn at random: saved with the weights, or not (also one
    computed from a random tensor it then drops)."""

    def __init__(self, persistent, derived=False):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        noise = torch.empty(4).normal_()
        self.register_buffer("noise", 2 * noise if derived else noise, persistent=persistent)


@pytest.mark.parametrize("persistent,derived", [(True, False), (False, False), (False, True)])
def test_a_fill_that_the_load_does_not_overwrite_is_seen(persistent, derived):
    torch.manual_seed(0)
    saved = Noisy(persistent, derived).state_dict()
    before = torch.random.get_rng_state()
    with init_skip.SkipRandomFills() as mode:
        module = Noisy(persistent, derived)
    assert mode.skipped == 3 and torch.equal(before, torch.random.get_rng_state())
    module.load_state_dict(saved)
    assert init_skip.left_unfilled(mode, [module]) is not persistent


def test_a_dropped_fill_leaves_nothing_and_a_value_read_out_stops_the_skip():
    with init_skip.SkipRandomFills() as mode:
        tied = torch.nn.Linear(3, 4)
        tied.weight = torch.nn.Parameter(torch.ones(4, 3))  # its own weight, dropped
        assert tied.bias.dim() == 1 and tied.bias.shape == (4,)  # shapes are not values
        tied.register_buffer("mask", torch.zeros_like(tied.bias), persistent=False)
    assert not mode.leaked and not init_skip.left_unfilled(mode, [tied])
    with init_skip.SkipRandomFills() as mode:
        scaled = torch.nn.Linear(3, 4)
        scaled.scale = float(scaled.weight.abs().max())
    assert mode.leaked and init_skip.left_unfilled(mode, [scaled])


def test_where_a_fill_is_not_overwritten_the_load_is_fairseqs(monkeypatch):
    """The load runs again the stock way, from the random state it started with: the weights
    and the random state afterwards are fairseq's."""
    monkeypatch.setattr(init_skip, "_allowed", [False])
    torch.manual_seed(0)
    stock = load()
    after_stock = torch.random.get_rng_state()
    monkeypatch.setattr(init_skip, "_allowed", [True])
    monkeypatch.setattr(init_skip, "left_unfilled", lambda mode, models: True)
    torch.manual_seed(0)
    again = load()
    assert torch.equal(after_stock, torch.random.get_rng_state())
    assert same_weights(stock, again)


@pytest.mark.parametrize("flags,allowed", [({}, True), ({"sampling": True}, False),
                                           ({"retain_dropout": True}, False)])
def test_only_a_command_line_that_draws_nothing_after_loading_skips(monkeypatch, flags,
                                                                    allowed):
    monkeypatch.setattr(init_skip, "_allowed", [False])
    init_skip.allow(argparse.Namespace(**{"sampling": False, "retain_dropout": False, **flags}))
    assert init_skip._allowed[0] is allowed
    _, drew = loaded_with_rng(init_skip._allowed[0], monkeypatch)
    assert drew is not allowed


def test_importing_the_plugin_does_not_allow_it():
    """Only a command-line tool's parse does: the hub and other programs load as fairseq does."""
    import subprocess
    import sys

    code = ("import fairseq_fast, fairseq_fast.init_skip as s; from fairseq import hub_utils; "
            "print(s._allowed[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "False"


def hub_loaded_with_rng(allowed, monkeypatch, **keywords):
    """(the hub's model, whether from_pretrained drew random numbers)"""
    from fairseq.models.transformer import TransformerModel

    monkeypatch.setattr(init_skip, "_allowed", [allowed])
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    hub = TransformerModel.from_pretrained(EXAMPLE, "target.pt", ".", **keywords)
    return hub.models[0], not torch.equal(before, torch.random.get_rng_state())


def test_the_hub_skips_where_it_asks_and_gets_fairseqs_weights(monkeypatch):
    stock, drew = hub_loaded_with_rng(True, monkeypatch, skip_init=False)
    assert drew  # its own False wins over the command line's permission: fairseq's load
    skipped, drew = hub_loaded_with_rng(False, monkeypatch, skip_init=True)
    assert not drew  # its own True wins where nothing allowed it
    assert same_weights(stock, skipped)


def test_the_hubs_skip_init_takes_a_bool(monkeypatch):
    from fairseq_fast.errors import UserError

    with pytest.raises(UserError, match=r"skip_init takes True or False, not 'yes'"):
        hub_loaded_with_rng(False, monkeypatch, skip_init="yes")


def test_with_the_skip_switched_off_fairseq_ignores_the_hubs_skip_init():
    import subprocess
    import sys

    code = ("import torch, fairseq_fast; from fairseq.models.transformer import TransformerModel"
            "; torch.manual_seed(0); s = torch.random.get_rng_state()"
            f"; TransformerModel.from_pretrained({EXAMPLE!r}, 'target.pt', '.', skip_init=True)"
            "; print(not torch.equal(s, torch.random.get_rng_state()))")
    env = {**os.environ, "FAIRSEQ_FAST_OFF": "skip_init"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=env, check=True)
    assert out.stdout.strip().splitlines()[-1] == "True"  # fairseq's load: it drew

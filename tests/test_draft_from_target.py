"""scripts/draft_from_target.py: a draft's starting point made of the target's encoder and first
N decoder layers computes exactly what the target computes without its other layers."""
import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "draft_from_target.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_the_draft_is_the_target_without_its_last_decoder_layers(tiny_pair, tmp_path):
    from fairseq import checkpoint_utils

    target_path, out = os.path.join(tiny_pair, "target.pt"), tmp_path / "init.pt"
    assert run(target_path, str(out), "--decoder-layers", "1").returncode == 0
    overrides = {"data": os.path.join(tiny_pair, "data-bin")}
    (target,), _, task = checkpoint_utils.load_model_ensemble_and_task(
        [target_path], arg_overrides=overrides)
    (draft,), _ = checkpoint_utils.load_model_ensemble([str(out)], task=task,
                                                       arg_overrides=overrides)
    assert len(target.decoder.layers) == 2 and len(draft.decoder.layers) == 1
    task.load_dataset("valid")
    ds = task.dataset("valid")
    sample = ds.collater([ds[i] for i in range(8)])
    target.eval(), draft.eval()
    with torch.no_grad():
        whole = target(**sample["net_input"])[0]
        target.decoder.layers = target.decoder.layers[:1]
        first_layer_only = target(**sample["net_input"])[0]
        got = draft(**sample["net_input"])[0]
    assert torch.equal(got, first_layer_only)
    assert not torch.allclose(got, whole)  # the dropped layer did change the output


@pytest.mark.parametrize("layers", ["0", "3"])
def test_a_layer_count_the_target_does_not_have_is_refused(tiny_pair, tmp_path, layers):
    out = tmp_path / "init.pt"
    result = run(os.path.join(tiny_pair, "target.pt"), str(out), "--decoder-layers", layers)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"--decoder-layers must be between 1 and 2 (got {layers})" in result.stderr
    assert not out.exists()

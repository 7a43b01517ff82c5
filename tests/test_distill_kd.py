"""scripts/distill_kd (the draft_kd training criterion) and scripts/export_demo_models.py on the
tiny pair: the KL term is zero exactly when student and teacher agree, a step on it moves the
student toward the teacher, and an exported KD-trained draft loads without that user dir."""
import argparse
import copy
import os
import sys

import pytest
import torch
from omegaconf import OmegaConf

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts"))


@pytest.fixture(scope="module")
def kd(tiny_pair):
    from fairseq import checkpoint_utils, tasks, utils

    utils.import_user_module(argparse.Namespace(user_dir=os.path.join(ROOT, "scripts",
                                                                      "distill_kd")))
    from fairseq.criterions import CRITERION_REGISTRY

    data = os.path.join(tiny_pair, "data-bin")
    target = os.path.join(tiny_pair, "target.pt")
    state = checkpoint_utils.load_checkpoint_to_cpu(target)
    cfg = state["cfg"]
    cfg.task.data = data
    task = tasks.setup_task(cfg.task)
    task.load_dataset("valid")
    ds = task.dataset("valid")
    sample = ds.collater([ds[i] for i in range(16)])
    criterion = CRITERION_REGISTRY["draft_kd"](task, False, 0.0, target, 1.0)
    models = {name: checkpoint_utils.load_model_ensemble(
        [os.path.join(tiny_pair, f"{name}.pt")], task=task)[0][0].float().train()
        for name in ("target", "draft")}
    return criterion, models, sample, task


def test_kl_is_zero_for_the_teacher_itself_and_positive_for_the_draft(kd):
    criterion, models, sample, _ = kd
    student = copy.deepcopy(models["target"]).eval()
    loss, _, log = criterion(student, sample)
    assert abs(loss.item()) < 1e-3 and log["n_correct"] == log["total"] > 0
    loss, _, log = criterion(models["draft"].eval(), sample)
    assert loss.item() > 1.0 and log["n_correct"] < log["total"]


def test_a_step_on_the_kl_moves_the_draft_toward_the_teacher(kd):
    criterion, models, sample, _ = kd
    draft = copy.deepcopy(models["draft"]).eval()
    teacher = criterion._teacher[0]
    before = float(criterion(draft, sample)[0])
    opt = torch.optim.SGD(draft.parameters(), lr=1e-3)
    for _ in range(5):
        opt.zero_grad()
        criterion(draft, sample)[0].backward()
        opt.step()
    assert float(criterion(draft, sample)[0]) < before
    assert not any(p.requires_grad for p in teacher.parameters())
    # the teacher is not a submodule: fairseq's trainer would otherwise train it too
    assert not list(criterion.parameters())


def test_export_of_a_kd_draft_loads_without_the_user_dir(kd, tiny_pair, tmp_path):
    from export_demo_models import slim
    from fairseq_fast.speculative.draft_loading import load_draft

    _, models, sample, task = kd
    state = torch.load(os.path.join(tiny_pair, "draft.pt"), weights_only=False)
    if OmegaConf.is_config(state["cfg"]):
        state["cfg"] = OmegaConf.to_container(state["cfg"], resolve=True)
    state["cfg"]["common"]["user_dir"] = "scripts/distill_kd"
    state["cfg"]["criterion"] = {"_name": "draft_kd", "teacher_path": "t.pt", "kd_weight": 0.5,
                                 "label_smoothing": 0.1}
    trained = tmp_path / "checkpoint_best.pt"
    torch.save(state, trained)
    slim(str(trained), str(tmp_path / "draft.pt"))
    exported = torch.load(tmp_path / "draft.pt", weights_only=False)
    assert exported["cfg"]["common"]["user_dir"] is None
    assert exported["cfg"]["criterion"] == {"_name": "label_smoothed_cross_entropy",
                                            "label_smoothing": 0.1}
    draft = load_draft(task, str(tmp_path / "draft.pt"), models["target"])
    for name, p in draft.state_dict().items():  # float16 weights, the same values
        assert torch.equal(p.float(), state["model"][name].half().float()), name

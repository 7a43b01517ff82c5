"""The draft's starting point and its training criterion, on the tiny pair.

init.layer_dropped: the target without its last decoder layers computes exactly what the target
computes with only its first layers. draft_kd (registered by the plugin, no --user-dir of its
own): the KL term is zero exactly when student and teacher agree, a step on it moves the student
toward the teacher, and with --teacher-encoder the student's encoder is neither run nor trained.
export.slim: a KD-trained draft loads without the criterion."""
import copy
import os

import pytest
import torch
from omegaconf import OmegaConf

from fairseq_fast.draft import init


@pytest.fixture(scope="module")
def kd(tiny_pair):
    from fairseq import checkpoint_utils, tasks
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


def layer_dropped_model(tiny_pair, task, layers, train_encoder, tmp_path):
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(os.path.join(tiny_pair, "target.pt"))
    path = tmp_path / f"init-{layers}-{train_encoder}.pt"
    init.write(init.layer_dropped(state, layers, train_encoder), str(path))
    (model,), _ = checkpoint_utils.load_model_ensemble([str(path)], task=task)
    return model.eval()


@pytest.mark.parametrize("train_encoder", [False, True])
def test_the_starting_point_is_the_target_without_its_last_decoder_layers(
        kd, tiny_pair, tmp_path, train_encoder):
    _, models, sample, task = kd
    target = copy.deepcopy(models["target"]).eval()
    draft = layer_dropped_model(tiny_pair, task, 1, train_encoder, tmp_path)
    assert len(target.decoder.layers) == 2 and len(draft.decoder.layers) == 1
    with torch.no_grad():
        whole = target(**sample["net_input"])[0]
        target.decoder.layers = target.decoder.layers[:1]
        first_layer_only = target(**sample["net_input"])[0]
        got = draft(**sample["net_input"])[0]
    assert torch.equal(got, first_layer_only)
    assert not torch.allclose(got, whole)  # the dropped layer did change the output


def test_a_frozen_encoder_unties_embeddings_shared_with_it():
    """A target sharing all embeddings: the draft's decoder gets its own (tied) copy, so that
    training it leaves the encoder's as the target's."""
    from argparse import Namespace

    embed = torch.randn(8, 4)
    state = {"cfg": {"model": Namespace(decoder_layers=2, share_all_embeddings=True,
                                        share_decoder_input_output_embed=True)},
             "model": {"encoder.embed_tokens.weight": embed,
                       "decoder.embed_tokens.weight": embed,
                       "decoder.output_projection.weight": embed,
                       "decoder.layers.0.fc1.weight": torch.randn(2, 2),
                       "decoder.layers.1.fc1.weight": torch.randn(2, 2)}}
    frozen = init.layer_dropped(state, 1, train_encoder=False)
    model = frozen["cfg"]["model"]
    assert not model.share_all_embeddings and model.share_decoder_input_output_embed
    weights = frozen["model"]
    assert "decoder.layers.1.fc1.weight" not in weights
    assert weights["decoder.embed_tokens.weight"].data_ptr() != \
        weights["encoder.embed_tokens.weight"].data_ptr()
    assert torch.equal(weights["decoder.embed_tokens.weight"], embed)
    trained = init.layer_dropped(state, 1, train_encoder=True)
    assert trained["cfg"]["model"].share_all_embeddings
    assert state["cfg"]["model"].decoder_layers == 2  # the target's state is not changed


def test_with_the_teachers_encoder_the_students_is_neither_run_nor_trained(
        kd, tiny_pair, tmp_path):
    from fairseq.criterions import CRITERION_REGISTRY

    _, models, sample, task = kd
    criterion = CRITERION_REGISTRY["draft_kd"](task, False, 0.0,
                                               os.path.join(tiny_pair, "target.pt"), 0.75,
                                               teacher_encoder=True)
    student = layer_dropped_model(tiny_pair, task, 1, False, tmp_path).train()

    def refuse(*args, **kwargs):
        raise AssertionError("the student's encoder ran")

    student.encoder.forward = refuse
    loss, _, log = criterion(student, sample)
    loss.backward()
    assert all(p.grad is None for p in student.encoder.parameters())
    assert all(p.grad is not None for p in student.decoder.layers.parameters())
    # the same loss as the student running its own encoder (a copy of the teacher's)
    del student.encoder.forward
    plain = CRITERION_REGISTRY["draft_kd"](task, False, 0.0,
                                           os.path.join(tiny_pair, "target.pt"), 0.75)
    student.eval()
    with torch.no_grad():
        assert torch.allclose(criterion(student, sample)[0], plain(student, sample)[0],
                              rtol=1e-5)


def test_an_exported_kd_draft_loads_without_the_criterion(kd, tiny_pair, tmp_path):
    from fairseq_fast.draft.export import slim
    from fairseq_fast.speculative.draft_loading import load_draft

    _, models, sample, task = kd
    state = torch.load(os.path.join(tiny_pair, "draft.pt"), weights_only=False)
    if OmegaConf.is_config(state["cfg"]):
        state["cfg"] = OmegaConf.to_container(state["cfg"], resolve=True)
    state["cfg"]["common"]["user_dir"] = "somewhere"
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

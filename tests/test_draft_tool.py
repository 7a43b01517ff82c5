"""fairseq-fast-draft end to end on the tiny pair (and a tiny language model): every stage runs, a
run killed between stages resumes without redoing the finished ones, the exported draft loads as
--draft-path, speculative output with it is the target's greedy output; and each mistake the
tool checks for is one line and exit status 2, before any long work."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch

import fairseq_fast
from fairseq_fast.draft import cli
from test_cli import TOOLS

TOOL = [sys.executable, "-m", "fairseq_fast.draft"]
HOURS = "0.004"  # about 15 seconds: 5 for the data at most, the rest training


def tool(*args, timeout=300):
    return TOOLS.run(TOOL + [str(a) for a in args], timeout=timeout)


def stages(work):
    try:
        with open(os.path.join(work, "stages.json")) as f:
            return json.load(f)["done"]
    except (OSError, ValueError):
        return {}


def files_of(work):
    """{path: mtime} of what the init and data stages wrote."""
    out = {}
    for top, _, names in os.walk(work):
        for name in names:
            path = os.path.join(top, name)
            if name == "init.pt" or os.sep + "distill" + os.sep in path:
                out[path] = os.stat(path).st_mtime_ns
    return out


@pytest.fixture(scope="module")
def made(tiny_pair, tmp_path_factory):
    """The tool on the tiny pair, killed (SIGKILL, with fairseq-train's child) once the data
    stage is done, then run again to the end."""
    root = tmp_path_factory.mktemp("draft")
    out, work = root / "draft.pt", str(root / "draft.work")
    args = ["--target", os.path.join(tiny_pair, "target.pt"),
            "--data", os.path.join(tiny_pair, "data-bin"), "--out", str(out),
            "--hours", HOURS, "--report-sentences", "10"]
    first = subprocess.Popen(TOOL + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = time.time() + 180
    while "data" not in stages(work):
        assert first.poll() is None, first.stderr.read().decode()[-2000:]
        assert time.time() < deadline
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    first.stderr.close()
    assert not out.exists()
    before = files_of(work)
    second = tool(*args)
    return {"args": args, "out": out, "work": work, "before": before, "second": second,
            "pair": tiny_pair}


def test_every_stage_runs_and_a_killed_run_resumes_where_it_stopped(made):
    second = made["second"]
    assert second.returncode == 0, second.stderr[-3000:]
    assert set(stages(made["work"])) == set(cli.STAGES)
    # init and data were done before the kill: not redone, their files untouched
    assert "init:" not in second.stderr and "data: train" not in second.stderr
    assert made["before"] and files_of(made["work"]) == made["before"]
    for stage in ("train:", "export:"):
        assert stage in second.stderr
    trained = stages(made["work"])["train"]
    assert trained["updates"] > 0 and 0 < trained["agreement"] <= 100  # read from fairseq's log
    report = json.load(open(os.path.splitext(made["out"])[0] + ".json"))
    assert report["decoder_layers"] == 1 and report["encoder_frozen"]
    measured = report["report"]
    assert measured["sentences"] == 10 and measured["encoder_shared"]
    assert 0 < measured["engines"]["speculative"]["alpha"] <= 1
    assert "--generator speculative --draft-path" in report["command"]
    assert report["command"] in second.stdout


def test_a_finished_run_does_nothing_again(made):
    again = tool(*made["args"], "--report-sentences", "0")
    assert again.returncode == 0, again.stderr[-2000:]
    for stage in ("init:", "data: train", "train:", "export:"):
        assert stage not in again.stderr


def test_more_hours_train_on_from_the_last_checkpoint(made):
    before = stages(made["work"])["train"]
    args = list(made["args"])
    args[args.index("--hours") + 1] = "0.006"
    more = tool(*args, "--report-sentences", "0")
    assert more.returncode == 0, more.stderr[-2000:]
    assert "data: train" not in more.stderr and "train:" in more.stderr
    after = stages(made["work"])["train"]
    assert after["hours"] > before["hours"] and after["updates"] > before["updates"]
    assert "export" in stages(made["work"])  # exported again, from the longer training


def test_the_export_is_float16_weights_with_the_targets_encoder(made):
    state = torch.load(made["out"], weights_only=False)
    assert set(state) == {"cfg", "model", "args", "optimizer_history", "extra_state"}
    floats = [v for v in state["model"].values() if v.is_floating_point()]
    assert floats and all(v.dtype == torch.float16 for v in floats)
    assert state["cfg"]["model"].decoder_layers == 1
    assert state["cfg"]["common"]["user_dir"] is None
    target = torch.load(os.path.join(made["pair"], "target.pt"), weights_only=False)["model"]
    for name, value in state["model"].items():
        if name.startswith("encoder.") and value.is_floating_point():
            assert torch.equal(value, target[name].half()), name


def test_speculative_output_with_the_draft_is_the_targets_greedy_output(made):
    """float64, against stock fairseq's own SequenceGenerator."""
    from fairseq import checkpoint_utils
    from fairseq.sequence_generator import SequenceGenerator

    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator
    from fairseq_fast.speculative.draft_loading import load_draft

    pair = made["pair"]
    (target,), _, task = checkpoint_utils.load_model_ensemble_and_task(
        [os.path.join(pair, "target.pt")], arg_overrides={"data": os.path.join(pair, "data-bin")})
    target = target.double().eval()
    draft = load_draft(task, str(made["out"]), target)
    assert next(draft.parameters()).dtype == torch.float64
    spec = SpeculativeSequenceGenerator([target], task.target_dictionary, draft_model=draft)
    assert spec.proposer.shared_encoder and spec.proposer.encoder is None
    stock = SequenceGenerator([target], task.target_dictionary, beam_size=1)
    task.load_dataset("valid")
    ds = task.dataset("valid")
    for start in range(0, 64, 16):
        sample = ds.collater([ds[i] for i in range(start, start + 16)])
        want, got = stock.generate([target], sample), spec.generate([target], sample)
        for w, g in zip(want, got):
            assert torch.equal(w[0]["tokens"], g[0]["tokens"])
            assert abs(float(w[0]["score"]) - float(g[0]["score"])) < 1e-9
    assert spec.stats.accepted > 0


def test_the_export_loads_as_draft_path_in_fairseq_generate(made):
    pair = made["pair"]
    common = [os.path.join(pair, "data-bin"), "--path", os.path.join(pair, "target.pt"),
              "--user-dir", fairseq_fast.user_dir(), "--beam", "1", "--gen-subset", "valid",
              "--max-sentences", "8"]
    bin_dir = os.path.dirname(sys.executable)
    runs = [TOOLS.run([os.path.join(bin_dir, "fairseq-generate"), *common, *extra],
                      timeout=300)
            for extra in ([], ["--generator", "speculative", "--draft-path", str(made["out"])])]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    hyps = [sorted(line for line in r.stdout.splitlines() if line.startswith("H-"))
            for r in runs]
    assert hyps[0] and hyps[0] == hyps[1]
    assert "acceptance rate alpha" in runs[1].stderr


def test_a_language_model_gets_a_draft_too(tiny_pair, tmp_path):
    import tiny_pair as builder

    lm = builder.build_language_model(tiny_pair)
    out = tmp_path / "lm-draft.pt"
    run = tool("--target", lm, "--data", os.path.join(tiny_pair, "lm-bin"), "--out", out,
               "--hours", "0.003", "--report-sentences", "5")
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.load(open(tmp_path / "lm-draft.json"))
    assert report["decoder_layers"] == 1 and not report["encoder_frozen"]
    measured = report["report"]
    assert measured["sentences"] == 5
    assert measured["engines"]["speculative"]["identical"] == 1.0
    assert "--task language_modeling" in report["command"]


# -- mistakes: one line, exit status 2, before any long work ----------------------------------
def fails(capsys, *args):
    with pytest.raises(SystemExit) as exit_:
        cli.main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("fairseq-fast-draft")]
    assert exit_.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("fairseq-fast-draft: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def pair_copy(tiny_pair, tmp_path):
    """The tiny target with its dictionaries beside it, and a copy of its data-bin."""
    home = tmp_path / "model"
    home.mkdir()
    shutil.copy(os.path.join(tiny_pair, "target.pt"), home)
    data = tmp_path / "data-bin"
    shutil.copytree(os.path.join(tiny_pair, "data-bin"), data)
    for name in ("dict.src.txt", "dict.tgt.txt"):
        shutil.copy(data / name, home)
    return home / "target.pt", data, tmp_path / "out" / "draft.pt"


def base(target, data, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    return ["--target", target, "--data", data, "--out", out]


def test_a_target_that_is_not_a_transformer_is_refused(pair_copy, capsys):
    target, data, out = pair_copy
    state = torch.load(target, weights_only=False)
    state["cfg"]["model"].arch = state["cfg"]["model"]._name = "lstm"
    torch.save(state, target)
    line = fails(capsys, *base(target, data, out))
    assert "a lstm model for task translation" in line and "Transformer" in line


def test_a_data_bin_with_other_dictionaries_is_refused(pair_copy, capsys):
    target, data, out = pair_copy
    lines = (data / "dict.tgt.txt").read_text().splitlines()
    lines[3], lines[4] = lines[4], lines[3]
    (data / "dict.tgt.txt").write_text("\n".join(lines) + "\n")
    line = fails(capsys, *base(target, data, out))
    assert "dict.tgt.txt" in line and "differs from the target's" in line
    assert "first at index 7" in line  # 4 special symbols first


def test_a_data_bin_of_another_size_is_refused_without_dictionaries_beside(pair_copy, capsys):
    target, data, out = pair_copy
    os.remove(os.path.join(os.path.dirname(target), "dict.tgt.txt"))
    state = torch.load(target, weights_only=False)
    state["cfg"]["task"]["data"] = "nowhere"
    torch.save(state, target)
    with open(data / "dict.tgt.txt", "a") as f:
        f.write("extra 1\n")
    line = fails(capsys, *base(target, data, out))
    assert "49 symbols" in line and "decoder embeddings 48" in line


@pytest.mark.parametrize("split", ["train", "valid"])
def test_a_missing_split_is_refused(pair_copy, capsys, split):
    target, data, out = pair_copy
    os.remove(data / f"{split}.src-tgt.tgt.bin")
    line = fails(capsys, *base(target, data, out))
    assert f"no {split} split ({split}.src-tgt.tgt.bin / .idx)" in line


def test_too_little_disk_is_refused(pair_copy, capsys, monkeypatch):
    target, data, out = pair_copy
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1, 1, 1000))
    line = fails(capsys, *base(target, data, out))
    assert line.startswith("fairseq-fast-draft: error: not enough disk space in ")
    assert not os.path.exists(os.path.splitext(out)[0] + ".work")


@pytest.mark.parametrize("flag, value, message", [
    ("--decoder-layers", "2", "--decoder-layers must be between 1 and 1 for a target of 2"),
    ("--decoder-layers", "0", "--decoder-layers must be between 1 and 1"),
    ("--hours", "0", "--hours must be > 0"),
    ("--report-sentences", "-1", "--report-sentences must be >= 0"),
])
def test_out_of_range_values_are_refused(pair_copy, capsys, flag, value, message):
    line = fails(capsys, *base(*pair_copy), flag, value)
    assert message in line


def test_missing_files_are_refused(pair_copy, capsys, tmp_path):
    target, data, out = pair_copy
    assert "--target nowhere.pt: no such file" in fails(capsys, *base("nowhere.pt", data, out))
    assert "is a folder, not a checkpoint" in fails(capsys, *base(tmp_path, data, out))
    assert "--data nowhere: no such folder" in fails(capsys, *base(target, "nowhere", out))
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint")
    assert "cannot read checkpoint" in fails(capsys, *base(tmp_path / "garbage.pt", data, out))


def test_a_work_folder_of_another_run_is_refused(pair_copy, capsys):
    target, data, out = pair_copy
    work = os.path.splitext(out)[0] + ".work"
    os.makedirs(work)
    with open(os.path.join(work, "stages.json"), "w") as f:
        json.dump({"inputs": {"target": "/elsewhere/target.pt"}, "done": {}}, f)
    line = fails(capsys, *base(target, data, out))
    assert "holds the work of another run" in line and "target" in line


def test_the_report_recommends_the_fastest_exact_engine():
    from fairseq_fast.draft import report
    from fairseq_fast.draft.target import LANGUAGE_MODEL, TRANSLATION, TargetInfo

    small, large = report.engines("d.pt", 4000), report.engines("d.pt", 128000)
    assert not any("vocab" in name for name in small)
    assert large[f"speculative vocab {report.SHORTLIST}"]["draft_vocab"] == report.SHORTLIST

    def entry(speed, exact=True, **options):
        return {"options": dict(generator="speculative", draft_len=4, **options),
                "speed_over_default": speed, **({"identical": 1.0} if exact else {})}

    result = {"engines": {"speculative": entry(1.5), "speculative adaptive": entry(
        1.2, adaptive_draft_len=True), "speculative vocab 8192": entry(2.0, draft_vocab=8192),
        "bild": entry(3.0, exact=False)}}  # BiLD is faster, but not exact
    info = TargetInfo("t.pt", TRANSLATION, "transformer", 6, "es", "en", 1, True)
    command = report.best_command(info, "bin", "d.pt", result)
    assert command.startswith("fairseq-generate bin --path t.pt --user-dir")
    assert command.endswith("--generator speculative --draft-path d.pt --draft-len 4 "
                            "--draft-vocab 8192")
    result["engines"]["speculative adaptive"]["speed_over_default"] = 2.5
    info.kind = LANGUAGE_MODEL
    command = report.best_command(info, "bin", "d.pt", result)
    assert command.startswith("fairseq-interactive bin --task language_modeling --path t.pt")
    assert command.endswith("--draft-len 4 --adaptive-draft-len")


def test_updates_are_read_when_training_stops_before_the_first_log_interval(tmp_path):
    """A time budget that runs out before fairseq's first --log-interval leaves no train_inner
    line; the epoch's end and the validation still say how many updates were made."""
    from fairseq_fast.draft.train import _read_log

    log = tmp_path / "train.log"
    log.write_text(
        '2026-01-01 | INFO | train | {"epoch": 1, "train_loss": "9.1", '
        '"train_num_updates": "3"}\n'
        '2026-01-01 | INFO | valid | {"epoch": 1, "valid_accuracy": "12.5", '
        '"valid_num_updates": "3"}\n')
    figures = {}
    assert _read_log(str(log), 0, figures) == log.stat().st_size
    assert figures == {"updates": 3, "agreement": 12.5}
    with open(log, "a") as f:
        f.write('2026-01-01 | INFO | train_inner | {"epoch": 2, "num_updates": "10", '
                '"accuracy": "20"}\n')
    _read_log(str(log), 0, figures)
    assert figures == {"updates": 10, "agreement": 12.5, "train": 20.0}

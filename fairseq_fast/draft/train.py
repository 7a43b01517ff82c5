"""Stage `train`: word-level distillation of the draft with fairseq-train and the `draft_kd`
criterion (criterion.py), from the layer-dropped starting point, on the distillation data.

fairseq-train runs in a child process (`python -m fairseq_fast.draft.train ARGS`), which is
fairseq-train itself except for one thing: the model's config comes from the starting point's
checkpoint (the target's, with K decoder layers), so that any Transformer the tool accepts is
rebuilt exactly, whatever flags built it; the command line adds only dropout. fairseq's own
--stop-time-hours ends training when the stage's share of --hours is spent, counted over every
run (fairseq keeps the training time in its checkpoints), and a rerun resumes from
checkpoint_last.pt. The best checkpoint is the one with the highest teacher-forced agreement
with the target on the distilled valid split ("accuracy").
"""
import json
import os
import subprocess
import sys
import time
from typing import List, Optional

import torch
from tqdm import tqdm

from fairseq_fast.draft.target import LANGUAGE_MODEL, NEW_TOKENS, PROMPT_TOKENS, TargetInfo
from fairseq_fast.errors import UserError

# what the child sets on the starting point's model config
MODEL_OVERRIDES = ("dropout", "attention_dropout", "activation_dropout")
DONE_LINE = "done training in"


def batch_tokens(vocab: int, dim: int, layers: int) -> int:
    """Tokens per training batch: what a third of the free memory holds, at most 4,096 on a CPU
    (more updates in the time given; a CPU's throughput is flat past a few thousand tokens) and
    16,384 on a GPU. A token costs about six vocabulary-sized rows (the student's and the
    teacher's logits, log-probabilities and gradients) and some 40 floats per layer and
    dimension of activations."""
    per_token = 4 * (6 * vocab + 40 * dim * layers)
    if torch.cuda.is_available():
        free, cap = torch.cuda.mem_get_info()[0], 16384
    else:
        free, cap = _available_memory(), 4096
    tokens = int(free / 3 / per_token) // 256 * 256
    return max(256, min(cap, tokens))


def _available_memory() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def arguments(data_bin: str, info: TargetInfo, arch: str, init: str, save_dir: str,
              hours: float, max_tokens: int, teacher_encoder: bool,
              max_positions: Optional[tuple] = None) -> List[str]:
    """fairseq-train's command line for the stage; max_positions: the target's (source,
    target) positions, either None where it has none."""
    args = [data_bin, "--arch", arch, "--finetune-from-model", init, "--save-dir", save_dir,
            "--criterion", "draft_kd", "--teacher-path", info.path, "--kd-weight", "0.75",
            "--label-smoothing", "0.0",
            "--optimizer", "adam", "--adam-betas", "(0.9,0.98)", "--clip-norm", "0.0",
            "--lr", "5e-4", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "200",
            "--warmup-init-lr", "1e-7", "--weight-decay", "0.0",
            "--dropout", "0.1", "--attention-dropout", "0.0", "--activation-dropout", "0.0",
            "--max-tokens", str(max_tokens), "--stop-time-hours", f"{hours:.6f}",
            "--no-epoch-checkpoints", "--save-interval-updates", "200",
            "--keep-interval-updates", "1", "--best-checkpoint-metric", "accuracy",
            "--maximize-best-checkpoint-metric", "--log-format", "json", "--log-interval", "10",
            "--num-workers", "0", "--seed", "1", "--skip-invalid-size-inputs-valid-test"]
    if teacher_encoder:
        args.append("--teacher-encoder")
    source, target = max_positions or (None, None)
    if info.kind == LANGUAGE_MODEL:
        per_sample = PROMPT_TOKENS + NEW_TOKENS + 2
        args += ["--task", LANGUAGE_MODEL, "--sample-break-mode", "eos",
                 "--tokens-per-sample", str(min(per_sample, target or per_sample))]
    else:
        args += ["--task", "translation", "--source-lang", info.source_lang,
                 "--target-lang", info.target_lang]
        if source and target:
            args += ["--max-source-positions", str(source), "--max-target-positions",
                     str(target)]
    if not torch.cuda.is_available():
        args.append("--cpu")
    return args


def run(args: List[str], save_dir: str, budget: float, log_path: str) -> dict:
    """Run the child until fairseq-train ends; a progress bar over the time budget (seconds,
    over every run) shows updates and the valid agreement as fairseq logs them. Returns the
    last figures logged."""
    os.makedirs(save_dir, exist_ok=True)
    spent = training_time(save_dir)
    figures = {}
    with open(log_path, "a") as log:
        child = subprocess.Popen([sys.executable, "-m", "fairseq_fast.draft.train", *args],
                                 stdout=log, stderr=subprocess.STDOUT)
    bar = tqdm(total=round(budget), initial=min(round(spent), round(budget)), desc="train",
               unit="s", dynamic_ncols=True,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} s "
                          "[{elapsed}<{remaining}{postfix}]")
    start, offset = time.time(), 0
    try:
        while child.poll() is None:
            time.sleep(1.0)
            offset = _read_log(log_path, offset, figures)
            bar.n = min(round(spent + time.time() - start), round(budget))
            bar.set_postfix_str(_postfix(figures), refresh=False)
            bar.refresh()
    except BaseException:
        child.terminate()
        child.wait()
        bar.close()
        raise
    _read_log(log_path, offset, figures)
    bar.set_postfix_str(_postfix(figures), refresh=False)
    bar.close()
    with open(log_path, errors="replace") as f:
        text = f.read()
    if DONE_LINE not in text:
        tail = [line for line in text.splitlines() if line.strip()][-1:]
        raise UserError(f"fairseq-train stopped with status {child.returncode} before the end "
                        f"of training ({tail[0] if tail else 'no output'}); its log: {log_path}")
    return figures


def training_time(save_dir: str) -> float:
    """Training seconds in save_dir/checkpoint_last.pt (0 without one)."""
    path = os.path.join(save_dir, "checkpoint_last.pt")
    if not os.path.exists(path):
        return 0.0
    from fairseq import checkpoint_utils

    state = checkpoint_utils.load_checkpoint_to_cpu(path)
    return float(state.get("extra_state", {}).get("previous_training_time", 0.0))


def _read_log(path: str, offset: int, figures: dict) -> int:
    """Fold the JSON lines fairseq logged after `offset` into `figures`; the new offset."""
    with open(path, errors="replace") as f:
        f.seek(offset)
        text = f.read()
    end = text.rfind("\n") + 1
    for line in text[:end].splitlines():
        brace = line.find("{")
        if brace < 0:
            continue
        try:
            entry = json.loads(line[brace:])
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        # every log_interval updates ("num_updates"), and at the end of an epoch or of the time
        # budget, which may come before the first interval ("train_"/"valid_num_updates")
        for key in ("num_updates", "train_num_updates", "valid_num_updates"):
            if key in entry:
                figures["updates"] = int(float(entry[key]))
        for key, name in (("valid_accuracy", "agreement"), ("train_inner_accuracy", "train"),
                          ("accuracy", "train")):
            if key in entry:
                figures[name] = float(entry[key])
    return offset + len(text[:end].encode("utf-8", errors="replace"))


def _postfix(figures: dict) -> str:
    parts = []
    if "updates" in figures:
        parts.append(f"{figures['updates']:,} updates")
    if "agreement" in figures:
        parts.append(f"valid agreement {figures['agreement']:.1f}%")
    return ", ".join(parts)


def best_checkpoint(save_dir: str) -> str:
    for name in ("checkpoint_best.pt", "checkpoint_last.pt"):
        path = os.path.join(save_dir, name)
        if os.path.exists(path):
            return path
    raise UserError(f"no checkpoint in {save_dir}: the train stage did not save one")


# -- the child: fairseq-train with the starting point's model config --------------------------
def main(argv: Optional[List[str]] = None) -> None:
    import copy

    # run as fairseq_fast.draft.train: the package's __init__ has applied the plugin (weights-only
    # checkpoint loading) and registered draft_kd
    from fairseq import checkpoint_utils, options
    from fairseq.dataclass.utils import (convert_namespace_to_omegaconf,
                                         omegaconf_no_object_check)
    from fairseq.distributed import utils as distributed_utils
    from fairseq_cli import train
    from omegaconf import OmegaConf, open_dict

    from fairseq_fast.draft.target import model_config, option, set_option

    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, argv)
    cfg = convert_namespace_to_omegaconf(args)
    init = checkpoint_utils.load_checkpoint_to_cpu(cfg.checkpoint.finetune_from_model)
    model = copy.deepcopy(model_config(init))
    if isinstance(model, dict):
        model = OmegaConf.create(model)
    for name in MODEL_OVERRIDES:
        if option(model, name) is not None:
            set_option(model, name, getattr(args, name))
    with open_dict(cfg), omegaconf_no_object_check():  # a legacy model config: a Namespace
        cfg.model = model
    distributed_utils.call_main(cfg, train.main)


if __name__ == "__main__":
    main()

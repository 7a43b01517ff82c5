"""Train a tiny real target/draft pair with fairseq-train on a synthetic translation task, and a
tiny language model on its target side.

The task: a source sentence of words s0..s39 translates word by word, in reverse order, into
t0..t39 (a fixed permutation). Small enough to learn in a minute on 2 cores, structured enough that
a 1-layer draft agrees with a 2-layer target often but not always.

The models train side by side, each fairseq-train with one torch thread: at these sizes a second
thread only adds its synchronisation, and the cores serve the other runs instead.

    python tests/tiny_pair.py OUT_DIR     # builds OUT_DIR/{data-bin,target.pt,draft.pt,lm.pt}
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

VOCAB = 40
COMMON_TRAINING = ["--optimizer", "adam", "--lr", "3e-3", "--lr-scheduler", "inverse_sqrt",
                   "--warmup-updates", "100", "--max-tokens", "2000", "--dropout", "0.0",
                   "--no-epoch-checkpoints", "--seed", "1", "--num-workers", "0",
                   "--log-format", "none", "--disable-validation"]


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def write_corpus(raw_dir, seed=0):
    rng = random.Random(seed)
    perm = list(range(VOCAB))
    rng.shuffle(perm)
    os.makedirs(raw_dir, exist_ok=True)
    for split, n in (("train", 3000), ("valid", 100), ("test", 40)):
        with open(f"{raw_dir}/{split}.src", "w") as fs, open(f"{raw_dir}/{split}.tgt", "w") as ft:
            for _ in range(n):
                words = [rng.randrange(VOCAB) for _ in range(rng.randint(2, 12))]
                fs.write(" ".join(f"s{w}" for w in words) + "\n")
                ft.write(" ".join(f"t{perm[w]}" for w in reversed(words)) + "\n")


def train_side_by_side(jobs):
    """Run fairseq-train for every job (data, save_dir, arguments, updates) at once, one torch
    thread each; each save_dir then holds checkpoint_last.pt. A failed run raises
    CalledProcessError with its stderr, once all have ended."""
    running = []
    try:
        for data, save_dir, args, updates in jobs:
            shutil.rmtree(save_dir, ignore_errors=True)
            stderr = tempfile.TemporaryFile()
            cmd = [_bin("fairseq-train"), data, *args, "--max-update", str(updates),
                   "--save-dir", save_dir]
            running.append((subprocess.Popen(
                cmd, env=dict(os.environ, OMP_NUM_THREADS="1"), stdout=subprocess.DEVNULL,
                stderr=stderr), stderr, save_dir, updates))
        for proc, *_ in running:
            proc.wait()
    finally:
        for proc, *_ in running:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, stderr, save_dir, updates in running:
        stderr.seek(0)
        err = stderr.read()
        stderr.close()
        if proc.returncode != 0 and not _finished(save_dir, updates, err):
            raise subprocess.CalledProcessError(proc.returncode, proc.args, stderr=err)


def _finished(save_dir, updates, stderr):
    """fairseq-train sometimes aborts while the interpreter shuts down ("terminate called
    without an active exception"), after its last checkpoint is written. Accept that case only
    when the checkpoint has all the updates asked for."""
    import torch

    if not stderr.rstrip().endswith(b"terminate called without an active exception"):
        return False
    path = os.path.join(save_dir, "checkpoint_last.pt")
    if not os.path.exists(path):
        return False
    state = torch.load(path, map_location="cpu", weights_only=False)
    return state["optimizer_history"][-1]["num_updates"] >= updates


def _preprocess(*args):
    subprocess.run([_bin("fairseq-preprocess"), *args, "--workers", "1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _language_model_job(pair_dir):
    """pair_dir/lm-bin (dict.txt, train, valid), and the training job of the language model."""
    raw, lm_bin = os.path.join(pair_dir, "raw"), os.path.join(pair_dir, "lm-bin")
    shutil.rmtree(lm_bin, ignore_errors=True)
    _preprocess("--only-source", "--trainpref", f"{raw}/train.tgt", "--validpref",
                f"{raw}/valid.tgt", "--destdir", lm_bin)
    args = ["--task", "language_modeling", "--arch", "transformer_lm", "--decoder-layers", "2",
            "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
            "--decoder-attention-heads", "2", "--share-decoder-input-output-embed",
            "--tokens-per-sample", "64", "--sample-break-mode", "eos", "--criterion",
            "cross_entropy", *COMMON_TRAINING]
    return lm_bin, os.path.join(pair_dir, "ckpt_lm"), args, 300


def build(out_dir):
    """Build the pair and the language model in out_dir (idempotent: a finished build is
    reused)."""
    done = os.path.join(out_dir, "DONE")
    if os.path.exists(done):
        return out_dir
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    raw = os.path.join(out_dir, "raw")
    write_corpus(raw)
    data_bin = os.path.join(out_dir, "data-bin")
    _preprocess("--source-lang", "src", "--target-lang", "tgt", "--trainpref", f"{raw}/train",
                "--validpref", f"{raw}/valid", "--testpref", f"{raw}/test", "--destdir",
                data_bin)
    common = ["--task", "translation", "--arch", "transformer", "--encoder-embed-dim", "32",
              "--encoder-ffn-embed-dim", "64", "--encoder-attention-heads", "2",
              "--decoder-attention-heads", "2", "--max-source-positions", "64",
              "--max-target-positions", "64", "--criterion", "cross_entropy", *COMMON_TRAINING]
    jobs, names = [], []
    for name, layers, dim, updates in (("target", 2, 32, 500), ("draft", 1, 16, 300)):
        jobs.append((data_bin, os.path.join(out_dir, f"ckpt_{name}"), common + [
            "--encoder-layers", "1", "--decoder-layers", str(layers),
            "--decoder-embed-dim", str(dim), "--decoder-ffn-embed-dim", str(2 * dim),
            "--share-decoder-input-output-embed"], updates))
        names.append(f"{name}.pt")
    jobs.append(_language_model_job(out_dir))
    names.append("lm.pt")
    train_side_by_side(jobs)
    for (_, save, _, _), name in zip(jobs, names):
        shutil.move(os.path.join(save, "checkpoint_last.pt"), os.path.join(out_dir, name))
        shutil.rmtree(save)
    open(done, "w").close()
    return out_dir


def build_language_model(pair_dir):
    """The tiny Transformer language model on the pair's target side: pair_dir/lm.pt, with its
    data in pair_dir/lm-bin (dict.txt, train, valid). build() makes it with the pair; this makes
    it alone where it is missing."""
    path = os.path.join(pair_dir, "lm.pt")
    if not os.path.exists(path):
        job = _language_model_job(pair_dir)
        train_side_by_side([job])
        shutil.move(os.path.join(job[1], "checkpoint_last.pt"), path)
        shutil.rmtree(job[1])
    return path


if __name__ == "__main__":
    build(sys.argv[1])

"""Train a tiny real target/draft pair with fairseq-train on a synthetic translation task.

The task: a source sentence of words s0..s39 translates word by word, in reverse order, into
t0..t39 (a fixed permutation). Small enough to learn in a minute on 2 cores, structured enough that
a 1-layer draft agrees with a 2-layer target often but not always.

    python tests/tiny_pair.py OUT_DIR     # builds OUT_DIR/{data-bin,target.pt,draft.pt}
"""
import os
import random
import shutil
import subprocess
import sys

VOCAB = 40


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


def train(data_bin, save_dir, arch_args, updates):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    result = subprocess.run(
        [_bin("fairseq-train"), data_bin, "--task", "translation", "--arch", "transformer",
         "--optimizer", "adam", "--lr", "3e-3", "--lr-scheduler", "inverse_sqrt",
         "--warmup-updates", "100", "--max-tokens", "2000", "--max-update", str(updates),
         "--dropout", "0.0", "--criterion", "cross_entropy", "--no-epoch-checkpoints",
         "--save-dir", save_dir, "--seed", "1",
         "--num-workers", "0", "--log-format", "none", "--disable-validation",
         "--max-source-positions", "64", "--max-target-positions", "64", *arch_args],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if result.returncode != 0 and not _finished(save_dir, updates, result.stderr):
        raise subprocess.CalledProcessError(result.returncode, result.args, stderr=result.stderr)


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


def build(out_dir):
    """Build the pair in out_dir (idempotent: a finished build is reused)."""
    done = os.path.join(out_dir, "DONE")
    if os.path.exists(done):
        return out_dir
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    raw = os.path.join(out_dir, "raw")
    write_corpus(raw)
    data_bin = os.path.join(out_dir, "data-bin")
    subprocess.run(
        [_bin("fairseq-preprocess"), "--source-lang", "src", "--target-lang", "tgt",
         "--trainpref", f"{raw}/train", "--validpref", f"{raw}/valid", "--testpref",
         f"{raw}/test", "--destdir", data_bin, "--workers", "1"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    common = ["--encoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64",
              "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]
    for name, layers, dim, updates in (("target", 2, 32, 500), ("draft", 1, 16, 300)):
        save = os.path.join(out_dir, f"ckpt_{name}")
        train(data_bin, save, common + [
            "--encoder-layers", "1", "--decoder-layers", str(layers),
            "--decoder-embed-dim", str(dim), "--decoder-ffn-embed-dim", str(2 * dim),
            "--share-decoder-input-output-embed"], updates)
        shutil.move(os.path.join(save, "checkpoint_last.pt"), os.path.join(out_dir, f"{name}.pt"))
        shutil.rmtree(save)
    open(done, "w").close()
    return out_dir


def build_language_model(pair_dir):
    """A tiny Transformer language model on the pair's target side (idempotent): pair_dir/lm-bin
    (dict.txt, train, valid) and pair_dir/lm.pt."""
    path = os.path.join(pair_dir, "lm.pt")
    if os.path.exists(path):
        return path
    raw, lm_bin = os.path.join(pair_dir, "raw"), os.path.join(pair_dir, "lm-bin")
    shutil.rmtree(lm_bin, ignore_errors=True)
    subprocess.run(
        [_bin("fairseq-preprocess"), "--only-source", "--trainpref", f"{raw}/train.tgt",
         "--validpref", f"{raw}/valid.tgt", "--destdir", lm_bin, "--workers", "1"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    save = os.path.join(pair_dir, "ckpt_lm")
    result = subprocess.run(
        [_bin("fairseq-train"), lm_bin, "--task", "language_modeling", "--arch", "transformer_lm",
         "--decoder-layers", "2", "--decoder-embed-dim", "32", "--decoder-ffn-embed-dim", "64",
         "--decoder-attention-heads", "2", "--share-decoder-input-output-embed",
         "--tokens-per-sample", "64", "--sample-break-mode", "eos", "--optimizer", "adam",
         "--lr", "3e-3", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "100",
         "--max-tokens", "2000", "--max-update", "300", "--dropout", "0.0",
         "--criterion", "cross_entropy", "--no-epoch-checkpoints", "--save-dir", save,
         "--seed", "1", "--num-workers", "0", "--log-format", "none", "--disable-validation"],
        env=dict(os.environ, OMP_NUM_THREADS="2"), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    if result.returncode != 0 and not _finished(save, 300, result.stderr):
        raise subprocess.CalledProcessError(result.returncode, result.args, stderr=result.stderr)
    shutil.move(os.path.join(save, "checkpoint_last.pt"), path)
    shutil.rmtree(save)
    return path


if __name__ == "__main__":
    build(sys.argv[1])

"""Tiny real models of fairseq configurations the fast path once got wrong, trained with
fairseq-train on the tiny pair's corpus (tiny_pair.py): each is decoded through the real CLIs in
test_model_gate.py, with and without the plugin.

    quant_noise       transformer, --quant-noise-pq 0.1 --quant-noise-pq-block-size 8 (its
                      decoder projects the embeddings once more)
    prenorm_nopos     transformer, pre-norm, --no-token-positional-embeddings,
                      --layernorm-embedding
    adaptive_lm       transformer_lm on the target side, --adaptive-input, an adaptive softmax,
                      --tie-adaptive-weights (fairseq's wiki103 configuration, tiny)

    python tests/model_zoo.py TINY_PAIR_DIR OUT_DIR
"""
import os
import shutil
import subprocess
import sys

from tiny_pair import _bin, _finished

TRANSLATION = ["--task", "translation", "--arch", "transformer", "--encoder-layers", "1",
               "--decoder-layers", "2", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
               "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
               "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
               "--share-decoder-input-output-embed", "--criterion", "cross_entropy",
               "--max-source-positions", "64",
               "--max-target-positions", "64"]
CONFIGS = {
    "quant_noise": (TRANSLATION + ["--quant-noise-pq", "0.1",
                                   "--quant-noise-pq-block-size", "8"], 400),
    "prenorm_nopos": (TRANSLATION + ["--encoder-normalize-before", "--decoder-normalize-before",
                                     "--no-token-positional-embeddings",
                                     "--layernorm-embedding"], 400),
    "adaptive_lm": (["--task", "language_modeling", "--arch", "transformer_lm",
                     "--decoder-layers", "2", "--decoder-embed-dim", "32",
                     "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "2",
                     "--adaptive-input", "--adaptive-input-cutoff", "10,20",
                     "--adaptive-softmax-cutoff", "10,20", "--tie-adaptive-weights",
                     "--decoder-input-dim", "32", "--decoder-output-dim", "32",
                     "--criterion", "adaptive_loss", "--ddp-backend", "legacy_ddp",
                     "--tokens-per-sample", "64", "--sample-break-mode", "eos",
                     "--max-target-positions", "64"], 400),
}


def _lm_data(pair: str, out: str) -> str:
    """The tiny corpus's target side as fairseq-preprocess --only-source data."""
    data = os.path.join(out, "lm-bin")
    if not os.path.exists(os.path.join(data, "dict.txt")):
        raw = os.path.join(pair, "raw")
        subprocess.run(
            [_bin("fairseq-preprocess"), "--only-source", "--trainpref", f"{raw}/train.tgt",
             "--validpref", f"{raw}/valid.tgt", "--testpref", f"{raw}/test.tgt",
             "--srcdict", os.path.join(pair, "data-bin", "dict.tgt.txt"), "--destdir", data,
             "--workers", "1"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return data


def _train(data: str, save: str, args, updates: int) -> None:
    env = dict(os.environ, OMP_NUM_THREADS="2")
    result = subprocess.run(
        [_bin("fairseq-train"), data, *args, "--optimizer", "adam", "--lr", "3e-3",
         "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "100", "--max-tokens", "2000",
         "--max-update", str(updates), "--dropout", "0.0",
         "--no-epoch-checkpoints", "--save-dir", save, "--seed", "1", "--num-workers", "0",
         "--log-format", "none", "--disable-validation"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if result.returncode != 0 and not _finished(save, updates, result.stderr):
        raise subprocess.CalledProcessError(result.returncode, result.args, stderr=result.stderr)


def build(pair: str, out: str) -> str:
    """out/<name>.pt for every configuration, and out/lm-bin (idempotent)."""
    os.makedirs(out, exist_ok=True)
    for name, (args, updates) in CONFIGS.items():
        path = os.path.join(out, f"{name}.pt")
        if os.path.exists(path):
            continue
        lm = "language_modeling" in args
        data = _lm_data(pair, out) if lm else os.path.join(pair, "data-bin")
        save = os.path.join(out, f"ckpt_{name}")
        shutil.rmtree(save, ignore_errors=True)
        _train(data, save, args, updates)
        os.replace(os.path.join(save, "checkpoint_last.pt"), path + ".tmp")
        os.replace(path + ".tmp", path)
        shutil.rmtree(save)
    return out


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])

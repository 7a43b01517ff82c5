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

from tiny_pair import COMMON_TRAINING, _bin, train_side_by_side

TRANSLATION = ["--task", "translation", "--arch", "transformer", "--encoder-layers", "1",
               "--decoder-layers", "2", "--encoder-embed-dim", "32", "--decoder-embed-dim", "32",
               "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
               "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
               "--share-decoder-input-output-embed", "--criterion", "cross_entropy",
               "--max-source-positions", "64", "--max-target-positions", "64",
               *COMMON_TRAINING]
CONFIGS = {
    "quant_noise": (TRANSLATION + ["--quant-noise-pq", "0.1",
                                   "--quant-noise-pq-block-size", "8"], 200),
    "prenorm_nopos": (TRANSLATION + ["--encoder-normalize-before", "--decoder-normalize-before",
                                     "--no-token-positional-embeddings",
                                     "--layernorm-embedding"], 200),
    "adaptive_lm": (["--task", "language_modeling", "--arch", "transformer_lm",
                     "--decoder-layers", "2", "--decoder-embed-dim", "32",
                     "--decoder-ffn-embed-dim", "64", "--decoder-attention-heads", "2",
                     "--adaptive-input", "--adaptive-input-cutoff", "10,20",
                     "--adaptive-softmax-cutoff", "10,20", "--tie-adaptive-weights",
                     "--decoder-input-dim", "32", "--decoder-output-dim", "32",
                     "--criterion", "adaptive_loss", "--ddp-backend", "legacy_ddp",
                     "--tokens-per-sample", "64", "--sample-break-mode", "eos",
                     "--max-target-positions", "64", *COMMON_TRAINING], 200),
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


def build(pair: str, out: str) -> str:
    """out/<name>.pt for every configuration, and out/lm-bin (idempotent); the missing ones
    train side by side."""
    os.makedirs(out, exist_ok=True)
    jobs = {}
    for name, (args, updates) in CONFIGS.items():
        if os.path.exists(os.path.join(out, f"{name}.pt")):
            continue
        lm = "language_modeling" in args
        data = _lm_data(pair, out) if lm else os.path.join(pair, "data-bin")
        jobs[name] = (data, os.path.join(out, f"ckpt_{name}"), args, updates)
    train_side_by_side(list(jobs.values()))
    for name, (_, save, _, _) in jobs.items():
        path = os.path.join(out, f"{name}.pt")
        os.replace(os.path.join(save, "checkpoint_last.pt"), path + ".tmp")
        os.replace(path + ".tmp", path)
        shutil.rmtree(save)
    return out


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])

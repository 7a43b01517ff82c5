#!/usr/bin/env python3
"""Sequence-level distillation data: the target's greedy translations of the training and
validation sources, binarised with the same dictionary, for training the draft.

    python scripts/make_distill_data.py --target work/ckpt/target/checkpoint_best.pt \
        --data work/data --out work/distill

Greedy (beam 1) because that is what speculative greedy verifies against: a draft that predicts
the target's greedy choices has a high acceptance rate α. Rows fairseq-generate skips (empty or
too long) are left out of the distilled set.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo import read_hypotheses  # noqa: E402


def translate(fairseq_bin, data_bin, target, split, out_dir):
    """fairseq-generate's output for one split; reused if an earlier run left it complete."""
    text_file = os.path.join(out_dir, f"generate.{split}.txt")
    if not os.path.exists(text_file):
        run_generate(fairseq_bin, data_bin, target, split, text_file)
    with open(text_file, encoding="utf-8") as f:
        return {i: text for i, (_, text) in read_hypotheses(f.read()).items()}


def run_generate(fairseq_bin, data_bin, target, split, text_file):
    cmd = [os.path.join(fairseq_bin, "fairseq-generate"), data_bin,
           "--user-dir", os.path.join(os.path.dirname(__file__), "..", "fairseq_fast"),
           "--task", "translation", "-s", "es", "-t", "en", "--gen-subset", split,
           "--path", target, "--beam", "1", "--max-tokens", "8000", "--batch-size", "200",
           "--num-workers", "0"]
    with open(text_file + ".part", "w", encoding="utf-8") as out, \
            open(text_file[:-4] + ".log", "w") as log:
        subprocess.run(cmd, check=True, stdout=out, stderr=log)
    os.replace(text_file + ".part", text_file)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--data", default="work/data", help="prepare_data.py output folder")
    ap.add_argument("--out", default="work/distill")
    args = ap.parse_args()
    fairseq_bin = os.path.dirname(sys.executable)
    tok = os.path.join(args.out, "tok")
    os.makedirs(tok, exist_ok=True)
    for split in ("valid", "train"):
        hyps = translate(fairseq_bin, os.path.join(args.data, "bin"), args.target, split, args.out)
        with open(os.path.join(args.data, "tok", f"{split}.es"), encoding="utf-8") as f:
            sources = f.read().splitlines()
        with open(os.path.join(tok, f"{split}.es"), "w", encoding="utf-8") as fs, \
                open(os.path.join(tok, f"{split}.en"), "w", encoding="utf-8") as ft:
            for i, src in enumerate(sources):
                if hyps.get(i, "").strip():
                    fs.write(src + "\n")
                    ft.write(hyps[i] + "\n")
        print(f"[distill] {split}: {len(hyps)} of {len(sources)} sources translated")
    dict_file = os.path.join(args.data, "bin", "dict.es.txt")  # joined dictionary
    subprocess.run(
        [os.path.join(fairseq_bin, "fairseq-preprocess"), "--source-lang", "es", "--target-lang", "en",
         "--trainpref", os.path.join(tok, "train"), "--validpref", os.path.join(tok, "valid"),
         "--destdir", os.path.join(args.out, "bin"), "--srcdict", dict_file, "--tgtdict", dict_file,
         "--workers", "2"],
        check=True, stdout=subprocess.DEVNULL)
    print(f"[distill] binarised to {os.path.join(args.out, 'bin')}")


if __name__ == "__main__":
    main()

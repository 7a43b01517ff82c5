#!/usr/bin/env python3
"""Export trained checkpoints as half-precision, weights-only files for user_dir_examples/.

    python scripts/export_demo_models.py --target work/ckpt/target/checkpoint_best.pt \
        --draft work/ckpt/kd/checkpoint_best.pt --data work/data --out user_dir_examples/bible_es_en

Either may be left out (that file is then not rewritten). Each is written as fairseq-fast-draft
exports a draft (fairseq_fast/draft/export.py: the model config and the float16 weights, nothing
else). Copies the dictionaries, the sentencepiece model and the raw test set beside them.
"""
import argparse
import os
import shutil

from fairseq_fast.draft.export import slim


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", help="target checkpoint (left as it is when not given)")
    ap.add_argument("--draft", help="draft checkpoint (left as it is when not given)")
    ap.add_argument("--draft-name", default="draft.pt",
                    help="the draft's file name in --out (draft_big.pt for stage `big`)")
    ap.add_argument("--data", default="work/data", help="prepare_data.py output folder")
    ap.add_argument("--out", default="user_dir_examples/bible_es_en")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for src, name in ((args.target, "target.pt"), (args.draft, args.draft_name)):
        if src:
            total += slim(src, os.path.join(args.out, name))
    copies = [("bin/dict.es.txt", "dict.es.txt"), ("bin/dict.en.txt", "dict.en.txt"),
              ("spm.model", "spm.model"), ("raw/test.es", "test.es"), ("raw/test.en", "test.en"),
              ("raw/test.ref", "test.ref")]
    for src, dst in copies:
        shutil.copy(os.path.join(args.data, src), os.path.join(args.out, dst))
        total += os.path.getsize(os.path.join(args.out, dst))
    print(f"[export] {args.out}: {total / 2**20:.1f} MiB in all")


if __name__ == "__main__":
    main()

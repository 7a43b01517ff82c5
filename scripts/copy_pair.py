#!/usr/bin/env python3
"""A copy-heavy model pair from the project's own data: English -> English denoising, shaped like
grammatical error correction (the output is mostly the input, with a few edits).

    python scripts/copy_pair.py [--out work/copy] [--hours 0.7] [--draft-hours 0.25]

Stages, each skipped when its output is there (a run cut short resumes):
  data    the demo corpus's English side (scripts/prepare_data.py's split by book, made when
          missing: from ../shared/data's TSV where there is one, else from Debian's packages).
          Each clean line gets synthetic noise, word by word (seeded): a word is dropped (5%),
          swapped with the next (4%), repeated (3%) or misspelt (8%: a letter deleted, inserted,
          replaced, or two swapped). The clean line is the target. Training pairs are single
          verses and, so that long inputs are seen, the same verses again in paragraphs of 2 to 8
          consecutive verses of one book. Test: the test verses (split `test`) and paragraphs of 8
          consecutive test verses (`test1`, several hundred tokens each: the long-source
          setting). Encoded with the demo pair's sentencepiece model and binarised with its
          joined dictionary for both sides (source `noisy`, target `en`), so a source token is a
          target token: n-gram lookup may copy from the source.
  train   fairseq-train: the demo target's shape (transformer, 4 encoder + 6 decoder layers x
          256, FFN 1024, pre-norm, all embeddings shared), label smoothing 0.1, for --hours.
          It starts from the demo target's weights (--finetune-from-model; same shape, same
          joined dictionary): its decoder already writes English, so within a short budget it
          learns to copy; --from-scratch starts from random weights instead.
  export  the best checkpoint as float16 weights only: OUT/target.pt (dictionaries beside it).
  draft   fairseq-fast-draft --hours --draft-hours on it: OUT/draft.pt (the model draft the
          benchmarks compare with; --draft-hours 0 skips it).
"""
import argparse
import os
import random
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "user_dir_examples", "bible_es_en")
BIN = os.path.dirname(sys.executable)
SRC, TGT = "noisy", "en"
NOISE = dict(drop=0.05, swap=0.04, repeat=0.03, misspell=0.08)
LETTERS = "abcdefghijklmnopqrstuvwxyz"
LONG = 8  # verses per test paragraph


def misspell(word: str, rng: random.Random) -> str:
    if len(word) < 3:
        return word
    i = rng.randrange(len(word))
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1:]
    if op == 1:
        return word[:i] + rng.choice(LETTERS) + word[i:]
    if op == 2:
        return word[:i] + rng.choice(LETTERS) + word[i + 1:]
    i = min(i, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def noisy(line: str, rng: random.Random) -> str:
    words, out, i = line.split(), [], 0
    while i < len(words):
        w, r = words[i], rng.random()
        if r < NOISE["drop"]:
            pass
        elif r < NOISE["drop"] + NOISE["swap"] and i + 1 < len(words):
            out += [words[i + 1], w]
            i += 1
        elif r < NOISE["drop"] + NOISE["swap"] + NOISE["repeat"]:
            out += [w, w]
        elif r < sum(NOISE.values()):
            out.append(misspell(w, rng))
        else:
            out.append(w)
        i += 1
    return " ".join(out) or line


def books(refs):
    """The book of each verse reference ("Book C:V")."""
    return [ref.rsplit(" ", 1)[0] for ref in refs]


def paragraphs(lines, refs, rng, lengths):
    """Consecutive verses of one book joined, `lengths()` verses each."""
    out, i, book = [], 0, books(refs)
    while i < len(lines):
        n = lengths()
        j = i + 1
        while j < min(i + n, len(lines)) and book[j] == book[i]:
            j += 1
        out.append(" ".join(lines[i:j]))
        i = j
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def make_data(out, seed=1):
    import sentencepiece as spm

    sys.path.insert(0, ROOT)
    from benchmarks.models import training_data

    data = os.path.dirname(training_data())  # work/data
    raw = os.path.join(data, "raw")
    rng = random.Random(seed)
    sets = {}
    for split in ("train", "valid", "test"):
        lines = read(os.path.join(raw, f"{split}.en"))
        refs = read(os.path.join(raw, f"{split}.ref"))
        clean = list(lines)
        if split == "train":
            clean += paragraphs(lines, refs, rng, lambda: rng.randint(2, 8))
        sets[split] = clean
        if split == "test":
            sets["test1"] = paragraphs(lines, refs, rng, lambda: LONG)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(EXAMPLE, "spm.model"))
    tok = os.path.join(out, "tok")
    os.makedirs(tok, exist_ok=True)
    for split, clean in sets.items():
        with open(os.path.join(tok, f"{split}.{SRC}"), "w", encoding="utf-8") as fs, \
                open(os.path.join(tok, f"{split}.{TGT}"), "w", encoding="utf-8") as ft, \
                open(os.path.join(tok, f"{split}.raw.{SRC}"), "w", encoding="utf-8") as fr:
            for line in clean:
                bad = noisy(line, rng)
                fr.write(bad + "\n")
                fs.write(" ".join(sp.encode(bad, out_type=str)) + "\n")
                ft.write(" ".join(sp.encode(line, out_type=str)) + "\n")
        print(f"[copy] {split}: {len(clean)} pairs", flush=True)
    dest = os.path.join(out, "data-bin")
    subprocess.run([os.path.join(BIN, "fairseq-preprocess"), "--source-lang", SRC,
                    "--target-lang", TGT, "--srcdict", os.path.join(EXAMPLE, "dict.en.txt"),
                    "--tgtdict", os.path.join(EXAMPLE, "dict.en.txt"),
                    "--trainpref", os.path.join(tok, "train"),
                    "--validpref", os.path.join(tok, "valid"),
                    "--testpref", f"{os.path.join(tok, 'test')},{os.path.join(tok, 'test1')}",
                    "--destdir", dest, "--workers", "2"], check=True,
                   stdout=subprocess.DEVNULL)
    return dest


def train(data, save, hours, init=None):
    start = (["--finetune-from-model", init, "--warmup-updates", "100"] if init
             else ["--warmup-updates", "400"])
    subprocess.run(
        [os.path.join(BIN, "fairseq-train"), data, "--task", "translation",
         "--source-lang", SRC, "--target-lang", TGT, "--arch", "transformer",
         "--share-all-embeddings", "--encoder-layers", "4", "--decoder-layers", "6",
         "--encoder-embed-dim", "256", "--decoder-embed-dim", "256",
         "--encoder-ffn-embed-dim", "1024", "--decoder-ffn-embed-dim", "1024",
         "--encoder-attention-heads", "4", "--decoder-attention-heads", "4",
         "--encoder-normalize-before", "--decoder-normalize-before",
         "--dropout", "0.1", "--attention-dropout", "0.0",
         "--optimizer", "adam", "--adam-betas", "(0.9,0.98)", "--clip-norm", "0.0",
         "--lr", "1e-3", "--lr-scheduler", "inverse_sqrt", *start,
         "--warmup-init-lr", "1e-7", "--criterion", "label_smoothed_cross_entropy",
         "--label-smoothing", "0.1", "--max-tokens", "4096", "--stop-time-hours", str(hours),
         "--max-source-positions", "1024", "--max-target-positions", "1024",
         "--save-dir", save, "--no-epoch-checkpoints", "--num-workers", "0", "--seed", "1",
         "--log-format", "simple", "--log-interval", "50"],
        check=True, env=dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1"))


def build(out, hours, draft_hours=0.0, from_scratch=False):
    """OUT/target.pt (and OUT/draft.pt with draft_hours), made when missing; their paths and
    the data-bin. The target starts from the demo target's weights, or from random ones with
    from_scratch."""
    from fairseq_fast.draft.export import slim

    data = os.path.join(out, "data-bin")
    if not os.path.exists(os.path.join(data, f"test1.{SRC}-{TGT}.{SRC}.bin")):
        data = make_data(out)
    target = os.path.join(out, "target.pt")
    if not os.path.exists(target):
        save = os.path.join(out, "ckpt")
        train(data, save, hours, None if from_scratch else os.path.join(EXAMPLE, "target.pt"))
        for lang in (SRC, TGT):
            shutil.copy(os.path.join(data, f"dict.{lang}.txt"), out)
        slim(os.path.join(save, "checkpoint_best.pt"), target, data=".")
    draft = os.path.join(out, "draft.pt")
    if draft_hours and not os.path.exists(draft):
        subprocess.run([os.path.join(BIN, "fairseq-fast-draft"), "--target", target,
                        "--data", data, "--out", draft, "--source-lang", SRC,
                        "--target-lang", TGT, "--hours", str(draft_hours)], check=True)
    return target, (draft if os.path.exists(draft) else None), data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "copy"))
    ap.add_argument("--hours", type=float, default=0.7, help="training time of the target")
    ap.add_argument("--draft-hours", type=float, default=0.25,
                    help="fairseq-fast-draft's --hours for its draft (0: no draft)")
    ap.add_argument("--from-scratch", action="store_true",
                    help="train the target from random weights, not from the demo target's")
    args = ap.parse_args()
    target, draft, data = build(args.out, args.hours, args.draft_hours, args.from_scratch)
    print(f"[copy] target {target}, draft {draft}, data {data}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Build the Spanish->English Bible corpus, split it by book, train sentencepiece and binarise.

    python scripts/prepare_data.py --out work/data [--tsv bible_es_en.tsv]

Without --tsv the corpus is rebuilt from Debian's SWORD modules (needs
`apt-get install diatheke sword-text-sparv sword-text-kjv`), exactly as
shared/data/README.md describes: every "Book C:V: text" line is a verse, other lines
(KJV Psalm titles) are dropped, markup is stripped, whitespace folded, text NFC-normalised,
and only verses present in both modules are kept, in canonical order.

The split is by book, so test verses come from books never trained on.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import unicodedata

SPANISH_MODULE = "spaRV1909eb"
ENGLISH_MODULE = "engKJV2006eb"
TEST_BOOKS = ["Ruth", "Esther", "Joel", "Amos", "Jonah", "Galatians", "Ephesians", "Titus",
              "Philemon", "James", "I Peter", "Jude"]
VALID_BOOKS = ["Obadiah", "Nahum", "Habakkuk", "Colossians"]
VERSE_LINE = re.compile(r"^([1-3I]* ?[A-Z][A-Za-z ]*?) (\d+):(\d+):(.*)$")
TAG = re.compile(r"<[^>]*>")


def clean(text):
    text = TAG.sub(" ", text)
    text = " ".join(text.split())
    return unicodedata.normalize("NFC", text)


def read_module(module):
    """Return an ordered dict ref -> verse text from one SWORD module via diatheke."""
    try:
        out = subprocess.run(
            ["diatheke", "-b", module, "-f", "plain", "-k", "Genesis 1:1-Revelation 22:21"],
            check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit("prepare_data: diatheke not found; run `apt-get install diatheke "
                 "sword-text-sparv sword-text-kjv` or pass --tsv PATH")
    verses = collections.OrderedDict()
    for line in out.splitlines():
        m = VERSE_LINE.match(line.strip())
        if m:
            book, chap, verse, text = m.groups()
            text = clean(text)
            if text:
                verses[f"{book} {chap}:{verse}"] = text
    return verses


def rebuild_from_debian():
    es, en = read_module(SPANISH_MODULE), read_module(ENGLISH_MODULE)
    return [(ref, es[ref], en[ref]) for ref in es if ref in en]


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != ["ref", "es", "en"]:
            sys.exit(f"prepare_data: {path}: expected header 'ref\\tes\\ten', got {header}")
        for line in f:
            ref, es, en = line.rstrip("\n").split("\t")
            rows.append((ref, es, en))
    return rows


def book_of(ref):
    return ref.rsplit(" ", 1)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--tsv", help="use this ref/es/en TSV instead of rebuilding from Debian")
    ap.add_argument("--vocab-size", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    rows = read_tsv(args.tsv) if args.tsv else rebuild_from_debian()
    os.makedirs(args.out, exist_ok=True)
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    splits = collections.defaultdict(list)
    for ref, es, en in rows:
        book = book_of(ref)
        split = "test" if book in TEST_BOOKS else "valid" if book in VALID_BOOKS else "train"
        splits[split].append((ref, es, en))
    for split, items in splits.items():
        for i, lang in ((0, "ref"), (1, "es"), (2, "en")):
            with open(os.path.join(raw, f"{split}.{lang}"), "w", encoding="utf-8") as f:
                f.writelines(item[i] + "\n" for item in items)
        print(f"[data] {split}: {len(items)} pairs")

    import sentencepiece as spm
    spm_prefix = os.path.join(args.out, "spm")
    with open(os.path.join(raw, "spm_train.txt"), "w", encoding="utf-8") as f:
        for _, es, en in splits["train"]:
            f.write(es + "\n" + en + "\n")
    spm.SentencePieceTrainer.train(
        input=os.path.join(raw, "spm_train.txt"), model_prefix=spm_prefix,
        vocab_size=args.vocab_size, character_coverage=1.0, model_type="unigram",
        num_threads=args.workers, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=spm_prefix + ".model")
    tok = os.path.join(args.out, "tok")
    os.makedirs(tok, exist_ok=True)
    for split, items in splits.items():
        for i, lang in ((1, "es"), (2, "en")):
            with open(os.path.join(tok, f"{split}.{lang}"), "w", encoding="utf-8") as f:
                for item in items:
                    f.write(" ".join(sp.encode(item[i], out_type=str)) + "\n")
    bin_dir = os.path.join(args.out, "bin")
    subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "fairseq-preprocess"),
         "--source-lang", "es", "--target-lang", "en",
         "--trainpref", os.path.join(tok, "train"), "--validpref", os.path.join(tok, "valid"),
         "--testpref", os.path.join(tok, "test"), "--destdir", bin_dir,
         "--joined-dictionary", "--workers", str(args.workers)],
        check=True, stdout=subprocess.DEVNULL)
    print(f"[data] binarised to {bin_dir}")


if __name__ == "__main__":
    main()

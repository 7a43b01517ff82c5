#!/usr/bin/env python3
"""`make demo`: translate the Bible test set with stock greedy and speculative greedy.

Both runs are the real `fairseq-generate` on the committed demo pair (user_dir_examples/
bible_es_en); the stock run loads no plugin. Checks the hypotheses are identical and prints speed,
speedup, acceptance rate and BLEU (sacrebleu, detokenised).
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "user_dir_examples", "bible_es_en")
COUNTS = os.path.join(EXAMPLE, "counts.en.txt")  # English token counts, for --draft-vocab
WORK = os.path.join(ROOT, "work", "demo")
BIN = os.path.dirname(sys.executable)


def encode_test(lang, sentences=None):
    """The raw test set's `lang` side (its first `sentences` lines when given) as sentencepiece
    pieces, one list per line."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=os.path.join(EXAMPLE, "spm.model"))
    with open(os.path.join(EXAMPLE, f"test.{lang}"), encoding="utf-8") as f:
        return [sp.encode(line.strip(), out_type=str) for line in f.readlines()[:sentences]]


def binarise(sentences=None):
    """Sentencepiece-encode and binarise the raw test set (its first `sentences` pairs when
    given) with the committed dictionaries; returns the data folder."""
    name = "bin" if sentences is None else f"bin-first{sentences}"
    out = os.path.join(WORK, name)
    if os.path.exists(os.path.join(out, "test.es-en.en.bin")):
        return out
    tok = os.path.join(WORK, "tok" if sentences is None else f"tok-first{sentences}")
    os.makedirs(tok, exist_ok=True)
    for lang in ("es", "en"):
        with open(os.path.join(tok, f"test.{lang}"), "w", encoding="utf-8") as g:
            for pieces in encode_test(lang, sentences):
                g.write(" ".join(pieces) + "\n")
    subprocess.run([os.path.join(BIN, "fairseq-preprocess"), "--source-lang", "es",
                    "--target-lang", "en", "--testpref", os.path.join(tok, "test"),
                    "--destdir", out, "--srcdict", os.path.join(EXAMPLE, "dict.es.txt"),
                    "--tgtdict", os.path.join(EXAMPLE, "dict.en.txt"), "--workers", "2"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def generate(data, batch_size, plugin, model="target.pt", draft_len=4, draft_vocab=0):
    env = dict(os.environ)
    cmd = [os.path.join(BIN, "fairseq-generate"), data, "--path",
           os.path.join(EXAMPLE, model), "--gen-subset", "test", "--beam", "1",
           "--batch-size", str(batch_size), "--remove-bpe", "sentencepiece",
           "--source-lang", "es", "--target-lang", "en",
           # fairseq's default multiple of 8 can leave the longest sentences untranslated
           "--required-batch-size-multiple", "1"]
    if plugin:
        cmd += ["--user-dir", os.path.join(ROOT, "fairseq_fast"), "--generator", "speculative",
                "--draft-path", os.path.join(EXAMPLE, "draft.pt"), "--draft-len", str(draft_len)]
        if draft_vocab:  # the draft scores only the most frequent English tokens
            cmd += ["--draft-vocab", str(draft_vocab),
                    "--draft-vocab-counts", COUNTS]
        env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    else:  # stock fairseq 0.12 cannot load checkpoints on torch >= 2.6 without this
        env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"demo: fairseq-generate failed:\n{result.stderr[-3000:]}")
    log = result.stdout + result.stderr
    hyps = read_hypotheses(result.stdout)
    timing = re.search(r"Translated ([\d,]+) sentences .* in ([\d.]+)s \(([\d.]+) sentences/s", log)
    alpha = re.search(r"acceptance rate alpha ([\d.]+)", log)
    per_call = re.search(r"mean accepted tokens per target call ([\d.]+)", log)
    return {"hyps": hyps, "seconds": float(timing.group(2)),
            "sentences_per_s": float(timing.group(3)),
            "alpha": float(alpha.group(1)) if alpha else None,
            "tokens_per_call": float(per_call.group(1)) if per_call else None}


def read_hypotheses(stdout):
    """fairseq-generate's H- lines -> {sentence id: (score, text)}"""
    hyps = {}
    for line in stdout.splitlines():
        if line.startswith("H-"):
            ident, score, text = line.split("\t")
            hyps[int(ident[2:])] = (float(score), text)
    return hyps


def bleu(hyps):
    import sacrebleu

    with open(os.path.join(EXAMPLE, "test.en"), encoding="utf-8") as f:
        refs = [line.strip() for line in f]
    ids = sorted(hyps)
    return sacrebleu.corpus_bleu([hyps[i][1] for i in ids], [[refs[i] for i in ids]]).score


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--draft-len", type=int, default=4)
    ap.add_argument("--draft-vocab", type=int, default=1536,
                    help="the draft scores the N most frequent English tokens (0: all 4,008)")
    ap.add_argument("--draft-bleu", action="store_true",
                    help="also translate with the draft alone and print its BLEU")
    args = ap.parse_args()
    data = binarise()
    print(f"[demo] {len(open(os.path.join(EXAMPLE, 'test.es')).readlines())} test sentences, "
          f"greedy, batch size {args.batch_size}; stock first, then speculative "
          f"(draft-len {args.draft_len}, draft-vocab {args.draft_vocab or 'all'})")
    stock = generate(data, args.batch_size, plugin=False)
    spec = generate(data, args.batch_size, plugin=True, draft_len=args.draft_len,
                    draft_vocab=args.draft_vocab)
    want, got = stock["hyps"], spec["hyps"]
    differing = [i for i in want if i not in got or got[i][1] != want[i][1]]
    worst = max(abs(want[i][0] - got[i][0]) for i in want if i in got)
    rows = [("stock fairseq greedy", stock), ("fairseq_fast speculative", spec)]
    print(f"{'':28s}{'seconds':>9s}{'sent/s':>9s}{'BLEU':>7s}")
    for name, r in rows:
        print(f"{name:28s}{r['seconds']:9.1f}{r['sentences_per_s']:9.2f}{bleu(r['hyps']):7.2f}")
    print(f"speedup {stock['seconds'] / spec['seconds']:.2f}x, acceptance rate alpha "
          f"{spec['alpha']:.3f}, mean tokens per target call {spec['tokens_per_call']:.2f}")
    print(f"identical hypotheses: {len(want) - len(differing)}/{len(want)} "
          f"(largest score difference {worst:.1e}, float32 rounding)")
    if args.draft_bleu:
        alone = generate(data, args.batch_size, plugin=False, model="draft.pt")
        print(f"draft alone: {alone['sentences_per_s']:.2f} sent/s, BLEU {bleu(alone['hyps']):.2f}")
    if differing:
        print("differing ids:", differing)
        sys.exit("demo: speculative output differs from stock greedy")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fairseq_fast speculative decoding vs CTranslate2: greedy, batch 1, float32, each in its own
process, alternating which runs first, several repeats, medians.

    python scripts/benchmark_latency.py [--sentences 1131] [--repeats 3] [--json FILE]

Ours: the real `fairseq-generate` with the plugin (`--generator speculative --draft-len 4
--draft-vocab 1536`, as `make demo`), timed by fairseq's own "Translated ... in Xs" line: the
generation loop, which also turns every hypothesis into text, scores and prints it (model
loading excluded). CTranslate2: `scripts/ctranslate2_baseline.py --no-fairseq`, the demo target
converted with CTranslate2's fairseq converter, timing translate_batch alone (model loading
excluded), at each of --ct2-threads' intra-op thread counts (default 1 and 2), reported at its
fastest. Each in its own process, because in one process CTranslate2's thread
pool and torch's compete for the same cores and slow each other. Same sentences, same cores;
run it with nothing else running.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

import ctranslate2_baseline as ct2
import demo
from demo import ROOT

SCRIPTS = os.path.dirname(os.path.abspath(__file__))


def ours(data):
    return demo.generate(data, 1, plugin=True, draft_vocab=1536)["sentences_per_s"]


def ctranslate2(sentences, threads):
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, "ctranslate2_baseline.py"),
                           "--sentences", str(sentences), "--no-fairseq",
                           "--threads", str(threads)],
                          capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"benchmark_latency: ctranslate2_baseline.py failed:\n{done.stderr[-2000:]}")
    return float(re.search(r"\(([\d.]+) sentences/s\)", done.stdout).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1131, help="first N test sentences")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ct2-threads", type=ct2.thread_counts, default=[1, 2],
                    help="CTranslate2's intra_threads counts, e.g. 1,2 (default); it is "
                         "reported at its fastest")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_latency.json"))
    args = ap.parse_args()
    data = demo.binarise(args.sentences)
    by_threads = {t: [] for t in args.ct2_threads}
    ours_runs = []
    for r in range(args.repeats):
        order = [("fairseq_fast speculative", ours_runs, lambda: ours(data))]
        order += [(f"CTranslate2, {ct2.threads_label([t])}", by_threads[t],
                   lambda t=t: ctranslate2(args.sentences, t)) for t in args.ct2_threads]
        for name, runs, fn in (order if r % 2 == 0 else order[::-1]):
            runs.append(fn())
            print(f"[latency] repeat {r + 1}: {name} {runs[-1]:.2f} sentences/s", flush=True)
    best = ct2.fastest({t: statistics.median(v) for t, v in by_threads.items()})
    runs = {"fairseq_fast speculative": ours_runs, "CTranslate2": by_threads[best]}
    medians = {name: statistics.median(v) for name, v in runs.items()}
    ratio = medians["fairseq_fast speculative"] / medians["CTranslate2"]
    print(f"\ngreedy, batch 1, float32, {args.sentences} test sentences, 2 threads "
          f"(CTranslate2 {best}, the fastest of {'/'.join(map(str, args.ct2_threads))}), "
          f"{args.repeats} repeats (medians)")
    print("| engine | sentences/s | ms per sentence | runs (sentences/s) |")
    print("|---|---|---|---|")
    for name, v in runs.items():
        print(f"| {name} | {medians[name]:.2f} | {1000 / medians[name]:.1f} | "
              f"{', '.join(f'{x:.2f}' for x in v)} |")
    print(f"fairseq_fast speculative / CTranslate2: {ratio:.2f}x "
          f"({'faster' if ratio >= 1 else 'slower'})")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"sentences": args.sentences, "ct2_threads": best,
                   "ct2_threads_tried": args.ct2_threads, "ct2_runs_by_threads": by_threads,
                   "runs": runs, "medians": medians, "ratio": ratio}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fairseq_fast speculative decoding vs CTranslate2: greedy, batch 1, float32, each in its own
process, alternating which runs first, several repeats, medians.

    python scripts/benchmark_latency.py [--sentences 1131] [--repeats 3] [--json FILE]

Ours: the real `fairseq-generate` with the plugin (`--generator speculative --draft-len 4
--draft-vocab 1536`, as `make demo`), timed by fairseq's own "Translated ... in Xs" line: the
generation loop, which also turns every hypothesis into text, scores and prints it (model
loading excluded). CTranslate2: `python -m benchmarks.ctranslate2_worker --no-fairseq`, the demo
target
converted with CTranslate2's fairseq converter, timing translate_batch alone (model loading
excluded), at each of --ct2-threads' intra-op thread counts (default 1 and 2), reported at its
fastest. The engines take turns (benchmarks.harness.interleave, the order reversed in every
other repeat). Each in its own process, because in one process CTranslate2's thread
pool and torch's compete for the same cores and slow each other. Same sentences, same cores;
run it with nothing else running.
"""
import argparse
import os
import re
import statistics
import sys

import demo
from demo import ROOT

sys.path.insert(0, ROOT)

from benchmarks import ctranslate2_worker as ct2  # noqa: E402
from benchmarks.harness import (REVERSE, FunctionEngine, Result, interleave,  # noqa: E402
                                run_module, write_report)

OURS = "fairseq_fast speculative"


def ours(data):
    """The plugin's engine: Result.figures["sentences_per_s"] as fairseq-generate logs it."""
    def run(part):
        done = demo.generate(data, 1, plugin=True, draft_vocab=1536)
        return Result(done["seconds"], figures={"sentences_per_s": done["sentences_per_s"]})
    return FunctionEngine(OURS, run)


def ctranslate2(sentences, threads):
    """CTranslate2 at `threads` intra-op threads, in a process of its own: the worker's
    seconds and sentences/s."""
    def run(part):
        out = run_module("benchmarks.ctranslate2_worker",
                         ["--sentences", sentences, "--no-fairseq", "--threads", threads],
                         "ctranslate2_worker", "benchmark_latency")
        seconds = float(re.search(r"in ([\d.]+)s \(", out).group(1))
        rate = float(re.search(r"\(([\d.]+) sentences/s\)", out).group(1))
        return Result(seconds, figures={"sentences_per_s": rate})
    return FunctionEngine(f"CTranslate2, {ct2.threads_label([threads])}", run)


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
    engines = [ours(data)] + [ctranslate2(args.sentences, t) for t in args.ct2_threads]

    def progress(repeat, name, result):
        print(f"[latency] repeat {repeat + 1}: {name} "
              f"{result.figures['sentences_per_s']:.2f} sentences/s", flush=True)

    timings = interleave(engines, None, args.repeats, REVERSE, on_result=progress)
    rates = {name: [r.figures["sentences_per_s"] for r in rs]
             for name, rs in timings.runs.items()}
    ours_runs = rates[OURS]
    by_threads = {t: rates[e.name] for t, e in zip(args.ct2_threads, engines[1:])}
    best = ct2.fastest({t: statistics.median(v) for t, v in by_threads.items()})
    runs = {OURS: ours_runs, "CTranslate2": by_threads[best]}
    medians = {name: statistics.median(v) for name, v in runs.items()}
    ratio = medians[OURS] / medians["CTranslate2"]
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
    write_report(args.json, {"sentences": args.sentences, "ct2_threads": best,
                             "ct2_threads_tried": args.ct2_threads,
                             "ct2_runs_by_threads": by_threads, "runs": runs,
                             "medians": medians, "ratio": ratio})


if __name__ == "__main__":
    main()

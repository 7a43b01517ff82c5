#!/usr/bin/env python3
"""Benchmark the plugin's default generator (fast cache, prefill, n-gram blocker) against stock.

    python scripts/benchmark_defaults.py [--sentences 256] [--repeats 3] [--json work/benchmark_defaults.json]

Both generators come from FairseqTask.build_generator with the same options: the plugin's override
(FastSequenceGenerator) and fairseq's original (`__wrapped__`). Same batches, alternating (the
order reversed in every other repeat: benchmarks.harness.interleave), several repeats, medians.
Reported per setting: sentences/s, speedup, the share of generation time spent outside the
model's encoder/decoder calls, and fp32 agreement (identical hypotheses). Then the n-gram
blocker alone: 320 rows x 200 steps, n = 3, fairseq's CPU path vs ours.
"""
import argparse
import json
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import fairseq_fast  # noqa: E402,F401
from fairseq.ngram_repeat_block import NGramRepeatBlock  # noqa: E402
from fairseq.sequence_generator import EnsembleModel  # noqa: E402
from fairseq.tasks import FairseqTask  # noqa: E402

from benchmarks.harness import (FIXED, REVERSE, FunctionEngine, Result, interleave,  # noqa: E402
                                median_figure, summarize, write_report)
from benchmarks.models import (add_model_args, batches, decode_all, gen_args,  # noqa: E402
                               load_target)
from benchmarks.timers import in_model_seconds, timed_ensemble  # noqa: E402
from fairseq_fast.generators.fast import VectorisedNGramBlock  # noqa: E402
from fairseq_fast.decoding.ngram_blocker import block_repeated_ngrams  # noqa: E402


def decode(generator, model, samples):
    """(seconds, of them in the ensemble's encoder and decoder calls, hypotheses)"""
    in_model = in_model_seconds(generator)
    total, hyps = decode_all(generator, model, samples, seed=0)  # deterministic searches
    return total, in_model_seconds(generator) - in_model, hyps


def engine(name, generator, model, samples):
    """decode() as an engine: figures["in_model_share"], the share of its time in the model's
    encoder and decoder calls."""
    def run(part):
        total, in_model, hyps = decode(generator, model, samples)
        return Result(total, outputs=hyps, figures={"in_model_share": in_model / total})
    return FunctionEngine(name, run)


def blocker_benchmark(rows=320, steps=200, n=3, vocab=4008, repeats=5):
    g = torch.Generator().manual_seed(0)
    tokens = torch.full((rows, steps + 2), 1, dtype=torch.long)
    tokens[:, 0] = 2
    tokens[:, 1:steps + 1] = torch.randint(4, 24, (rows, steps), generator=g)  # repeats happen
    lprobs = torch.zeros(rows, vocab)
    stock = NGramRepeatBlock(n, use_extension=False)
    ours = VectorisedNGramBlock(n)  # the C kernel on CPU (csrc/ngram_block.c)

    def ours_torch(tokens, lprobs, bsz, beam, step):  # its torch formulation (GPU, no kernel)
        return block_repeated_ngrams(lprobs[:, None], tokens[:, : step + 1], None, n)[:, 0]

    def run(block):  # in place on one lprobs: banning is idempotent, and no copy is timed
        t0 = time.perf_counter()
        for step in range(steps):
            block(tokens, lprobs, rows, 1, step)
        return time.perf_counter() - t0

    blockers = {"stock_cpu_s": stock, "ours_s": ours, "ours_torch_s": ours_torch}
    timings = interleave([FunctionEngine(key, lambda part, b=block: Result(run(b)))
                          for key, block in blockers.items()], None, repeats, FIXED)
    med = {key: f.seconds for key, f in summarize(timings).items()}
    med["speedup"] = med["stock_cpu_s"] / med["ours_s"]
    med["torch_speedup"] = med["stock_cpu_s"] / med["ours_torch_s"]
    med.update(rows=rows, steps=steps, n=n)
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap, draft=False)
    ap.add_argument("--sentences", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_defaults.json"))
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    model, cfg, task = load_target(args.target, args.data)
    samples, n = batches(task, args.sentences, args.batch_size)
    settings = [("beam 5, no-repeat-ngram 3", dict(beam=5, no_repeat_ngram_size=3)),
                ("beam 5", dict(beam=5)),
                ("greedy", dict(beam=1))]
    report = {"threads": torch.get_num_threads(), "batch_size": args.batch_size,
              "sentences": n, "settings": []}
    for name, opts in settings:
        a = gen_args(cfg, **opts)
        ours = task.build_generator([model], a)
        stock = FairseqTask.build_generator.__wrapped__(task, timed_ensemble([model]), a)
        # stock: fairseq's ensemble (with clocks); ours: the plugin's
        assert type(stock.model).__bases__ == (EnsembleModel,)
        assert type(ours.model) is not EnsembleModel
        timings = interleave([engine("stock", stock, model, samples),
                              engine("ours", ours, model, samples)],
                             None, args.repeats, REVERSE)  # neither always runs second
        f = summarize(timings, baseline="stock", sentences=n)
        row = {"setting": name, "stock_sent_per_s": f["stock"].sent_per_s,
               "ours_sent_per_s": f["ours"].sent_per_s,
               "speedup": f["ours"].ratio,
               "stock_outside_model_share": 1 - median_figure(timings.runs["stock"],
                                                              "in_model_share"),
               "ours_outside_model_share": 1 - median_figure(timings.runs["ours"],
                                                             "in_model_share"),
               "fp32_identical_share": f["ours"].identical,
               "stock_runs_s": f["stock"].runs_s, "ours_runs_s": f["ours"].runs_s}
        if opts.get("no_repeat_ngram_size"):
            row["note"] = "stock's CPU blocker bans nothing (fairseq #5206): outputs differ"
        report["settings"].append(row)
        print(json.dumps(row), flush=True)
    report["ngram_blocker"] = blocker_benchmark()
    print(json.dumps(report["ngram_blocker"]), flush=True)
    write_report(args.json, report)
    print_table(report)


def print_table(report):
    print(f"\nbatch size {report['batch_size']}, {report['sentences']} test sentences, "
          f"{report['threads']} threads")
    print("| setting | stock sent/s | plugin sent/s | speedup | time outside model calls "
          "(stock / plugin) | fp32 identical |")
    print("|---|---|---|---|---|---|")
    for r in report["settings"]:
        print(f"| {r['setting']} | {r['stock_sent_per_s']:.2f} | {r['ours_sent_per_s']:.2f} | "
              f"{r['speedup']:.2f}x | {100 * r['stock_outside_model_share']:.0f}% / "
              f"{100 * r['ours_outside_model_share']:.0f}% | "
              f"{100 * r['fp32_identical_share']:.1f}% |")
    b = report["ngram_blocker"]
    print(f"\nn-gram blocker alone ({b['rows']} rows x {b['steps']} steps, n = {b['n']}): "
          f"fairseq CPU {b['stock_cpu_s']:.2f} s, ours {b['ours_s']:.4f} s, {b['speedup']:.0f}x "
          f"(its torch formulation, used off CPU: {b['ours_torch_s']:.3f} s, "
          f"{b['torch_speedup']:.0f}x)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the oneDNN linears (fairseq_fast/packed_linear.py) add: the plugin with and without
--no-fast-linear, side by side against stock fairseq in one process.

    python scripts/benchmark_linear.py [--sentences 60] [--repeats 4] [--json FILE]

Settings: speculative greedy at batch 1 and 8 and speculative sampling (T=1) at batch 1 (the
demo draft, --draft-len 4, full vocabulary), and the plugin's default generator at beam 5,
batch 1 and 32. Per repeat: stock, then the two plugin variants in alternating order (F.linear
first on even repeats, oneDNN first on odd ones, so neither always runs second), all with the
repeat's seed; medians. Also reported: the share of sentences whose tokens equal stock's
(float32; not for sampling, whose random draws differ from stock's). Then the kernels alone:
F.linear (MKL) time over oneDNN time on a packed weight, per weight shape and row count
(--kernels-only: just this part). "oneDNN linears" includes stacked q/k/v (packed_linear.py).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import fairseq_fast  # noqa: E402,F401  (plugin overrides, as --user-dir would apply them)
from fairseq.tasks import FairseqTask  # noqa: E402

from benchmark import add_model_args, batches, decode_all, load_target  # noqa: E402
from benchmark_defaults import gen_args  # noqa: E402
from fairseq_fast.draft_loading import load_draft  # noqa: E402
from fairseq_fast.packed_linear import onednn_available  # noqa: E402
from fairseq_fast.speculative_generator import SpeculativeSequenceGenerator  # noqa: E402

KERNEL_SHAPES = [(128, 128), (512, 128), (256, 256), (768, 256), (1024, 256), (256, 1024),
                 (1536, 128), (4008, 128), (4008, 256)]  # (out, in): the demo pair's layers
KERNEL_ROWS = (1, 2, 5, 8, 40, 160)
SETTINGS = [("speculative greedy", 1, 1), ("speculative greedy", 8, 1),
            ("speculative sampling T=1", 1, 1),
            ("default beam 5", 1, 5), ("default beam 5", 32, 5)]


def generators(task, cfg, target, draft, kind, beam):
    """stock, {packed: plugin generator}"""
    sampling = "sampling" in kind
    args = gen_args(cfg, beam=beam, sampling=sampling, temperature=1.0)
    stock = FairseqTask.build_generator.__wrapped__(task, [target], args)
    plugin = {}
    for packed in (False, True):
        if kind.startswith("speculative"):
            plugin[packed] = SpeculativeSequenceGenerator(
                [target], task.target_dictionary, draft_model=draft, draft_len=4,
                sampling=sampling, temperature=1.0, packed_linear=packed)
        else:
            args.no_fast_linear = not packed
            plugin[packed] = task.build_generator([target], args)
    return stock, plugin


def same(hyps, packed, kind):
    """share of sentences with stock's tokens; None for sampling (same seed, other random
    draws: the distribution is what is exact, tests/test_sampling_exactness.py)"""
    if "sampling" in kind:
        return None
    return sum(hyps[packed][i] == hyps["stock"][i] for i in hyps["stock"]) / len(hyps["stock"])


def kernels(repeats=3, calls=300):
    """{"OUTxIN": {rows: F.linear seconds / oneDNN seconds}}, medians over repeats."""
    def per_call(fn):
        for _ in range(20):
            fn()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls

    table = {}
    g = torch.Generator().manual_seed(0)
    for out, inp in KERNEL_SHAPES:
        w, b = torch.randn(out, inp, generator=g), torch.randn(out, generator=g)
        packed = torch.ops.mkldnn._reorder_linear_weight(w, None)
        row = {}
        for rows in KERNEL_ROWS:
            x = torch.randn(rows, inp, generator=g)
            ratios = []
            for _ in range(repeats):
                mkl = per_call(lambda: F.linear(x, w, b))
                dnn = per_call(lambda: torch.ops.mkldnn._linear_pointwise(
                    x, packed, b, "none", [], ""))
                ratios.append(mkl / dnn)
            row[rows] = statistics.median(ratios)
        table[f"{out}x{inp}"] = row
        print(json.dumps({f"{out}x{inp}": row}), flush=True)
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--sentences", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--kernels-only", action="store_true")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_linear.json"))
    args = ap.parse_args()
    if not onednn_available():
        sys.exit("this torch has no oneDNN linear ops: nothing to compare")
    torch.set_grad_enabled(False)
    report = {"threads": torch.get_num_threads(), "sentences": args.sentences,
              "repeats": args.repeats, "settings": []}
    if not args.kernels_only:
        target, cfg, task = load_target(args.target, args.data)
        draft = load_draft(task, args.draft, target)
    for kind, bsz, beam in [] if args.kernels_only else SETTINGS:
        samples, n = batches(task, args.sentences, bsz)
        stock, plugin = generators(task, cfg, target, draft, kind, beam)
        times = {"stock": [], False: [], True: []}
        hyps = {}
        for r in range(args.repeats):
            t, hyps["stock"] = decode_all(stock, target, samples, r)
            times["stock"].append(t)
            for packed in ((False, True) if r % 2 == 0 else (True, False)):
                t, hyps[packed] = decode_all(plugin[packed], target, samples, r)
                times[packed].append(t)
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"setting": kind, "batch_size": bsz, "sentences": n,
               "stock_sent_per_s": n / med["stock"],
               "f_linear_sent_per_s": n / med[False], "onednn_sent_per_s": n / med[True],
               "f_linear_speedup": med["stock"] / med[False],
               "onednn_speedup": med["stock"] / med[True],
               "onednn_over_f_linear": med[False] / med[True],
               "f_linear_identical": same(hyps, False, kind),
               "onednn_identical": same(hyps, True, kind)}
        report["settings"].append(row)
        print(json.dumps(row), flush=True)
    report["kernels"] = kernels()
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print_table(report)


def print_table(report):
    if report.get("kernels"):
        print("\nF.linear time / oneDNN time (packed weight), float32, per weight (out x in) and "
              "rows; > 1: oneDNN faster")
        print("| weight | elements | " + " | ".join(f"{r} rows" for r in KERNEL_ROWS) + " |")
        print("|---|---|" + "---|" * len(KERNEL_ROWS))
        for shape, row in report["kernels"].items():
            out, inp = map(int, shape.split("x"))
            print(f"| {shape} | {out * inp:,} | "
                  + " | ".join(f"{row[r]:.2f}" for r in KERNEL_ROWS) + " |")
    if not report["settings"]:
        return
    print(f"\nsentences/s (x stock; identical to stock), {report['sentences']} sentences, "
          f"{report['repeats']} repeats, {report['threads']} threads, fp32")
    print("| setting | batch | stock | plugin, --no-fast-linear | plugin (oneDNN linears) "
          "| oneDNN / F.linear |")
    print("|---|---|---|---|---|---|")
    def share(x):
        return "sampled" if x is None else f"{100 * x:.0f}%"

    for r in report["settings"]:
        print(f"| {r['setting']} | {r['batch_size']} | {r['stock_sent_per_s']:.2f} | "
              f"{r['f_linear_sent_per_s']:.2f} ({r['f_linear_speedup']:.2f}x; "
              f"{share(r['f_linear_identical'])}) | {r['onednn_sent_per_s']:.2f} "
              f"({r['onednn_speedup']:.2f}x; {share(r['onednn_identical'])}) | "
              f"{r['onednn_over_f_linear']:.2f}x |")


if __name__ == "__main__":
    main()

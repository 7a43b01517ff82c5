#!/usr/bin/env python3
"""What the packed linears (fairseq_fast/kernels/packed_linear.py) add: the plugin with --no-fast-linear
(F.linear), with oneDNN only (the small-matrix kernel off) and as it runs by default (the kernel,
small_gemm.py), side by side against stock fairseq in one process.

    python scripts/benchmark_linear.py [--sentences 60] [--repeats 4] [--json FILE]

Settings: speculative greedy at batch 1 and 8 and speculative sampling (T=1) at batch 1 (the
demo draft, --draft-len 4, full vocabulary), and the plugin's default generator at beam 5,
batch 1 and 32. Per repeat: stock, then the three plugin variants in a rotating order (each runs
first, second and third in turn: benchmarks.harness.interleave), all with the repeat's seed;
medians. Also reported: the share
of sentences whose tokens equal stock's (float32; not for sampling, whose random draws differ
from stock's). Then the kernels alone: microseconds per call of F.linear (MKL), oneDNN on a
packed weight and the small-matrix kernel, per weight shape and row count, cycling through
copies of the weight (8 MB or 64 copies) so that it is cold in cache as in a decoder step
(--kernels-only: just this part). Stacked q/k/v count as one 768x256 weight (packed_linear.py).
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import fairseq_fast  # noqa: E402,F401  (plugin overrides, as --user-dir would apply them)
from fairseq.tasks import FairseqTask  # noqa: E402

from benchmarks.harness import (FIXED, ROTATE_REST, FunctionEngine, Result,  # noqa: E402
                                identical_share, interleave, summarize, write_report)
from benchmarks.models import (add_model_args, batches, decode_all, gen_args,  # noqa: E402
                               load_target)
from fairseq_fast.speculative.draft_loading import load_draft  # noqa: E402
from fairseq_fast.kernels import small_gemm  # noqa: E402
from fairseq_fast.kernels.packed_linear import onednn_available  # noqa: E402
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator  # noqa: E402

KERNEL_SHAPES = [(128, 128), (512, 128), (256, 256), (768, 256), (1024, 256), (256, 1024),
                 (1536, 128), (4008, 128), (4008, 256)]  # (out, in): the demo pair's layers
KERNEL_ROWS = (1, 2, 5, 8, 40, 160)
VARIANTS = ("f_linear", "onednn", "kernel")  # --no-fast-linear, kernel off, default
SETTINGS = [("speculative greedy", 1, 1), ("speculative greedy", 8, 1),
            ("speculative sampling T=1", 1, 1),
            ("default beam 5", 1, 5), ("default beam 5", 32, 5)]


def generators(task, cfg, target, draft, kind, beam):
    """stock, {variant: plugin generator}"""
    sampling = "sampling" in kind
    args = gen_args(cfg, beam=beam, sampling=sampling, temperature=1.0)
    stock = FairseqTask.build_generator.__wrapped__(task, [target], args)
    plugin = {}
    for variant in VARIANTS:
        packed = variant != "f_linear"
        if kind.startswith("speculative"):
            gen = SpeculativeSequenceGenerator(
                [target], task.target_dictionary, draft_model=draft, draft_len=4,
                sampling=sampling, temperature=1.0, kernels=packed)
            linears = [gen.target.lean.linear, gen.proposer.backend.lean.linear]
        else:
            args.no_fast_linear = not packed
            gen = task.build_generator([target], args)
            linears = [backend.lean.linear for backend in gen.model.backends]
        for linear in linears:
            linear.kernel = variant == "kernel"
        plugin[variant] = gen
    return stock, plugin


def engine(name, generator, model, samples):
    """decode_all with the repeat's seed; Result.outputs {id: tokens}."""
    def run(part):
        seconds, hyps = decode_all(generator, model, samples, part.repeat)
        return Result(seconds, outputs=hyps)
    return FunctionEngine(name, run)


def same(hyps, packed, kind):
    """share of sentences with stock's tokens; None for sampling (same seed, other random
    draws: the distribution is what is exact, tests/test_sampling_exactness.py)"""
    if "sampling" in kind:
        return None
    return identical_share(hyps[packed], hyps["stock"])


def kernels(repeats=3, calls=200):
    """{"OUTxIN": {rows: {"f_linear"|"onednn"|"kernel": microseconds per call}}}, medians of
    `repeats` runs of `calls` calls (benchmarks.harness.interleave), each after 20 untimed."""
    def engine(name, fn, copies):
        def warm_up():
            for i in range(20):
                fn(i % copies)

        def run(part):
            warm_up()
            t0 = time.perf_counter()
            for i in range(calls):
                fn(i % copies)
            return Result((time.perf_counter() - t0) / calls)
        return FunctionEngine(name, run, warm_up)

    table = {}
    g = torch.Generator().manual_seed(0)
    for out, inp in KERNEL_SHAPES:
        copies = max(2, min(64, (8 << 20) // (4 * out * inp)))
        ws = [torch.randn(out, inp, generator=g) for _ in range(copies)]
        b = torch.randn(out, generator=g)
        dnn = [torch.ops.mkldnn._reorder_linear_weight(w, None) for w in ws]
        ours = [small_gemm.pack(w) for w in ws]
        row = {}
        for rows in KERNEL_ROWS:
            x = torch.randn(rows, inp, generator=g)
            fns = {"f_linear": lambda i: F.linear(x, ws[i], b),
                   "onednn": lambda i: torch.ops.mkldnn._linear_pointwise(
                       x, dnn[i], b, "none", [], ""),
                   "kernel": lambda i: small_gemm.linear(x, ours[i], b)}
            timings = interleave([engine(name, fn, copies) for name, fn in fns.items()], None,
                                 repeats, FIXED, warm_up=False)
            row[rows] = {name: 1e6 * f.seconds for name, f in summarize(timings).items()}
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
    if not onednn_available() or not small_gemm.available():
        sys.exit("needs torch's oneDNN ops and the small-matrix kernel (a C compiler)")
    torch.set_grad_enabled(False)
    report = {"threads": torch.get_num_threads(), "sentences": args.sentences,
              "repeats": args.repeats, "settings": []}
    if not args.kernels_only:
        target, cfg, task = load_target(args.target, args.data)
        draft = load_draft(task, args.draft, target)
    for kind, bsz, beam in [] if args.kernels_only else SETTINGS:
        samples, n = batches(task, args.sentences, bsz)
        stock, plugin = generators(task, cfg, target, draft, kind, beam)
        engines = [engine("stock", stock, target, samples),
                   *[engine(v, plugin[v], target, samples) for v in VARIANTS]]
        timings = interleave(engines, None, args.repeats, ROTATE_REST, warm_up=False)
        med = {k: f.seconds for k, f in summarize(timings).items()}
        hyps = {k: rs[-1].outputs for k, rs in timings.runs.items()}
        row = {"setting": kind, "batch_size": bsz, "sentences": n,
               "stock_sent_per_s": n / med["stock"]}
        for v in VARIANTS:
            row[f"{v}_sent_per_s"] = n / med[v]
            row[f"{v}_speedup"] = med["stock"] / med[v]
            row[f"{v}_identical"] = same(hyps, v, kind)
        row["kernel_over_onednn"] = med["onednn"] / med["kernel"]
        report["settings"].append(row)
        print(json.dumps(row), flush=True)
    report["kernels"] = kernels()
    write_report(args.json, report)
    print_table(report)


def print_table(report):
    if report.get("kernels"):
        print("\nmicroseconds per call, F.linear (MKL) / oneDNN (packed) / small-matrix kernel, "
              "float32, weights cold in cache, per weight (out x in) and rows")
        print("| weight | " + " | ".join(f"{r} rows" for r in KERNEL_ROWS) + " |")
        print("|---|" + "---|" * len(KERNEL_ROWS))
        for shape, row in report["kernels"].items():
            print(f"| {shape} | " + " | ".join(
                "{f_linear:.0f} / {onednn:.0f} / **{kernel:.0f}**".format(**row[r])
                for r in KERNEL_ROWS) + " |")
    if not report["settings"]:
        return
    print(f"\nsentences/s (x stock; identical to stock), {report['sentences']} sentences, "
          f"{report['repeats']} repeats, {report['threads']} threads, fp32")
    print("| setting | batch | stock | plugin, --no-fast-linear | plugin, oneDNN only "
          "| plugin (kernel, default) | kernel / oneDNN |")
    print("|---|---|---|---|---|---|---|")

    def share(x):
        return "sampled" if x is None else f"{100 * x:.0f}%"

    for r in report["settings"]:
        cells = [f"{r[f'{v}_sent_per_s']:.2f} ({r[f'{v}_speedup']:.2f}x; "
                 f"{share(r[f'{v}_identical'])})" for v in VARIANTS]
        print(f"| {r['setting']} | {r['batch_size']} | {r['stock_sent_per_s']:.2f} | "
              + " | ".join(cells) + f" | {r['kernel_over_onednn']:.2f}x |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Stock fairseq against the plugin on a CUDA GPU: the demo target x1 and x4, float32 and float16.

    python scripts/benchmark_gpu.py [--factors 1,4] [--dtypes float32,float16] [--sentences 60]
                                    [--batch-sentences 256] [--repeats 3]
                                    [--json work/benchmark_gpu.json]

The target (widened F times as benchmark_scale.py does; x4 is transformer-big's shape) and the
demo draft are moved to the GPU and, for float16, halved, as fairseq-generate --fp16 does. For
each F and dtype, in one process, side by side (benchmarks.engines.measure: each engine first
decodes the shortest and the longest batch untimed, then the engines alternate within each
repeat, the order rotating; medians):

    greedy, batch 1    stock fairseq, the plugin's default generator, the same with
                       FAIRSEQ_FAST_CUDA_GRAPHS=0 (its decoder calls launched op by op, not
                       replayed from CUDA graphs), speculative (the demo draft, --draft-len 4,
                       --draft-vocab 1536 as make demo runs it), the same with
                       --adaptive-draft-len, BiLD at its defaults
    greedy, batch 32   stock, default, speculative
    beam 5, batch 32   stock, default

A run ends when its last batch's tokens are on the host (the hypotheses are read back), so the
GPU's queued work is inside the time. Per run: seconds, tokens written (EOS included), the share
of sentences identical to stock fairseq's in the same dtype (stock on the GPU is the reference:
the plugin's passes group the same arithmetic differently, so float16 can round a near-tie the
other way), and the peak GPU memory allocated (torch.cuda.max_memory_allocated, reset before the
run). Prints a table, writes JSON (scripts/report.py renders it as the GPU section of
docs/benchmarks.md).

Then, per F and dtype, where one decoder step's time goes (one sentence at position ~20, batch
1): stock's incremental step, the plugin's lean step (one token) and verify pass (5 tokens),
replayed from CUDA graphs and launched op by op, and the decoder's matrix products alone. For each: the wall time with the GPU waited for, the host's
time to issue it (50 calls back to back, one wait at the end), the CUDA kernels it launches and
their summed busy time (torch.profiler), and the host-device synchronisations it makes
(torch.cuda.set_sync_debug_mode). A step that issues ~200 kernels in milliseconds but keeps the
GPU busy for a fraction of one is bound by the host, not by the GPU.
"""
import argparse
import contextlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

from benchmarks.engines import (BILD, DEFAULT, SPEC_ADAPTIVE, SPECULATIVE,  # noqa: E402
                                STOCK, build_generator, fairseq_engine, measure)
from benchmarks.harness import micro_time, write_report  # noqa: E402
from benchmarks.models import SCALE_WORK, widened_target  # noqa: E402

# the default generator with its decoder calls launched op by op, not replayed from CUDA graphs
EAGER = DEFAULT + ", no CUDA graphs"


def rows(args):
    """(setting, beam, batch size, sentences, engines) of every row."""
    return [("greedy", 1, 1, args.sentences,
             [STOCK, DEFAULT, EAGER, SPECULATIVE, SPEC_ADAPTIVE, BILD]),
            ("greedy", 1, 32, args.batch_sentences, [STOCK, DEFAULT, SPECULATIVE]),
            ("beam 5", 5, 32, args.batch_sentences, [STOCK, DEFAULT])]


class PeakGPU:
    """Peak GPU memory allocated by torch during a `with` block, in MiB (the counter is reset on
    entry): benchmarks.engines.fairseq_engine's peak."""

    def __enter__(self):
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        return self

    def __exit__(self, *exc):
        import torch

        self.mib = torch.cuda.max_memory_allocated() / 2 ** 20
        return False


def _issue_times(fn, n=50):
    """{synced_ms: median wall time of fn() with the GPU waited for, host_ms: the host's time per
    call over n calls issued back to back}"""
    import time

    import torch

    def synced():
        fn()
        torch.cuda.synchronize()

    synced_s = micro_time(synced, n)
    start = time.perf_counter()
    for _ in range(n):
        fn()
    host = time.perf_counter() - start
    torch.cuda.synchronize()
    return {"synced_ms": 1e3 * synced_s, "host_ms": 1e3 * host / n}


def _kernels(fn):
    """(CUDA kernels one call of fn launches, their summed busy time in ms)"""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type.name == "CUDA"]
    return len(events), sum(e.device_time for e in events) / 1e3


def _syncs(fn):
    """Host-device synchronisations one call of fn makes."""
    import warnings

    import torch

    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    torch.cuda.synchronize()
    return sum("synchroniz" in str(w.message) for w in caught)


# benchmarks.steps.step_parts' parts, as the table names them (the verify pass at draft length
# 4), and the lean calls again without CUDA graphs
PARTS = {"stock_step": "stock step", "lean_step": "lean step", "verify": "lean verify, 5 tokens",
         "eager_lean_step": "lean step, no CUDA graphs",
         "eager_verify": "lean verify, 5 tokens, no CUDA graphs", "matmul_only": "matmuls only"}


@contextlib.contextmanager
def graphs_off():
    """The lean decoders built inside launch their calls op by op (FAIRSEQ_FAST_CUDA_GRAPHS=0)."""
    before = os.environ.get("FAIRSEQ_FAST_CUDA_GRAPHS")
    os.environ["FAIRSEQ_FAST_CUDA_GRAPHS"] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["FAIRSEQ_FAST_CUDA_GRAPHS"]
        else:
            os.environ["FAIRSEQ_FAST_CUDA_GRAPHS"] = before


def engine_generator(engine, *args):
    """build_generator's generator for `engine`, EAGER included."""
    if engine != EAGER:
        return build_generator(engine, *args)
    with graphs_off():
        return build_generator(DEFAULT, *args)


def step_profile(model, sample):
    """{part: figures} for stock's decoder step, the lean step and a lean verify pass of 5
    tokens (replayed from CUDA graphs, and launched op by op) and the decoder's matrix products
    alone (benchmarks.steps.step_parts; see the module docstring)."""
    from benchmarks.steps import step_parts

    parts = step_parts(model, sample, 4)
    with graphs_off():
        eager = step_parts(model, sample, 4)
    parts = {"stock_step": parts["stock_step"], "lean_step": parts["lean_step"],
             "verify": parts["verify"], "eager_lean_step": eager["lean_step"],
             "eager_verify": eager["verify"], "matmul_only": parts["matmul_only"]}
    out = {}
    for key, fn in parts.items():
        figures = out[PARTS[key]] = _issue_times(fn)
        figures["kernels"], figures["kernel_busy_ms"] = _kernels(fn)
        figures["syncs"] = _syncs(fn)
    return out


def run_case(factor, dtype, args):
    import torch
    from fairseq import utils

    from benchmarks.models import batches, load_target
    from fairseq_fast.speculative.draft_loading import load_draft
    from fairseq_fast.speculative.draft_vocab import shortlist

    path = widened_target(factor, args.target)
    target, cfg, task = load_target(path, args.data)
    draft = load_draft(task, args.draft, target)
    half = dtype == "float16"
    for m in (target, draft):
        m.cuda()
        if half:
            m.half()
    tgt_dict = task.target_dictionary
    vocab = shortlist(tgt_dict, args.draft_vocab, args.draft_vocab_counts)
    case = {"factor": factor, "dtype": dtype,
            "parameters": sum(p.numel() for p in target.parameters()), "rows": []}
    for name, beam, bsz, sentences, engines in rows(args):
        samples, n = batches(task, sentences, bsz)
        samples = [utils.move_to_cuda(s) for s in samples]
        print(f"[gpu] x{factor} {dtype}: {name}, batch {bsz}, {n} sentences", flush=True)
        generators = {e: engine_generator(e, task, target, cfg, draft, vocab, beam,
                                          args.draft_len) for e in engines}
        runs = [fairseq_engine(e, g, target, samples, tgt_dict, peak=PeakGPU)
                for e, g in generators.items()]
        figures, _ = measure(runs, args.repeats, n)
        for e, f in figures.items():
            f["peak_gpu_mib"] = f.pop("peak_rss_mib")
            if e in (SPECULATIVE, SPEC_ADAPTIVE):
                stats = generators[e].stats
                f["alpha"] = stats.alpha
                f["tokens_per_target_call"] = stats.tokens_per_target_call
        case["rows"].append({"setting": name, "beam": beam, "batch_size": bsz, "sentences": n,
                             "engines": figures})
        del generators, runs
    if args.profile:
        first, _ = batches(task, 1, 1)
        case["step"] = step_profile(target, utils.move_to_cuda(first[0]))
    del target, draft
    torch.cuda.empty_cache()
    return case


def print_table(report):
    print(f"{report['device']}, torch {report['torch']}, CUDA {report['cuda']}; repeats "
          f"{report['repeats']} (medians); draft length {report['draft_len']}, draft vocabulary "
          f"{report['draft_vocab']}\n")
    print("| target | dtype | setting | sentences | engine | ms/token | x stock | identical to "
          "stock | alpha | peak GPU MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in report["cases"]:
        label = f"x{case['factor']} ({case['parameters'] / 1e6:.1f}M)"
        for row in case["rows"]:
            stock = row["engines"][STOCK]["ms_per_token"]
            for e, f in row["engines"].items():
                alpha = f"{f['alpha']:.3f}" if f.get("alpha") is not None else "-"
                print(f"| {label} | {case['dtype']} | {row['setting']}, batch "
                      f"{row['batch_size']} | {row['sentences']} | {e} | "
                      f"{f['ms_per_token']:.3f} | {stock / f['ms_per_token']:.2f}x | "
                      f"{100 * f['identical']:.1f}% | {alpha} | {f['peak_gpu_mib']:.0f} |")
    steps = [case for case in report["cases"] if case.get("step")]
    if not steps:
        return
    print("\nOne decoder step at batch 1: synced, with the GPU waited for; host, the time to issue "
          "it (calls back to back); the CUDA kernels it launches and their summed GPU time; its "
          "host-device synchronisations.\n")
    print("| target | dtype | part | synced ms | host ms | kernels | kernels' GPU ms | syncs |")
    print("|---|---|---|---|---|---|---|---|")
    for case in steps:
        for part, f in case["step"].items():
            print(f"| x{case['factor']} | {case['dtype']} | {part} | {f['synced_ms']:.2f} | "
                  f"{f['host_ms']:.2f} | {f['kernels']} | {f['kernel_busy_ms']:.3f} | "
                  f"{f['syncs']} |")


def main():
    import torch

    import demo
    from benchmarks.models import add_model_args
    import fairseq_fast  # noqa: F401  (the plugin's overrides, as --user-dir loads them)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--factors", default="1,4")
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--sentences", type=int, default=60, help="batch-1 rows")
    ap.add_argument("--batch-sentences", type=int, default=256, help="batch-32 rows")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--draft-len", type=int, default=4)
    ap.add_argument("--draft-vocab", type=int, default=1536,
                    help="the speculative engine's draft shortlist (0: every token)")
    ap.add_argument("--draft-vocab-counts", default=demo.COUNTS)
    ap.add_argument("--no-profile", dest="profile", action="store_false",
                    help="leave out the decoder step's profile")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_gpu.json"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("benchmark_gpu: torch sees no CUDA GPU")
    torch.set_grad_enabled(False)
    os.makedirs(SCALE_WORK, exist_ok=True)
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "cuda": torch.version.cuda, "repeats": args.repeats, "draft_len": args.draft_len,
              "draft_vocab": args.draft_vocab, "cases": []}
    for factor in (int(f) for f in args.factors.split(",")):
        for dtype in args.dtypes.split(","):
            report["cases"].append(run_case(factor, dtype, args))
            write_report(args.json, report)  # what is done so far survives a time limit
    print_table(report)


if __name__ == "__main__":
    main()

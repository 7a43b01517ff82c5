#!/usr/bin/env python3
"""In-flight batching (--inflight-batching, generate_stream) against batch-by-batch decoding.

    python scripts/benchmark_inflight.py [--factors 1,4] [--batch-sizes 8,32]
        [--sentences 96] [--min-batches 8] [--repeats 3] [--json work/benchmark_inflight.json]

Settings: the demo Spanish->English target widened F times (scripts/widen_model.py; x1 is the
demo target), greedy, the test set's sentences drawn as benchmark.batches draws them (sorted by
source length into batches, as fairseq batches them), at each batch size: --sentences, or
--min-batches batches where that is more (a stream of two or three batches is mostly its start
and its drained end). Engines:
  default               the plugin's default generator, batch by batch
  default inflight      greedy search as fairseq-generate --inflight-batching runs it (the
                        speculative loop drafting nothing: plain greedy steps)
  speculative           the big draft (draft_big.pt; at x1 the demo draft), --draft-len 3,
                        batch by batch
  speculative inflight  the same generator, every batch's sentences streamed through
                        generate_stream with the batch size as the rows in flight
  speculative adaptive inflight
                        streamed, with --adaptive-draft-len: each pass's draft length chosen
                        for the rows in flight (0: plain greedy steps), learnt in the warm-up
  BiLD, BiLD inflight   the draft as BiLD's small model, thresholds at their defaults
They take turns (benchmarks.harness.interleave, the order rotating between repeats; medians).
Per engine: seconds, the speed over the default generator, the share of sentences identical to
the default generator's (float32) and of those whose positional scores are equal too, bit for
bit, the target's passes (verify passes and plain greedy steps) per written token, and the idle
share of the rows a pass could hold (1 - rows verified / (verify passes x batch size); for
greedy search, of its plain steps).
Peak memory: the default generator and speculative decoding, each streamed and batch by batch,
decode the same sentences in a process of their own (benchmarks.engine_rss), which reports its
peak resident set.
"""
import argparse
import copy
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
from benchmarks.harness import (ROTATE, FunctionEngine, Result, identical_share,  # noqa: E402
                                interleave, summarize, write_report)

DRAFT_LEN = 3


def _stream_run(generator, model, samples, scores):
    """generate_stream over `samples` at the batch size as the rows in flight: (seconds,
    {id: tokens}); `scores` receives {id: positional scores}."""
    import time

    import torch

    torch.manual_seed(0)
    rows = max(s["id"].numel() for s in samples)
    t0 = time.perf_counter()
    hyps = {}
    for sample, hypos in generator.generate_stream(((s, None) for s in samples), rows):
        for i, h in zip(sample["id"].tolist(), hypos):
            hyps[i] = h[0]["tokens"].tolist()
            scores[i] = h[0]["positional_scores"].tolist()
    return time.perf_counter() - t0, hyps


def engine(name, generator, model, samples, stream, scores):
    """The engine `name`; `scores` receives {id: positional scores} of its last run."""
    from benchmarks.models import decode_all

    stats = getattr(generator, "stats", None)
    rows = max(s["id"].numel() for s in samples)

    def decode(some):
        """(seconds, {id: tokens}) of `some` batches, streamed or batch by batch"""
        scores.clear()
        return (_stream_run(generator, model, some, scores) if stream
                else decode_all(generator, model, some, seed=0, scores=scores))

    def counts():
        """(verify passes, their rows, plain greedy steps, positions computed)"""
        if stats is None:
            return 0, 0, 0, 0
        return stats.target_calls, stats.row_rounds, stats.plain_steps, stats.verified

    def run(part):
        before = counts()
        seconds, hyps = decode(samples)
        tokens = sum(len(h) for h in hyps.values())
        figures = {}
        if stats is not None:
            calls, used, steps, positions = (a - b for a, b in zip(counts(), before))
            # idle rows: of the verify passes where there are any, else of the plain steps
            # (whose positions are their rows)
            passes, busy = (calls, used) if calls else (steps, positions)
            figures = {"passes_per_token": (calls + steps) / tokens,
                       "idle_share": 1 - busy / max(passes * rows, 1)}
        return Result(seconds, tokens, hyps, figures=figures)

    return FunctionEngine(name, run, lambda: decode(samples[:1] + samples[-1:]))


def setting(factor, batch_size, args):
    import demo
    import torch
    from benchmarks.models import batches, load_target, widened_target
    from fairseq import checkpoint_utils

    from fairseq_fast.generators.bild import BiLDSequenceGenerator
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    target_path = widened_target(factor, os.path.join(demo.EXAMPLE, "target.pt"))
    draft_path = os.path.join(demo.EXAMPLE, "draft.pt" if factor == 1 else "draft_big.pt")
    model, cfg, task = load_target(target_path, args.data)
    draft = checkpoint_utils.load_model_ensemble([draft_path], task=task)[0][0].eval()
    torch.set_num_threads(args.threads)
    samples, n = batches(task, sentences(args, batch_size), batch_size)
    gen_cfg = copy.deepcopy(cfg.generation)
    gen_cfg.beam, gen_cfg.max_len_b = 1, 200
    tgt = task.target_dictionary
    spec = lambda: SpeculativeSequenceGenerator([model], tgt, draft_model=draft,  # noqa: E731
                                                draft_len=DRAFT_LEN, max_len_b=200)
    adaptive = SpeculativeSequenceGenerator([model], tgt, draft_model=draft, draft_len=DRAFT_LEN,
                                            max_len_b=200, adaptive_draft_len=True)
    bild = lambda: BiLDSequenceGenerator([model], tgt, small_model=draft,  # noqa: E731
                                         max_len_b=200)
    greedy = SpeculativeSequenceGenerator([model], tgt, draft_method="none", max_len_b=200)
    generators = {"default": (task.build_generator([model], gen_cfg), False),
                  "default inflight": (greedy, True),
                  "speculative": (spec(), False),
                  "speculative inflight": (spec(), True),
                  "speculative adaptive inflight": (adaptive, True),
                  "BiLD": (bild(), False),
                  "BiLD inflight": (bild(), True)}
    scores = {name: {} for name in generators}
    engines = [engine(name, generator, model, samples, stream, scores[name])
               for name, (generator, stream) in generators.items()]

    def progress(repeat, name, r):
        print(f"[inflight] x{factor} batch {batch_size} {name}: {r.seconds:.2f} s", flush=True)

    timings = interleave(engines, None, args.repeats, ROTATE, on_result=progress)
    out = {}
    for name, s in summarize(timings, "default", n).items():
        last = timings.runs[name][-1].figures
        out[name] = {"seconds": s.runs_s, "ratio": s.ratio, "identical": s.identical,
                     "ms_per_token": 1e3 * s.seconds / s.tokens, **last}
    # the positional scores, bit for bit (float32), against the default generator's
    for name in out:
        out[name]["scores_identical"] = identical_share(scores[name], scores["default"])
    # BiLD is not exact by design: its in-flight twin is compared with BiLD batch by batch
    bild_out = {n: timings.runs[n][-1].outputs for n in ("BiLD", "BiLD inflight")}
    out["BiLD inflight"]["identical_to_bild"] = identical_share(bild_out["BiLD inflight"],
                                                                bild_out["BiLD"])
    out["BiLD inflight"]["scores_identical_to_bild"] = identical_share(scores["BiLD inflight"],
                                                                       scores["BiLD"])
    if args.peak_memory:
        for name, peak in peak_memory(target_path, draft_path, batch_size, args).items():
            out[name]["peak_rss_mib"] = peak
    return {"factor": factor, "batch_size": batch_size, "sentences": n, "engines": out}


def sentences(args, batch_size: int) -> int:
    """The sentences a setting decodes: --sentences, or --min-batches batches if more."""
    return max(args.sentences, args.min_batches * batch_size)


def peak_memory(target_path, draft_path, batch_size, args):
    """{engine: peak RSS MiB} of the default generator and speculative decoding, batch by batch
    and streamed, each decoding every sentence in a process of its own."""
    import tempfile

    from benchmarks.engine_rss import alone
    from benchmarks.engines import DEFAULT, DEFAULT_INFLIGHT, SPECULATIVE

    peaks = {}
    with tempfile.TemporaryDirectory(prefix="benchmark_inflight-") as folder:
        for name, engine, draft in (("default", DEFAULT, None),
                                    ("default inflight", DEFAULT_INFLIGHT, None),
                                    ("speculative", SPECULATIVE, draft_path),
                                    ("speculative inflight", SPECULATIVE, draft_path)):
            peaks[name] = alone(engine, target_path, args.data, draft=draft,
                                draft_len=DRAFT_LEN, batch_size=batch_size,
                                sentences=sentences(args, batch_size), threads=args.threads,
                                folder=folder,
                                decode="stream" if name.endswith("inflight") else "all",
                                prefix="benchmark_inflight")
            print(f"[inflight]   {name}: peak RSS {peaks[name]:.0f} MiB", flush=True)
    return peaks


PAIRS = (("default", "default inflight"), ("speculative", "speculative inflight"),
         ("BiLD", "BiLD inflight"))


def print_table(report):
    """The summary (each generator streamed against itself batch by batch), then every
    engine."""
    rows = report["rows"]
    print("In-flight batching against the same generator batch by batch (time ratio; target "
          "passes per token and, where measured, peak memory, streamed / batch by batch):\n")
    print("| setting | " + " | ".join(PAIR for PAIR, _ in PAIRS) + " | speculative adaptive "
          "inflight, x default |")
    print("|---|" + "---|" * (len(PAIRS) + 1))
    for row in rows:
        e = row["engines"]
        cells = []
        for batch, streamed in PAIRS:
            ratio = e[streamed]["ratio"] / e[batch]["ratio"]
            fewer = (e[streamed].get("passes_per_token", 0)
                     / e[batch].get("passes_per_token", float("inf")))
            passes = f", passes {fewer:.2f}" if fewer else ""
            if "peak_rss_mib" in e[streamed] and "peak_rss_mib" in e[batch]:
                passes += f", memory {e[streamed]['peak_rss_mib'] / e[batch]['peak_rss_mib']:.2f}"
            cells.append(f"{ratio:.2f}x{passes}")
        cells.append(f"{e['speculative adaptive inflight']['ratio']:.2f}x")
        print(f"| x{row['factor']}, batch {row['batch_size']} | " + " | ".join(cells) + " |")
    print("\nEvery engine (x default: over the default generator batch by batch; identical: the "
          "share of its sentences equal to the default generator's, float32; scores: the share "
          "whose positional scores are equal too, bit for bit):\n")
    print("| setting | engine | x default | identical | ms/token | passes/token | idle rows | "
          "peak MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        for name, e in row["engines"].items():
            same = f"{100 * e['identical']:.0f}%"
            if "scores_identical" in e:
                same += f", scores {100 * e['scores_identical']:.0f}%"
            if "identical_to_bild" in e:
                same += f" ({100 * e['identical_to_bild']:.0f}% = BiLD"
                if "scores_identical_to_bild" in e:
                    same += f", scores {100 * e['scores_identical_to_bild']:.0f}%"
                same += ")"
            passes = f"{e['passes_per_token']:.3f}" if "passes_per_token" in e else "-"
            idle = f"{100 * e['idle_share']:.0f}%" if "idle_share" in e else "-"
            peak = f"{e['peak_rss_mib']:,.0f}" if "peak_rss_mib" in e else "-"
            print(f"| x{row['factor']}, batch {row['batch_size']} | {name} | {e['ratio']:.2f}x | "
                  f"{same} | {e['ms_per_token']:.2f} | {passes} | "
                  f"{idle} | {peak} |")


def main():
    import torch

    from benchmarks.models import add_model_args

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_model_args(ap, draft=False)
    ap.add_argument("--factors", default="1,4", help="widening factors of the demo target")
    ap.add_argument("--batch-sizes", default="8,32")
    ap.add_argument("--sentences", type=int, default=96)
    ap.add_argument("--min-batches", type=int, default=8,
                    help="at least this many batches at each batch size (more sentences at "
                         "the larger ones)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--no-peak-memory", dest="peak_memory", action="store_false",
                    help="skip the peak-memory runs (four processes per setting)")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_inflight.json"))
    args = ap.parse_args()
    rows = [setting(int(f), int(b), args) for f in args.factors.split(",")
            for b in args.batch_sizes.split(",")]
    report = {"rows": rows, "draft_len": DRAFT_LEN, "threads": args.threads}
    print_table(report)
    write_report(args.json, report)


if __name__ == "__main__":
    main()

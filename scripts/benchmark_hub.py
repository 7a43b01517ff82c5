#!/usr/bin/env python3
"""The hub interface, one sentence per translate() call: stock fairseq against the plugin.

    python scripts/benchmark_hub.py [--sentences 20] [--repeats 3] [--factors 1,4]
                                    [--threads N] [--json work/benchmark_hub.json]

What a service built on `TransformerModel.from_pretrained(...).translate(sentence)` sees. Each
call encodes the sentence with sentencepiece, builds a generator (fairseq's hub builds one per
call, so whatever a generator sets up is paid per call), decodes, and decodes the text again.
For the demo target and the demo target widened F times (benchmarks.models.widened_target; x4 is
transformer-big's shape), in one process, one hub per target, with the engines

    stock fairseq                 translate(s, beam=1, no_fast_cache=True, no_fast_ngram=True):
                                  fairseq's own generator (the plugin's decoding switched off)
    fairseq_fast default          translate(s, beam=1)
    fairseq_fast speculative      + generator="speculative", draft_path=draft.pt, draft_len=4,
                                  draft_vocab=1536 (as `make demo` runs it)
    ..., adaptive                 + adaptive_draft_len=True

side by side (benchmarks.harness.interleave): each engine translates every sentence once
untimed, then in each repeat every engine translates the same --sentences test sentences, one
call each, the engines alternating and their order rotating between repeats. Per engine
(benchmarks.harness.summarize): the median over repeats of the total, as
sentences per second and ms per call, x stock, and the share of translations identical to
stock's.
"""
import argparse
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import demo  # noqa: E402
from benchmarks.harness import ROTATE, Result, interleave, summarize, write_report  # noqa: E402
from benchmarks.probes import PeakRSS  # noqa: E402

STOCK = "stock fairseq"


def engine_settings():
    """{engine: translate() keyword arguments}."""
    spec = dict(beam=1, generator="speculative", draft_path=os.path.join(demo.EXAMPLE, "draft.pt"),
                draft_len=4, draft_vocab=1536, draft_vocab_counts=demo.COUNTS)
    return {STOCK: dict(beam=1, no_fast_cache=True, no_fast_ngram=True),
            "fairseq_fast default": dict(beam=1),
            "fairseq_fast speculative": spec,
            "fairseq_fast speculative, adaptive": dict(spec, adaptive_draft_len=True)}


def load_hub(checkpoint):
    import fairseq_fast
    from fairseq.models.transformer import TransformerModel

    return TransformerModel.from_pretrained(
        demo.EXAMPLE, checkpoint, ".", user_dir=fairseq_fast.user_dir(), bpe="sentencepiece",
        sentencepiece_model=os.path.join(demo.EXAMPLE, "spm.model")).eval()


class HubEngine:
    """One engine: translate() with its keyword arguments, one call per sentence of the part,
    Result.outputs {i: translation}, tokens the words written; the warm-up (untimed) translates
    every sentence once: it loads the draft, packs weights, warms caches."""

    sliceable = False

    def __init__(self, name, hub, settings, sentences):
        self.name, self.hub, self.settings, self.sentences = name, hub, settings, sentences

    def warm_up(self):
        for s in self.sentences:
            self.hub.translate(s, **self.settings)

    def run(self, part):
        with PeakRSS() as rss:
            t0 = time.perf_counter()
            out = {i: self.hub.translate(s, **self.settings) for i, s in enumerate(part.items)}
            seconds = time.perf_counter() - t0
        return Result(seconds, sum(len(t.split()) for t in out.values()), out, rss.bytes)


def run_target(factor, sentences, repeats):
    """The engines' figures on the demo target widened `factor` times."""
    from benchmarks.models import widened_target

    checkpoint = widened_target(factor, os.path.join(demo.EXAMPLE, "target.pt"))
    hub = load_hub(checkpoint)
    print(f"[hub] x{factor}", flush=True)

    def progress(repeat, name, r):
        print(f"[hub]     {name}: {r.seconds:.2f} s, {r.tokens} words, "
              f"{r.peak_rss_bytes / 2 ** 20:.0f} MiB", flush=True)

    engines = [HubEngine(name, hub, settings, sentences)
               for name, settings in engine_settings().items()]
    timings = interleave(engines, sentences, repeats, ROTATE, on_result=progress)
    figures = summarize(timings, STOCK, len(sentences))
    rows = [{"engine": name, "seconds": f.runs_s, "sent_per_s": f.sent_per_s,
             "ms_per_call": 1e3 / f.sent_per_s,
             "x_stock": f.sent_per_s / figures[STOCK].sent_per_s,
             "identical": f.identical} for name, f in figures.items()]
    parameters = sum(p.numel() for p in hub.models[0].parameters())
    return {"factor": factor, "parameters": parameters, "engines": rows}


def print_table(report):
    print(f"one sentence per translate() call, greedy, {report['sentences']} test sentences, "
          f"{report['threads']} threads, repeats {report['repeats']} (medians)\n")
    print("| target | engine | sentences/s | ms per call | x stock | identical to stock |")
    print("|---|---|---|---|---|---|")
    for target in report["targets"]:
        label = f"x{target['factor']} ({target['parameters'] / 1e6:.1f}M)"
        for row in target["engines"]:
            print(f"| {label} | {row['engine']} | {row['sent_per_s']:.2f} | "
                  f"{row['ms_per_call']:.1f} | {row['x_stock']:.2f}x | "
                  f"{100 * row['identical']:.0f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--factors", default="1,4",
                    help="comma-separated widening factors of the demo target (1: as it is)")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_hub.json"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with open(os.path.join(demo.EXAMPLE, "test.es")) as f:
        sentences = [line.strip() for line in f if line.strip()][:args.sentences]
    report = {"sentences": len(sentences), "repeats": args.repeats, "threads": args.threads,
              "targets": [run_target(int(f), sentences, args.repeats)
                          for f in args.factors.split(",")]}
    print_table(report)
    write_report(args.json, report)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark BiLD (--generator bild) against stock greedy decoding with the large model.

    python scripts/benchmark_bild.py [--bleu-sentences 250] [--speed-sentences 60]

Sweeps the fallback threshold over 0.2 .. 0.9 and the rollback threshold over 1 .. 6 (plus
rollback 0, BiLD's exact setting, at three fallback thresholds). For each setting:
  - BLEU delta (sacrebleu, detokenised) against stock large-model greedy on --bleu-sentences test
    sentences drawn at random (fixed seed), decoded in batches of 8 (each row decodes as it does
    alone, so the batch size does not change BLEU); the same run gives the batch-8 speedup;
  - the batch-1 speedup on --speed-sentences sentences (a second random draw).
Stock is timed before, in the middle of and after the sweep (median), the sweep being one
benchmarks.harness.interleave in that fixed order. Then the default and the best setting that
loses <= 0.5 BLEU are timed side by side with stock, alternating (stock first in every repeat),
--repeats times.
Writes JSON and a PNG plot (BLEU delta against speedup).
"""
import argparse
import copy
import json
import os
import statistics
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import demo  # noqa: E402
from benchmarks.harness import (FIXED, FunctionEngine, Result,  # noqa: E402
                                identical_share, interleave, summarize, write_report)
from benchmarks.models import (add_model_args, batches, decode_all, load_target,  # noqa: E402
                               stock_generator)
from fairseq_fast.generators.bild import BiLDSequenceGenerator  # noqa: E402
from fairseq_fast.speculative.draft_loading import load_draft  # noqa: E402
from omegaconf import open_dict  # noqa: E402

FALLBACKS = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
ROLLBACKS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
EXACT = [(0.3, 0.0), (0.6, 0.0), (0.9, 0.0)]
DEFAULT = (0.6, 5.0)


def decode(generator, model, samples):
    return decode_all(generator, model, samples, seed=0)  # greedy: the seed changes nothing


def bleu(task, hyps):
    """Detokenised sacrebleu of token lists {id: [...]} against the demo's references."""
    text = {i: (None, task.target_dictionary.string(torch.tensor(t), "sentencepiece"))
            for i, t in hyps.items()}
    return demo.bleu(text)


def plot(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, marker, label in (("speedup_bs1", "o", "batch 1"), ("speedup_bs8", "s", "batch 8")):
        xs = [r[key] for r in report["sweep"]]
        ys = [r["bleu_delta"] for r in report["sweep"]]
        sc = ax.scatter(xs, ys, c=[r["fallback"] for r in report["sweep"]], cmap="viridis",
                        marker=marker, label=label, edgecolors="k", linewidths=0.3)
    fig.colorbar(sc, ax=ax, label="fallback threshold")
    for r in report["sweep"]:
        if (r["fallback"], r["rollback"]) == DEFAULT:
            ax.annotate("default", (r["speedup_bs1"], r["bleu_delta"]), fontsize=8,
                        xytext=(4, 4), textcoords="offset points")
    ax.axhline(-0.5, color="r", lw=0.8, ls="--", label="-0.5 BLEU")
    ax.axvline(1.0, color="gray", lw=0.8)
    ax.set_xlabel("speedup vs stock large-model greedy (sentences/s ratio)")
    ax.set_ylabel("BLEU delta vs large-model greedy")
    ax.set_title("BiLD on the demo pair (CPU, 2 cores)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--bleu-sentences", type=int, default=250)
    ap.add_argument("--speed-sentences", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_bild.json"))
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "bild_sweep.png"))
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    target, cfg, task = load_target(args.target, args.data)
    small = load_draft(task, args.draft, target)
    bleu_set, n_bleu = batches(task, args.bleu_sentences, 8, seed=2)
    speed_set, n_speed = batches(task, args.speed_sentences, 1, seed=1)
    gen_cfg = copy.deepcopy(cfg.generation)
    with open_dict(gen_cfg):
        gen_cfg.beam, gen_cfg.max_len_b = 1, 200
    stock = stock_generator(task, target, gen_cfg)

    def bild(fallback, rollback):
        return BiLDSequenceGenerator([target], task.target_dictionary, small_model=small,
                                     fallback_threshold=fallback, rollback_threshold=rollback,
                                     max_len_b=200)

    def stock_engine(name):
        def run(part):
            t1, _ = decode(stock, target, speed_set)
            t8, hyps = decode(stock, target, bleu_set)
            return Result(t1, outputs=hyps, figures={"seconds_bs8": t8})
        return FunctionEngine(name, run)

    def bild_engine(fallback, rollback):
        gen = bild(fallback, rollback)

        def run(part):
            t8, hyps = decode(gen, target, bleu_set)
            t1, _ = decode(gen, target, speed_set)
            stats, n_both = gen.stats, n_bleu + n_speed  # counters over both runs
            return Result(t1, outputs=hyps, figures={
                "seconds_bs8": t8,
                "large_calls_per_token": stats.row_rounds / max(stats.committed, 1),
                "small_share": stats.small_share,
                "fallbacks_per_sentence": stats.fallbacks / n_both,
                "rollbacks_per_sentence": stats.rejected / n_both})
        return FunctionEngine(f"bild {fallback} {rollback}", run)

    # the sweep: each setting once, stock before, in the middle of and after the settings
    settings = [(f, r) for f in FALLBACKS for r in ROLLBACKS] + EXACT
    half = len(settings) // 2
    stocks = [stock_engine(f"stock, {when}") for when in ("before", "middle", "after")]
    sweep = [bild_engine(*s) for s in settings]
    timings = interleave([stocks[0], *sweep[:half], stocks[1], *sweep[half:], stocks[2]],
                         None, repeats=1, order=FIXED,
                         on_result=lambda r, name, res: print(
                             f"{name}: {res.seconds:.2f} s at batch 1, "
                             f"{res.figures['seconds_bs8']:.2f} s at batch 8", flush=True))
    stock_runs = [timings.runs[e.name][0] for e in stocks]
    stock_bs1 = [r.seconds for r in stock_runs]
    stock_bs8 = [r.figures["seconds_bs8"] for r in stock_runs]
    greedy = stock_runs[0].outputs
    base_bleu = bleu(task, greedy)
    print(f"stock large-model greedy: BLEU {base_bleu:.2f} on {n_bleu} sentences", flush=True)
    rows = []
    for (fallback, rollback), engine in zip(settings, sweep):
        run = timings.runs[engine.name][0]
        rows.append({"fallback": fallback, "rollback": rollback, "seconds_bs1": run.seconds,
                     "bleu": bleu(task, run.outputs),
                     "identical_share": identical_share(run.outputs, greedy), **run.figures})
        print(json.dumps(rows[-1]), flush=True)
    s1, s8 = statistics.median(stock_bs1), statistics.median(stock_bs8)
    for r in rows:
        r["speedup_bs1"], r["speedup_bs8"] = s1 / r["seconds_bs1"], s8 / r["seconds_bs8"]
        r["bleu_delta"] = r["bleu"] - base_bleu
    ok = [r for r in rows if r["bleu_delta"] >= -0.5 and r["rollback"] > 0]
    best = max(ok, key=lambda r: r["speedup_bs1"]) if ok else None

    # side by side: stock vs the default and the best setting, alternating, median of repeats
    chosen = [DEFAULT] + ([(best["fallback"], best["rollback"])] if best else [])
    side = []
    for fallback, rollback in dict.fromkeys(chosen):
        gen = bild(fallback, rollback)
        for bsz, samples in ((1, speed_set), (8, bleu_set)):
            n = n_speed if bsz == 1 else n_bleu
            engines = [FunctionEngine(name, lambda part, g=g, b=samples:
                                      Result(decode(g, target, b)[0]))
                       for name, g in (("stock", stock), ("bild", gen))]
            f = summarize(interleave(engines, None, args.repeats, FIXED), "stock", n)
            side.append({"fallback": fallback, "rollback": rollback, "batch_size": bsz,
                         "sentences": n, "stock_sent_per_s": f["stock"].sent_per_s,
                         "speedup": f["bild"].ratio})
            print(json.dumps(side[-1]), flush=True)
    report = {"threads": torch.get_num_threads(), "bleu_sentences": n_bleu,
              "speed_sentences": n_speed, "stock_bleu": base_bleu,
              "stock_seconds_bs1": stock_bs1, "stock_seconds_bs8": stock_bs8,
              "sweep": rows, "side_by_side": side,
              "best_within_half_bleu": best and {k: best[k] for k in ("fallback", "rollback")}}
    write_report(args.json, report)
    os.makedirs(os.path.dirname(args.png), exist_ok=True)
    plot(report, args.png)
    print_tables(report)


def print_tables(report):
    print(f"\nstock large-model greedy BLEU {report['stock_bleu']:.2f} "
          f"({report['bleu_sentences']} sentences)")
    print("| fallback | rollback | speedup bs1 | speedup bs8 | BLEU delta | identical | "
          "tokens by small model | large calls per token |")
    print("|---|---|---|---|---|---|---|---|")
    for r in report["sweep"]:
        print(f"| {r['fallback']} | {r['rollback']:g} | {r['speedup_bs1']:.2f}x | "
              f"{r['speedup_bs8']:.2f}x | {r['bleu_delta']:+.2f} | "
              f"{100 * r['identical_share']:.0f}% | {100 * r['small_share']:.0f}% | "
              f"{r['large_calls_per_token']:.2f} |")
    print("\nside by side (alternating, median of repeats):")
    print("| fallback | rollback | batch | sentences | stock sent/s | speedup |")
    print("|---|---|---|---|---|---|")
    for r in report["side_by_side"]:
        print(f"| {r['fallback']} | {r['rollback']:g} | {r['batch_size']} | {r['sentences']} | "
              f"{r['stock_sent_per_s']:.2f} | {r['speedup']:.2f}x |")


if __name__ == "__main__":
    main()

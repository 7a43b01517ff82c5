#!/usr/bin/env python3
"""The whole benchmark suite on the demo pair, one command: JSON, PNG and the README's tables.

    python scripts/report.py [--quick] [--only engines,pipeline,...] [--out work/report]
                             [--ct2-threads N]

Runs one benchmark after another (never two at once: they time each other otherwise), each in
its own process, each writing its JSON into --out:

    engines      benchmark_engines.py   stock fairseq vs fairseq_fast vs CTranslate2, fp32,
                                        greedy and beam 5, batch 1 and 32
    speculative  benchmark.py           speculative vs stock: greedy bs 1/8, sampling, adaptive,
                                        --draft-vocab
    bild         benchmark_bild.py      BiLD threshold sweep, BLEU and speed vs stock
    defaults     benchmark_defaults.py  the plugin's default generator vs stock, n-gram blocker
    linear       benchmark_linear.py    the plugin with F.linear, oneDNN only and its small-matrix
                                        kernel (default) vs stock
    pipeline     benchmark_pipeline.py  fairseq-generate end to end, --postprocess-workers 0 vs 2
    latency      benchmark_latency.py   speculative fairseq-generate vs CTranslate2, greedy bs 1,
                                        each in its own process

then merges what is in --out into report.json, plots docs/report.png and prints the summary
table. --quick uses fewer sentences and repeats (a smoke run; its figures are noisier). The full
run takes about 100 minutes on 2 CPU cores, BiLD's sweep 45 of them.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")

#            name          script                   full arguments                   --quick
SUITE = [("engines", "benchmark_engines.py", ["--sentences", "100"], ["--sentences", "24",
                                                                        "--repeats", "1"]),
         ("speculative", "benchmark.py", ["--sentences", "100"], ["--sentences", "24",
                                                                   "--repeats", "1"]),
         ("bild", "benchmark_bild.py", ["--bleu-sentences", "400", "--speed-sentences", "60"],
          ["--bleu-sentences", "40", "--speed-sentences", "12", "--repeats", "1"]),
         ("defaults", "benchmark_defaults.py", ["--sentences", "256"],
          ["--sentences", "32", "--repeats", "1"]),
         ("linear", "benchmark_linear.py", ["--sentences", "60"],
          ["--sentences", "12", "--repeats", "2"]),
         ("pipeline", "benchmark_pipeline.py", ["--sentences", "400"],
          ["--sentences", "64", "--repeats", "1"]),
         ("latency", "benchmark_latency.py", ["--sentences", "1131"],
          ["--sentences", "40", "--repeats", "1"])]


def run_suite(names, out, quick, ct2_threads=None):
    for name, script, full, small in SUITE:
        if name not in names:
            continue
        args = [sys.executable, os.path.join(SCRIPTS, script), *(small if quick else full),
                "--json", os.path.join(out, f"{name}.json")]
        if name == "bild":
            args += ["--png", os.path.join(out, "bild_sweep.png")]
        if name in ("engines", "latency") and ct2_threads:
            args += ["--ct2-threads", str(ct2_threads)]
        print(f"[report] {name}: {' '.join(args[1:])}", flush=True)
        subprocess.run(args, check=True)


def load(out):
    report = {}
    for name, *_ in SUITE:
        path = os.path.join(out, f"{name}.json")
        if os.path.exists(path):
            with open(path) as f:
                report[name] = json.load(f)
    return report


def speedups(report):
    """(label, speedup vs stock) for every plugin feature measured."""
    rows = []
    for s in report.get("speculative", {}).get("settings", []):
        rows.append((f"speculative: {s['setting']}, bs {s['batch_size']}", s["speedup"]))
    for s in report.get("bild", {}).get("side_by_side", []):
        rows.append((f"BiLD {s['fallback']}/{s['rollback']}, bs {s['batch_size']}",
                     s["speedup"]))
    for s in report.get("defaults", {}).get("settings", []):
        rows.append((f"defaults: {s['setting']}", s["speedup"]))
    for s in report.get("linear", {}).get("settings", []):
        for variant, key in (("--no-fast-linear", "f_linear_speedup"),
                             ("oneDNN only", "onednn_speedup"),
                             ("small-matrix kernel", "kernel_speedup")):
            rows.append((f"{s['setting']}, bs {s['batch_size']}, {variant}", s[key]))
    for name, s in report.get("pipeline", {}).get("settings", {}).items():
        rows.append((f"pipeline: {name}, wall clock", s["serial_wall_s"] / s["workers_wall_s"]))
    return rows


def print_tables(report):
    engines = report.get("engines")
    if engines:
        sys.path.insert(0, SCRIPTS)
        from benchmark_engines import print_table

        print_table(engines)
    print("\n| plugin feature vs stock fairseq | speedup |\n|---|---|")
    for label, x in speedups(report):
        print(f"| {label} | {x:.2f}x |")
    for name, s in report.get("pipeline", {}).get("settings", {}).items():
        print(f"\npipeline {name}: post-processing {s['postprocess_s']:.2f}s, hidden "
              f"{100 * s['hidden']:.0f}%, wall {s['serial_wall_s']:.1f}s -> "
              f"{s['workers_wall_s']:.1f}s, identical output {s['identical_output']}")
    latency = report.get("latency")
    if latency:
        medians = latency["medians"]
        print(f"\nlatency, greedy batch 1, {latency['sentences']} sentences, each engine in "
              f"its own process: " + ", ".join(f"{name} {x:.2f} sentences/s"
                                        for name, x in medians.items())
              + f"; speculative / CTranslate2 {latency['ratio']:.2f}x")


def plot(report, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5))
    engines = report.get("engines", {}).get("settings", [])
    names = ["stock fairseq", "fairseq_fast default", "fairseq_fast speculative", "CTranslate2"]
    width = 0.2
    for k, engine in enumerate(names):
        xs, ys = [], []
        for j, row in enumerate(engines):
            if engine in row["engines"]:
                xs.append(j + (k - 1.5) * width)
                ys.append(row["engines"][engine]["sent_per_s"])
        ax1.bar(xs, ys, width, label=engine)
    ax1.set_xticks(range(len(engines)))
    ax1.set_xticklabels([f"{r['setting']}\nbatch {r['batch_size']}" for r in engines])
    threads = report.get("engines", {}).get("threads", 2)
    ct2 = report.get("engines", {}).get("ct2_threads", threads)
    ax1.set_ylabel(f"sentences/s (fp32; torch {threads} threads, CTranslate2 {ct2})")
    ax1.set_yscale("log")
    ax1.set_title("demo target: stock fairseq, fairseq_fast, CTranslate2")
    ax1.legend(fontsize=8)
    rows = speedups(report)
    ax2.barh([label for label, _ in rows], [x for _, x in rows], color="tab:green")
    ax2.axvline(1.0, color="black", linewidth=0.8)
    ax2.set_xlabel("speedup vs stock fairseq (same run, alternating, medians)")
    ax2.invert_yaxis()
    ax2.tick_params(axis="y", labelsize=7)
    ax2.set_title("fairseq_fast features vs stock")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(name for name, *_ in SUITE))
    ap.add_argument("--no-run", action="store_true", help="only merge, plot and print")
    ap.add_argument("--ct2-threads", type=int, default=None,
                    help="CTranslate2's intra_threads in the engines and latency steps (default: "
                         "each script's own: benchmark_engines.py --threads, benchmark_latency.py "
                         "2; on session 12's 2-core Intel VM CTranslate2 ran ~10x slower with 2 "
                         "than with 1)")
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "report"))
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "report.png"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    unknown = set(args.only.split(",")) - {name for name, *_ in SUITE}
    if unknown:
        sys.exit(f"report: unknown --only {','.join(sorted(unknown))}")
    if not args.no_run:
        run_suite(args.only.split(","), args.out, args.quick, args.ct2_threads)
    report = load(args.out)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    plot(report, args.png)
    print_tables(report)


if __name__ == "__main__":
    main()

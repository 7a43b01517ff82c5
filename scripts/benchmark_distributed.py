#!/usr/bin/env python3
"""One generation job on 1 and 2 processes (torchrun), and a scaling model with measured inputs.

    python scripts/benchmark_distributed.py [--sentences 1131] [--setting greedy|beam5]
                                            [--batch-size 32] [--repeats 3]
                                            [--json work/benchmark_distributed.json]

On the demo pair (the first --sentences test pairs, --remove-bpe sentencepiece), alternating,
--repeats times, medians, three real runs of the same job:

    fairseq-generate       the plugin's fairseq-generate, one process, torch threads = the cores
    1 process              python -m fairseq_fast.generate, --rank-threads = the cores
    2 processes            torchrun --standalone --nproc-per-node 2 -m fairseq_fast.generate,
                           --rank-threads = cores / 2 (the cores are not oversubscribed)

Per run: wall clock (start to exit), sentences/s over it, and from the job's own timing line its
start-up (process start until the first chunk is handed out: interpreter, imports, models, data,
batches, the ranks' start-up rounds), generation (first chunk handed out until every rank is
done) and merge (rank 0 writes the output and the scorer's line), each as a share of the wall
clock; and whether its stdout is byte for byte fairseq-generate's.

The scaling model needs what a run cannot show on 2 cores: every batch of the job is generated
once more in this process (one thread), timed, in fairseq's batch order. From those times: how
evenly ways of splitting the same batches among R ranks load them (the straggler bound), and the
model of a job on M machines x G devices written into the JSON's `model` section and printed by
print_tables (docs/benchmarks.md).
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
from benchmarks.harness import (FIXED, FunctionEngine, Result, interleave,  # noqa: E402
                                median_figure, write_report)

SETTINGS = {"greedy": ["--beam", "1"], "beam5": ["--beam", "5"]}
RANKS = (2, 4, 8, 16, 64)  # the straggler table's rank counts
BIG_JOB = 40_000_000  # sentences, the job of fairseq issue #4528


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def job_args(data, setting, batch_size):
    import demo

    return [data, "--path", os.path.join(demo.EXAMPLE, "target.pt"), "--gen-subset", "test",
            "--source-lang", "es", "--target-lang", "en", "--batch-size", str(batch_size),
            "--required-batch-size-multiple", "1", "--remove-bpe", "sentencepiece",
            *SETTINGS[setting]]


def commands(args, n_cores):
    import demo
    from benchmarks.models import plugin_dir

    torchrun = os.path.join(demo.BIN, "torchrun")
    half = max(1, n_cores // 2)
    return {
        "fairseq-generate": ([os.path.join(demo.BIN, "fairseq-generate"), *args, "--user-dir",
                              plugin_dir()], 1, n_cores),
        "1 process": ([sys.executable, "-m", "fairseq_fast.generate", *args, "--rank-threads",
                       str(n_cores)], 1, n_cores),
        "2 processes": ([torchrun, "--standalone", "--nproc-per-node", "2", "-m",
                         "fairseq_fast.generate", *args, "--rank-threads", str(half)], 2, half),
    }


def run(cmd, n_cores):
    env = dict(os.environ, OMP_NUM_THREADS=str(n_cores))
    env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, env=env)
    wall = time.perf_counter() - start
    err = result.stderr.decode(errors="replace")
    if result.returncode != 0:
        sys.exit(f"benchmark_distributed: {' '.join(cmd[:3])} failed:\n{err[-3000:]}")
    figures = {"wall_s": wall}
    timing = re.search(r"timing: start-up ([\d.]+)s, generation ([\d.]+)s, merge ([\d.]+)s", err)
    if timing:
        figures.update(startup_s=float(timing.group(1)), generation_s=float(timing.group(2)),
                       merge_s=float(timing.group(3)))
    else:  # fairseq-generate: only its generation time
        figures["generation_s"] = float(re.search(r"Translated [\d,]+ sentences .* in ([\d.]+)s",
                                                  err).group(1))
    return figures, result.stdout


# -- per-batch times, in this process ------------------------------------------------------------
def batch_times(args):
    """[(rows, padded tokens, longest sentence, seconds)] for fairseq's batches, in order, and
    the seconds one rank spends building the batch list and the chunks' costs (the part of the
    start-up that grows with the data)."""
    import logging
    import warnings

    import torch

    logging.disable(logging.INFO)
    warnings.simplefilter("ignore")
    import fairseq_fast  # noqa: F401
    from fairseq_fast.cli import chunks
    from fairseq_fast.cli.distributed import Ranks
    from fairseq_fast.generate import _num_tokens, set_up

    job = set_up(args + ["--rank-threads", "1"], Ranks.solo())
    sizes = _num_tokens(job.dataset)
    cfg = job.cfg
    start = time.perf_counter()
    frozen = job.task.get_batch_iterator(
        dataset=job.dataset, max_tokens=cfg.dataset.max_tokens,
        max_sentences=cfg.dataset.batch_size, disable_iterator_cache=True,
        required_batch_size_multiple=cfg.dataset.required_batch_size_multiple).frozen_batches
    chunks.batch_tokens(frozen, sizes)
    plan_s = time.perf_counter() - start
    out = []
    with torch.no_grad():
        for i, batch in enumerate([job.batches[0]] + list(job.batches)):
            sample = job.dataset.collater([job.dataset[j] for j in batch])
            start = time.perf_counter()
            job.task.inference_step(job.generator, job.models, sample)
            seconds = time.perf_counter() - start
            if i:  # the first is a warm-up
                longest = int(max(sizes(batch)))
                out.append((len(batch), len(batch) * longest, longest, seconds))
    costs = chunks.batch_tokens(job.batches, sizes)
    assert [c for _, c, _, _ in out] == costs.tolist()
    return out, plan_s


def merge_rate(text: bytes, megabytes=64, chunk_mb=1):
    """MB/s of the merge (chunks.merge, then fsync) over --megabytes of chunk files made of the
    job's own output, recorded as a rank records them (so they are in the page cache, as a
    machine's own chunks are after generating them)."""
    import tempfile

    from fairseq.scoring import bleu

    from fairseq_fast.cli import chunks

    piece = text.decode("utf-8")
    piece = piece * max(1, int(chunk_mb * 1e6 / max(1, len(text))))
    count = max(1, int(megabytes / chunk_mb))
    new = lambda: bleu.Scorer(bleu.BleuConfig(pad=1, eos=2, unk=3))  # noqa: E731
    stats = {"sentences": 1, "tokens": 1, "seconds": 0.0, "has_target": True}
    with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "work")) as tmp:
        folder = chunks.WorkFolder(tmp)
        recorder = chunks.Recorder(folder, 0, new)
        for c in range(count):
            recorder.on_item(("batch", c, piece, [], stats))
            recorder.on_item(("end", c))
        plan = [chunks.Chunk(c, c, c + 1, 1, 1) for c in range(count)]
        start = time.perf_counter()
        with open(os.path.join(tmp, "out.txt"), "wb") as out:
            chunks.merge(folder, plan, out, new())
            out.flush()
            os.fsync(out.fileno())
        seconds = time.perf_counter() - start
    return count * len(piece.encode("utf-8")) / 1e6 / seconds


# -- splitting the batches among R ranks -----------------------------------------------------------
def contiguous(times, weights, ranks):
    """Makespan of R contiguous shares of equal total weight (in batch order)."""
    total, acc, loads = sum(weights), 0.0, [0.0] * ranks
    for t, w in zip(times, weights):
        loads[min(ranks - 1, int((acc + w / 2) / total * ranks))] += t
        acc += w
    return max(loads)


def round_robin(times, ranks):
    """fairseq's --num-shards: batch b goes to shard b mod R."""
    return max(sum(times[r::ranks]) for r in range(ranks))


def queue(times, costs, ranks, chunk_tokens):
    """The job's own way: chunks of chunk_tokens, longest sentences first, each to the first
    rank that is free."""
    import numpy as np

    from fairseq_fast.cli import chunks as plan_chunks

    batches = [[0]] * len(times)
    plan = plan_chunks.plan(batches, np.asarray(costs), chunk_tokens)
    free = [0.0] * ranks
    for index in plan_chunks.queue(plan):
        chunk = plan[index]
        r = min(range(ranks), key=free.__getitem__)
        free[r] += sum(times[chunk.first:chunk.end])
    return max(free), max(sum(times[c.first:c.end]) for c in plan)


def straggler_table(batches):
    import numpy as np

    from fairseq_fast.cli.chunks import automatic_chunk_tokens

    times = [b[3] for b in batches]
    rows = [b[0] for b in batches]
    costs = [b[1] for b in batches]
    total = sum(times)
    table = []
    for r in [r for r in RANKS if len(times) >= 4 * r] or RANKS[:1]:
        ideal = total / r
        size = automatic_chunk_tokens(np.asarray(costs), r)
        makespan, longest = queue(times, costs, r, size)
        table.append({"ranks": r, "batches per rank": round(len(times) / r, 1),
                      "equal sentences, contiguous": ideal / contiguous(times, rows, r),
                      "fairseq --num-shards (round robin)": ideal / round_robin(times, r),
                      "equal tokens, contiguous": ideal / contiguous(times, costs, r),
                      "queue of chunks (this job)": ideal / makespan,
                      "queue bound": ideal / (ideal + longest)})
    return table


def cost_by_length(batches):
    """Seconds per padded token in each quarter of the batches (they run from the shortest
    sentences to the longest), relative to the whole."""
    per_token = sum(b[3] for b in batches) / sum(b[1] for b in batches)
    n = len(batches)
    quarters = []
    for q in range(4):
        part = batches[q * n // 4:(q + 1) * n // 4]
        if part:
            quarters.append({"quarter": q + 1, "longest sentence": max(b[2] for b in part),
                             "seconds per token / mean": sum(b[3] for b in part)
                             / sum(b[1] for b in part) / per_token})
    return quarters


# -- the model ------------------------------------------------------------------------------------
def model(report, plan_s, merge_mb_per_s):
    """The measured inputs of T(R) = S + W / (R r) (1 + e_R) + C n, and what they give."""
    runs = {r["run"]: r for r in report["runs"]}
    one = runs["1 process"]
    n = report["sentences"]
    rate = n / sum(report["batch_seconds"])  # one rank, one thread
    out_bytes = report["output_bytes"]
    inputs = {"start_up_s": one["startup_s"], "plan_s_per_sentence": plan_s / n,
              "rank_sentences_per_s": rate, "output_bytes_per_sentence": out_bytes / n,
              "merge_mb_per_s": merge_mb_per_s,
              "merge_s_per_sentence": out_bytes / n / 1e6 / merge_mb_per_s}
    predictions = []
    for m, g in ((1, 1), (1, 2), (1, 8), (4, 8), (16, 8)):
        r = m * g
        gen = BIG_JOB / (r * rate)
        tail = gen / (2 * 16)  # half a chunk per rank at 16 chunks per rank
        merge = BIG_JOB * inputs["merge_s_per_sentence"]
        start = inputs["start_up_s"] + BIG_JOB * inputs["plan_s_per_sentence"]
        total = start + gen + tail + merge
        serial = start + merge
        predictions.append({"machines x devices": f"{m} x {g}", "generation h": gen / 3600,
                            "serial (start-up + merge) s": serial, "serial share": serial / total,
                            "efficiency": gen / total})
    return {"inputs": inputs, "predictions": predictions}


MODEL_TEXT = """\
### A model of a job on M machines x G devices

R = M x G ranks, n sentences, W the work of generating them all (one rank: W / r seconds at r
sentences/s).

    T(R) = S + (W / (R r)) (1 + e_R) + C n

- **S, start-up, serial in time but paid once per rank in parallel**: interpreter, imports,
  models, the data set, the ranks' start-up rounds through the store (O(R) small records), and
  fairseq's batch list, which every rank builds (a sort of the n lengths, O(n log n)). Measured:
  {startup:.2f} s for this job, of which the batch list takes {plan_us:.1f} us per sentence.
- **C n, the merge, serial at rank 0**: it copies every chunk's text into one output and adds
  up the chunks' BLEU counts (one record per chunk). Measured on 64 MB of chunks (from the page
  cache, the output flushed to disk): {mbps:.0f} MB/s, so at {bps:.0f} bytes of output per
  sentence {merge_us:.1f} us per sentence.
- **Everything else runs in parallel**: each rank generates and formats its chunks and writes them
  to the work folder; the queue costs one store round trip per chunk.
- **e_R, the stragglers**: ranks run out of work at different times. Shares cut in batch order
  (sorted by length) by sentence count put the longest sentences on the last rank: the straggler
  table measures what that costs. Cut by tokens, shares still differ as far as a token's cost
  depends on its sentence's length (the quarter table: here from {q_low:.2f} to {q_high:.2f} of the
  mean), and as far as ranks differ in speed. The queue absorbs both: a rank takes a chunk
  whenever it is free, longest sentences first, so the ranks finish within one chunk of each
  other: e_R <= (time of the longest chunk) / (W / (R r)), at most about 1 / 16 at the automatic
  chunk size (16 chunks per rank), 1 / 32 on average, the figure used below.

With the figures measured here (one rank, one thread, at {rate:.1f} sentences/s; S from the
1-process run; the batch list, taken as linear in n, and C measured in this process) a job of
{big:,} sentences (fairseq issue #4528):

{table}

The serial parts stay below {serial_share:.1%} of the job up to 16 x 8 ranks of this speed. Ranks
k times faster (GPUs) divide W / (R r) by k, so the serial share grows about k-fold: the start-up
(model loading, the batch list) is the first term to matter, then the merge, a copy of the
output at disk speed.
"""


def model_markdown(report):
    m = report["model"]
    rows = ["| machines x devices | generation, hours | serial, s | efficiency |",
            "|---|---|---|---|"]
    rows += [f"| {p['machines x devices']} | {p['generation h']:.2f} | "
             f"{p['serial (start-up + merge) s']:.0f} | {p['efficiency']:.1%} |"
             for p in m["predictions"]]
    i = m["inputs"]
    quarters = [q["seconds per token / mean"] for q in report["cost_by_length"]]
    return MODEL_TEXT.format(startup=i["start_up_s"], mbps=i["merge_mb_per_s"],
                             plan_us=1e6 * i["plan_s_per_sentence"], q_low=min(quarters),
                             q_high=max(quarters),
                             bps=i["output_bytes_per_sentence"],
                             merge_us=1e6 * i["merge_s_per_sentence"],
                             rate=i["rank_sentences_per_s"], big=BIG_JOB, table="\n".join(rows),
                             serial_share=max(p["serial share"] for p in m["predictions"]))


def print_tables(report):
    print(f"{report['setting']}, batch {report['batch_size']}, {report['sentences']} sentences, "
          f"{report['cores']} cores, repeats {report['repeats']} (medians)\n")
    print("| run | processes x threads | wall | sentences/s | start-up | generation | merge "
          "| output |")
    print("|---|---|---|---|---|---|---|---|")
    for r in report["runs"]:
        share = (lambda key: f"{r[key]:.3g} s ({r[key] / r['wall_s']:.1%})" if key in r
                 else "-")
        print(f"| {r['run']} | {r['processes']} x {r['threads_per_rank']} | {r['wall_s']:.2f} s "
              f"| {r['sentences_per_s']:.2f} | {share('startup_s')} | {share('generation_s')} "
              f"| {share('merge_s')} | {'identical' if r['identical'] else 'DIFFERENT'} |")
    print(f"\n2 processes / 1 process: {report['speedup_2_over_1']:.2f}x sentences/s over the "
          f"wall clock, {report['generation_speedup_2_over_1']:.2f}x over generation alone.\n")
    print(f"Straggler bound: the {len(report['batch_seconds'])} batches' measured times (one "
          "thread) split among R ranks; efficiency = ideal share / the longest rank's share.\n")
    names = [k for k in report["straggler"][0] if k != "ranks"]
    print("| ranks | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for row in report["straggler"]:
        print(f"| {row['ranks']} | " + " | ".join(
            f"{row[k]:.1%}" if isinstance(row[k], float) and k != "batches per rank"
            else str(row[k]) for k in names) + " |")
    print("\nCost of a token by sentence length (the batches in quarters, shortest first):\n")
    print("| quarter | longest sentence | seconds per token / mean |\n|---|---|---|")
    for q in report["cost_by_length"]:
        print(f"| {q['quarter']} | {q['longest sentence']} | {q['seconds per token / mean']:.2f} |")
    print()
    print(model_markdown(report))


def main():
    import demo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1131)
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="greedy")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_distributed.json"))
    args = ap.parse_args()
    data = demo.binarise(None if args.sentences >= 1131 else args.sentences)
    n_cores = cores()
    cli = job_args(data, args.setting, args.batch_size)
    outputs = {}  # each run's stdout, its last repeat's

    def engine(name, cmd, threads):
        def timed(part):
            figures, outputs[name] = run(cmd, threads)
            return Result(figures["wall_s"], figures=figures)
        return FunctionEngine(name, timed)

    def progress(repeat, name, r):
        print(f"[{repeat + 1}/{args.repeats}] {name}: {r.figures}", flush=True)

    runs = interleave([engine(name, cmd, threads)
                       for name, (cmd, _, threads) in commands(cli, n_cores).items()],
                      None, args.repeats, FIXED, on_result=progress).runs
    n = outputs["fairseq-generate"].count(b"\nH-") + outputs["fairseq-generate"].startswith(b"H-")
    report = {"setting": args.setting, "sentences": n, "batch_size": args.batch_size,
              "repeats": args.repeats, "cores": n_cores,
              "output_bytes": len(outputs["1 process"]), "runs": []}
    for name, (cmd, processes, threads) in commands(cli, n_cores).items():
        med = {k: median_figure(runs[name], k) for k in runs[name][0].figures}
        report["runs"].append({"run": name, "processes": processes, "threads_per_rank": threads,
                               **med, "sentences_per_s": n / med["wall_s"],
                               "identical": outputs[name] == outputs["fairseq-generate"],
                               "all_wall_s": [r.seconds for r in runs[name]]})
    by = {r["run"]: r for r in report["runs"]}
    report["speedup_2_over_1"] = by["1 process"]["wall_s"] / by["2 processes"]["wall_s"]
    report["generation_speedup_2_over_1"] = (by["1 process"]["generation_s"]
                                             / by["2 processes"]["generation_s"])
    batches, plan_s = batch_times(cli)
    report["batch_seconds"] = [b[3] for b in batches]
    report["straggler"] = straggler_table(batches)
    report["cost_by_length"] = cost_by_length(batches)
    report["model"] = model(report, plan_s, merge_rate(outputs["1 process"]))
    write_report(args.json, report)
    print_tables(report)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""End-to-end fairseq-generate with and without --postprocess-workers, on the demo pair.

    python scripts/benchmark_pipeline.py [--sentences 400] [--workers 2] [--repeats 3]
                                         [--json work/benchmark_pipeline.json]

For each setting (plugin's default generator, batch 32, --remove-bpe sentencepiece; greedy and
beam 5), on the first --sentences test pairs:
- P, what fairseq's serial loop spends turning batches into text and scores: measured in this
  process by generating once and timing postprocess.GenerateLines (the loop's per-batch work,
  byte-identical output; see tests/test_pipeline.py) and the scorer over every batch;
- the real fairseq-generate with --postprocess-workers 0 and N, alternating (0 first in every
  repeat: benchmarks.harness.interleave), --repeats times, medians: wall clock W0 and WN
  (start to exit) and the generation seconds fairseq logs, G.
hidden = ((W0 - G0) - (WN - GN)) / P: the share of the post-processing the workers took off the
main loop (what a run spends outside generation, serial minus pipelined, over P; start-up and
loading cancel out). Wall-clock saved is W0 - WN; on 2 cores the workers also take CPU time from
generation (GN vs G0).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import demo  # noqa: E402
from benchmarks.harness import (FIXED, FunctionEngine, Result, interleave,  # noqa: E402
                                write_report)
from benchmarks.models import plugin_dir  # noqa: E402

SETTINGS = {"greedy": ["--beam", "1"], "beam5": ["--beam", "5"]}


def cli_args(data, setting, batch_size):
    return [data, "--path", os.path.join(demo.EXAMPLE, "target.pt"), "--gen-subset", "test",
            "--source-lang", "es", "--target-lang", "en", "--batch-size", str(batch_size),
            "--required-batch-size-multiple", "1", "--remove-bpe", "sentencepiece",
            "--user-dir", plugin_dir(),
            *SETTINGS[setting]]


def postprocess_seconds(args):
    """P: GenerateLines + scorer over every batch, as the serial loop does them."""
    import torch
    from fairseq import options, scoring, tasks, utils
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq_cli.generate import get_symbols_to_strip_from_output

    import fairseq_fast  # noqa: F401
    from fairseq_fast.cli.postprocess import GenerateLines, add_to_scorer, pack_generated

    parser = options.get_generation_parser()
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(parser, args))
    task = tasks.setup_task(cfg.task)
    from fairseq import checkpoint_utils

    models, saved = checkpoint_utils.load_model_ensemble([cfg.common_eval.path], task=task)
    task.load_dataset("test", task_cfg=saved.task)
    generator = task.build_generator(models, cfg.generation)
    itr = task.get_batch_iterator(dataset=task.dataset("test"),
                                  max_sentences=cfg.dataset.batch_size).next_epoch_itr(
        shuffle=False)
    packed = []
    with torch.no_grad():
        for seq, sample in enumerate(itr):
            hypos = task.inference_step(generator, [m.eval() for m in models], sample)
            packed.append(pack_generated(seq, sample, hypos, cfg.generation.nbest))
    scorer = scoring.build_scorer(cfg.scoring, task.target_dictionary)
    lines = GenerateLines(cfg, task.source_dictionary, task.target_dictionary,
                          task.build_tokenizer(cfg.tokenizer), task.build_bpe(cfg.bpe),
                          utils.load_align_dict(None), get_symbols_to_strip_from_output(generator),
                          string_scorer=hasattr(scorer, "add_string"))
    start = time.perf_counter()
    for p in packed:
        _, scored = lines(p)
        add_to_scorer(scorer, scored)
    scorer.result_string()
    return time.perf_counter() - start


def run_cli(args, workers):
    cmd = [os.path.join(demo.BIN, "fairseq-generate"), *args, "--postprocess-workers",
           str(workers)]
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"benchmark_pipeline: fairseq-generate failed:\n{result.stderr[-3000:]}")
    generation = float(re.search(r"Translated [\d,]+ sentences .* in ([\d.]+)s",
                                 result.stdout + result.stderr).group(1))
    return wall, generation, result.stdout


def cli_engine(args, workers):
    """fairseq-generate with --postprocess-workers `workers`: Result.seconds the wall clock,
    figures["generation_s"] what fairseq logs, outputs its stdout."""
    def run(part):
        wall, generation, stdout = run_cli(args, workers)
        return Result(wall, outputs=stdout, figures={"generation_s": generation})
    return FunctionEngine(str(workers), run)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--settings", default="greedy,beam5")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_pipeline.json"))
    args = ap.parse_args()
    data = demo.binarise(args.sentences)
    report = {"sentences": args.sentences, "batch_size": args.batch_size,
              "workers": args.workers, "repeats": args.repeats, "settings": {}}
    for setting in args.settings.split(","):
        cli = cli_args(data, setting, args.batch_size)
        post = postprocess_seconds(cli)
        counts = list(dict.fromkeys([0, args.workers]))
        timings = interleave([cli_engine(cli, n) for n in counts], None, args.repeats, FIXED)
        runs = {n: [(r.seconds, r.figures["generation_s"]) for r in timings.runs[str(n)]]
                for n in counts}
        outputs = {n: timings.runs[str(n)][-1].outputs for n in counts}
        med = {n: [statistics.median(x) for x in zip(*[(w, g, w - g) for w, g in r])]
               for n, r in runs.items()}
        (w0, g0, outside0), (wn, gn, outside_n) = med[0], med[args.workers]
        row = {"postprocess_s": post, "serial_wall_s": w0, "serial_generation_s": g0,
               "workers_wall_s": wn, "workers_generation_s": gn,
               "saved_s": w0 - wn, "hidden": (outside0 - outside_n) / post,
               "identical_output": outputs[0] == outputs[args.workers], "runs": runs}
        report["settings"][setting] = row
        print(f"[{setting}] P {post:.2f}s; serial: wall {w0:.2f}s (generation {g0:.2f}s); "
              f"{args.workers} workers: wall {wn:.2f}s (generation {gn:.2f}s); wall saved "
              f"{w0 - wn:.2f}s; hidden {100 * row['hidden']:.0f}% of P; identical output "
              f"{row['identical_output']}", flush=True)
    write_report(args.json, report)


if __name__ == "__main__":
    main()

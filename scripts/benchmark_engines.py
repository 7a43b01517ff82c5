#!/usr/bin/env python3
"""Stock fairseq vs fairseq_fast vs CTranslate2 on the demo target, fp32, CPU.

    python scripts/benchmark_engines.py [--sentences 100] [--repeats 3] [--threads 2]
                                        [--json work/benchmark_engines.json]

The same sentences (drawn at random from the test set with a fixed seed, as benchmark.py does)
for every engine and setting: greedy and beam 5, batch 1 and 32. Engines, alternating in each
repeat, medians of sentences/s:
- stock: fairseq's SequenceGenerator (the plugin's build_generator override bypassed);
- fairseq_fast default: what the plugin builds with no flag (FastSequenceGenerator);
- fairseq_fast speculative (greedy only): the demo draft, --draft-len 4, --draft-vocab 1536
  with the demo's counts file (what make demo runs; --draft-vocab 0 for the full vocabulary);
- CTranslate2 4.8.5: the same target.pt converted with its FairseqConverter to float32
  (benchmarks/ctranslate2_worker.py), settings equal to fairseq's defaults (length penalty 1,
  at most 200 tokens + </s>). It runs in a process of its own, one per repeat
  (`python -m benchmarks.ctranslate2_worker --sources-json`, which times translate_batch alone
  after a warm-up): loaded into this process, CTranslate2's thread runtime and torch's compete
  for the same cores, and every torch run after CTranslate2's first call can be several times
  slower.
  It runs at each of --ct2-threads' intra_threads counts (default 1 and --threads), alternating
  with the others, and each setting reports it at its fastest count (named in the table).
The fairseq engines time their generation loop in this process (models loaded once), after
an untimed warm-up on the first and last batches. The engines run in the same order in every
repeat, the fairseq ones first (benchmarks.harness.interleave).
"identical" is the share of sentences whose tokens equal stock's.
"""
import argparse
import atexit
import copy
import json
import os
import shutil
import sys
import tempfile

import torch
from omegaconf import open_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import fairseq_fast  # noqa: E402,F401  (the plugin's overrides, as --user-dir loads them)
import demo  # noqa: E402
from benchmarks import ctranslate2_worker as ct2  # noqa: E402
from benchmarks.harness import (FIXED, FunctionEngine, Result, interleave,  # noqa: E402
                                run_module, summarize, write_report)
from benchmarks.engines import fairseq_engine  # noqa: E402
from benchmarks.models import (add_model_args, batches, load_target,  # noqa: E402
                               stock_generator)
from fairseq_fast.speculative.draft_loading import load_draft  # noqa: E402
from fairseq_fast.speculative.draft_vocab import shortlist  # noqa: E402
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator  # noqa: E402

SETTINGS = [("greedy", 1, 1), ("greedy", 1, 32), ("beam 5", 5, 1), ("beam 5", 5, 32)]


def ct2_sources_engine(name, samples, src_dict, beam, batch_size, threads, folder):
    """CTranslate2 in a process of its own, Result.outputs {id: target pieces}."""
    ids = [i for s in samples for i in s["id"].tolist()]
    sources = [src_dict.string(tokens[tokens.ne(src_dict.pad()) & tokens.ne(src_dict.eos())])
               .split() for s in samples for tokens in s["net_input"]["src_tokens"]]
    src, out = os.path.join(folder, "sources.json"), os.path.join(folder, "ct2.json")
    with open(src, "w") as f:
        json.dump(sources, f)

    def run(part):
        run_module("benchmarks.ctranslate2_worker",
                   ["--sources-json", src, "--out-json", out, "--beam", beam, "--batch-size",
                    batch_size, "--threads", threads], "ctranslate2_worker", "benchmark_engines")
        with open(out) as f:
            result = json.load(f)
        return Result(result["seconds"], outputs=dict(zip(ids, result["hyps"])))
    return FunctionEngine(name, run)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--ct2-threads", type=ct2.thread_counts, default=None,
                    help="CTranslate2's intra_threads counts, e.g. 1,2 (default: 1 and "
                         "--threads); each setting reports it at its fastest")
    ap.add_argument("--draft-vocab", type=int, default=1536,
                    help="the speculative engine's draft shortlist, as make demo runs it "
                         "(0: the draft scores every token)")
    ap.add_argument("--draft-vocab-counts", default=demo.COUNTS)
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_engines.json"))
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    torch.set_num_threads(args.threads)
    if os.path.abspath(args.target) != os.path.abspath(ct2.MODEL):
        sys.exit("benchmark_engines: CTranslate2 runs the demo target only (ctranslate2_worker"
                 ".py converts it); leave --target at its default")
    target, cfg, task = load_target(args.target, args.data)
    draft = load_draft(task, args.draft, target)
    folder = tempfile.mkdtemp(prefix="benchmark_engines-")
    atexit.register(shutil.rmtree, folder, True)
    vocab = shortlist(task.target_dictionary, args.draft_vocab, args.draft_vocab_counts)
    ct2_threads = args.ct2_threads or ct2.thread_counts(f"1,{args.threads}")
    report = {"threads": args.threads, "ct2_threads": ct2_threads, "sentences": args.sentences,
              "repeats": args.repeats, "draft_vocab": args.draft_vocab, "settings": []}
    for name, beam, bsz in SETTINGS:
        samples, n = batches(task, args.sentences, bsz)
        gen_cfg = copy.deepcopy(cfg.generation)
        with open_dict(gen_cfg):
            gen_cfg.beam, gen_cfg.max_len_b = beam, 200
        tgt = task.target_dictionary
        engines = [
            fairseq_engine("stock fairseq", stock_generator(task, target, gen_cfg), target,
                           samples, tgt, peak=None),
            fairseq_engine("fairseq_fast default", task.build_generator([target], gen_cfg),
                           target, samples, tgt, peak=None),
            *[ct2_sources_engine(f"CTranslate2@{t}", samples, task.source_dictionary, beam, bsz,
                                 t, folder) for t in ct2_threads]]
        if beam == 1:
            spec = SpeculativeSequenceGenerator([target], tgt, draft_model=draft, draft_len=4,
                                                draft_vocab=vocab)
            engines.append(fairseq_engine("fairseq_fast speculative", spec, target, samples,
                                          tgt, peak=None))
        figures = summarize(interleave(engines, None, args.repeats, FIXED),
                            baseline="stock fairseq", sentences=n)
        row = {"setting": name, "beam": beam, "batch_size": bsz, "sentences": n, "engines": {
            e: {"sent_per_s": f.sent_per_s, "seconds": f.runs_s, "identical": f.identical}
            for e, f in figures.items()}}
        ct2.fold_thread_counts(row["engines"], "CTranslate2", ct2_threads)
        report["settings"].append(row)
        print(json.dumps(row), flush=True)
    write_report(args.json, report)
    print_table(report)


def print_table(report):
    engines = ["stock fairseq", "fairseq_fast default", "fairseq_fast speculative",
               "CTranslate2"]
    print(f"\nsentences/s (x stock; identical to stock), {report['sentences']} sentences, "
          f"{report['threads']} threads (CTranslate2 "
          f"{ct2.threads_label(report.get('ct2_threads', report['threads']))}), fp32")
    print("| setting | batch | " + " | ".join(engines) + " |")
    print("|---|---|" + "---|" * len(engines))
    for row in report["settings"]:
        base = row["engines"]["stock fairseq"]["sent_per_s"]
        cells = []
        for e in engines:
            r = row["engines"].get(e)
            cells.append("-" if r is None else f"{r['sent_per_s']:.2f} "
                         f"({r['sent_per_s'] / base:.2f}x; {100 * r['identical']:.0f}%"
                         + (f"; {r['threads']} thr" if "threads" in r else "") + ")")
        print(f"| {row['setting']} | {row['batch_size']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark speculative decoding against stock fairseq, side by side in one process.

    python scripts/benchmark.py [--sentences 200] [--repeats 3] [--json work/benchmark.json]

For each setting (greedy batch 1, greedy batch 8, sampling T=1 batch 1, the adaptive draft
lengths, then the first three again with the draft scoring a --draft-vocab shortlist; --settings
picks rows) the same batches are
decoded by stock SequenceGenerator and by SpeculativeSequenceGenerator, alternating (stock first in
every repeat: benchmarks.harness.interleave), several repeats; medians are reported. Also
measured: each model's decoder step time (stock incremental step, lean step, and the matmuls
alone; benchmarks.steps), the verify pass time, the cost ratio
c = draft step / verify pass, and the speedup bound (1 - a^(K+1)) / ((1 - a)(K c + 1)) of
Leviathan et al. with the measured acceptance rate a.
"""
import argparse
import copy
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import fairseq_fast  # noqa: E402,F401  (plugin overrides, as --user-dir would apply them)
from omegaconf import open_dict  # noqa: E402

from benchmarks.harness import (FIXED, FunctionEngine, Result, interleave,  # noqa: E402
                                summarize, write_report)
from benchmarks.models import (add_model_args, batches, decode_all, load_target,  # noqa: E402
                               stock_generator)
from benchmarks.steps import step_costs  # noqa: E402
from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator  # noqa: E402
from fairseq_fast.speculative.draft_loading import load_draft  # noqa: E402
from fairseq_fast.speculative.draft_vocab import shortlist  # noqa: E402
from fairseq_fast.speculative.draft_length import FixedDraftLength  # noqa: E402


class HFHeuristic(FixedDraftLength):
    """HF transformers' assisted-generation schedule, an anchor for --adaptive-draft-len: per row,
    the cap grows by 2 after a window whose drafts were all accepted and shrinks by 1 otherwise,
    within [1, 2 x --draft-len] as ours; starting at --draft-len; no confidence stop (HF before
    4.46)."""

    def __init__(self, length):
        super().__init__(2 * length)
        self.initial = length

    def start(self, batch, device):
        return torch.full((batch,), self.initial, dtype=torch.long, device=device)

    def update(self, cap, offered, accepted, times):
        return torch.where(accepted == offered, cap + 2, cap - 1).clamp(1, self.maximum)


class ConfidenceStop:
    """HF's assistant_confidence_threshold (default 0.4 since 4.46), a stop rule: the assistant
    stops once its probability for the token it just proposed is below 0.4."""

    discards_last = False

    def stop(self, prob):
        return prob < 0.4


ADAPTIVE_RULES = {"hf": (HFHeuristic, None), "hf+conf": (HFHeuristic, ConfidenceStop)}


def main():
    import demo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--sentences", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--draft-len", type=int, default=4)
    ap.add_argument("--draft-vocab", type=int, default=1536,
                    help="shortlist size for the '--draft-vocab' rows (0: leave them out)")
    ap.add_argument("--draft-vocab-counts", default=demo.COUNTS)
    ap.add_argument("--settings", default=None,
                    help="comma-separated row numbers (1-based, in the order of the table) to "
                         "run; default all")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark.json"))
    args = ap.parse_args()
    target, cfg, task = load_target(args.target, args.data)
    draft = load_draft(task, args.draft, target)
    torch.set_grad_enabled(False)

    sampling = {"sampling": True, "temperature": 1.0}
    settings = [("greedy", 1, {}), ("greedy", 8, {}), ("sampling T=1", 1, sampling),
                ("greedy, adaptive draft len", 1, {"adaptive": "ours"}),
                ("greedy, HF's draft-len heuristic", 1, {"adaptive": "hf"}),
                ("greedy, HF's heuristic + confidence 0.4", 1, {"adaptive": "hf+conf"})]
    if args.draft_vocab:
        vocab = shortlist(task.target_dictionary, args.draft_vocab, args.draft_vocab_counts)
        tag = f"--draft-vocab {args.draft_vocab}"
        settings += [(f"greedy, {tag}", 1, {"vocab": vocab}),
                     (f"greedy, {tag}", 8, {"vocab": vocab}),
                     (f"sampling T=1, {tag}", 1, {**sampling, "vocab": vocab})]
    if args.settings:
        settings = [settings[int(i) - 1] for i in args.settings.split(",")]
    report = {"threads": torch.get_num_threads(), "draft_len": args.draft_len, "settings": []}
    first, _ = batches(task, 1, 1)
    k = args.draft_len
    report["target_costs"] = step_costs(target, first[0], k)
    report["draft_costs"] = step_costs(draft, first[0], k)
    c = report["draft_costs"]["lean_step_ms"] / report["target_costs"]["verify_ms"]
    report["cost_ratio_c"] = c
    for name, bsz, opts in settings:
        samples, n = batches(task, args.sentences, bsz)
        gen_cfg = copy.deepcopy(cfg.generation)
        with open_dict(gen_cfg):
            gen_cfg.beam = 1
            gen_cfg.max_len_b = 200
            for key, value in opts.items():
                if key not in ("adaptive", "vocab"):
                    setattr(gen_cfg, key, value)
        stock = stock_generator(task, target, gen_cfg)
        spec = SpeculativeSequenceGenerator(
            [target], task.target_dictionary, draft_model=draft, draft_len=k,
            sampling=opts.get("sampling", False), temperature=opts.get("temperature", 1.0),
            adaptive_draft_len=opts.get("adaptive") == "ours", draft_vocab=opts.get("vocab"))
        if opts.get("adaptive") in ADAPTIVE_RULES:
            schedule, stop = ADAPTIVE_RULES[opts["adaptive"]]
            spec.schedule, spec.stop_rule = schedule(k), stop and stop()
        # c as it is inside a real run (each model's weights evicted from cache by the other's)
        drafting = verifying = 0.0  # seconds, from the generator's own phase clocks
        draft_steps = passes = 0

        def run_stock(part):
            seconds, hyps = decode_all(stock, target, samples, seed=part.repeat)
            return Result(seconds, outputs=hyps)

        def run_spec(part):
            nonlocal draft_steps, passes, drafting, verifying
            spec.stats = st = type(spec.stats)()
            seconds, hyps = decode_all(spec, target, samples, seed=part.repeat)
            draft_steps += st.draft_calls
            passes += st.target_calls + st.plain_rounds
            drafting += st.seconds["drafting"]
            verifying += st.seconds["verifying"]
            return Result(seconds, outputs=hyps)

        timings = interleave([FunctionEngine("stock", run_stock),
                              FunctionEngine("speculative", run_spec)],
                             None, args.repeats, FIXED)
        figures = summarize(timings, baseline="stock", sentences=n)
        agree = None if opts.get("sampling") else figures["speculative"].identical
        a = spec.stats.alpha
        c_run = (drafting / max(draft_steps, 1)) / (verifying / max(passes, 1))
        k_mean = spec.stats.draft_calls / max(spec.stats.target_calls, 1)
        bound = ((1 - a ** (k + 1)) / ((1 - a) * (k_mean * c_run + 1)) if a < 1
                 else (k + 1) / (k_mean * c_run + 1))
        speedup = figures["speculative"].ratio
        row = {"setting": name, "batch_size": bsz, "sentences": n,
               "stock_sent_per_s": figures["stock"].sent_per_s,
               "spec_sent_per_s": figures["speculative"].sent_per_s, "speedup": speedup,
               "alpha": a, "tokens_per_target_call": spec.stats.tokens_per_target_call,
               "draft_steps_per_round": k_mean, "c_in_run": c_run,
               "bound": bound, "share_of_bound": speedup / bound,
               "fp32_identical_share": agree}
        report["settings"].append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({k2: v for k2, v in report.items() if k2 != "settings"}, indent=1))
    write_report(args.json, report)
    print_table(report)


def print_table(report):
    t, d = report["target_costs"], report["draft_costs"]
    print(f"\nstep times (ms, batch 1): target stock {t['stock_step_ms']:.2f} | lean "
          f"{t['lean_step_ms']:.2f} | verify K+1 {t['verify_ms']:.2f} | matmuls "
          f"{t['matmul_only_ms']:.2f};  draft stock {d['stock_step_ms']:.2f} | lean "
          f"{d['lean_step_ms']:.2f} | matmuls {d['matmul_only_ms']:.2f};  "
          f"c = {report['cost_ratio_c']:.3f}")
    print("| setting | batch | stock sent/s | speculative sent/s | speedup | alpha | "
          "tokens/target call | c in run | bound | share of bound | fp32 identical |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in report["settings"]:
        same = "-" if r["fp32_identical_share"] is None else f"{100 * r['fp32_identical_share']:.1f}%"
        print(f"| {r['setting']} | {r['batch_size']} | {r['stock_sent_per_s']:.2f} | "
              f"{r['spec_sent_per_s']:.2f} | {r['speedup']:.2f}x | {r['alpha']:.3f} | "
              f"{r['tokens_per_target_call']:.2f} | {r['c_in_run']:.3f} | {r['bound']:.2f}x | "
              f"{100 * r['share_of_bound']:.0f}% | {same} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Step time against model size: the demo target x1, x2, x4, every engine, memory bandwidth beside.

    python scripts/benchmark_scale.py [--factors 1,2,4] [--sentences 40] [--batch-sentences 96]
                                      [--identical-sentences 0] [--repeats 3] [--slices 4]
                                      [--threads N]
                                      [--big-draft PATH] [--big-draft-len 5]
                                      [--big-draft-len-batched 3]
                                      [--ct2-threads 1,2] [--json work/benchmark_scale.json]
                                      [--png docs/scale.png]

The demo target widened F times (scripts/widen_model.py: same tokens, F times the width, ~F^2 the
weights; x4 is transformer-big's shape) is made on demand in work/scale/ (git-ignored, reused
while newer than target.pt and widen_model.py). For each F, in one process, side by side
(each engine first decodes the shortest and the longest batch untimed; then in each repeat
stock's and the plugin's engines take turns on --slices slices of the row's batches, so that
each one's run is spread over the same minutes as the others' and the machine's bandwidth
level, which may switch for seconds to minutes, meets them alike; CTranslate2's runs follow,
whole; the order rotates between repeats; medians):

    greedy, batch 1    stock fairseq, the plugin's default generator, speculative (the demo
                       draft, --draft-len 4, --draft-vocab 1536 as make demo runs it), BiLD at its
                       defaults (fallback 0.6, rollback 5), CTranslate2 float32 and int8
    greedy, batch 8    stock, default, speculative, BiLD, CTranslate2 float32 and int8 (BiLD's
                       rows fall back at different points: each row's verify window is its
                       own width, lean_decoder.forward's ragged rows)
    beam 5, batch 32   stock, default, CTranslate2 float32 and int8

and, at batch 1 and 8, speculative with a second draft, --big-draft (default draft_big.pt: the
demo target's encoder and first three decoder layers, distilled; --big-draft-len 5 at batch 1,
--big-draft-len-batched 3 at batch 8): a draft step that costs a large share of a verify pass at
x1 costs a few percent of one at x4, where a deeper draft's higher alpha pays. At batch 8 a
verify pass multiplies 8 x (gamma + 1) rows by each weight, which at x4 is bound by arithmetic
rather than memory, so fewer drafts a pass pay there. Each speculative engine runs again with
--adaptive-draft-len ("adaptive": the window length priced from the run's measured costs, starting
at --draft-len or --big-draft-len and up to twice it, whatever the batch size); its peak RSS is
its fixed-length engine's (the same models and buffers), and a line gives its mean window.

CTranslate2 converts the same widened checkpoint (benchmarks/ctranslate2_worker.py, float32) and
runs each time in a process of its own (a CTranslate2 runtime in this process slows torch's
runs, and torch's slow it); compute_type="int8" quantizes the float32 model when loading it,
which is what a CPU user of CTranslate2 runs. It runs at each of --ct2-threads' intra_threads
counts (default 1 and --threads), each count an engine of its own in the alternation, and each
row reports it at its fastest count (named beside it). Per run: seconds, tokens written (EOS
included) and the share of sentences identical to stock fairseq's.

Peak RSS is each engine's alone: CTranslate2's process's own (VmHWM); for a fairseq engine, a
process of its own loads the target (and the draft, for the engines that use it), builds the
engine and decodes the row's longest batch, as a fairseq-generate run of that engine would hold
them. (The timed process holds every engine of a row at once; its high-water mark during each
run, reset before it through /proc/self/clear_refs, is in the JSON as process_peak_rss_mib.)

The physical limit: a STREAM-like triad a = b + s c (and a plain read, sum(b)) over float32 arrays
of --stream-mib each (default 1 GiB, several times a server CPU's L3; the L3 size read from sysfs
is printed beside) with torch's threads, in a process of its own, before each factor and at the
end, best of 5 each time; and at batch 1 greedy, just before and just after each timed run of
the default generator and the lean step's timing (best of 3 each): on a shared machine the
bandwidth a process gets moves by tens of percent within minutes, so a run is set against what
the machine gave around it. Beside
it, per F, a read over one array the size of the float32 weights a step reads (which may fit in
a large L3, unlike the triad's arrays).

For a batch-1 greedy run a decoder step reads the decoder's weights once: every layer's
self-attention (q, k, v, out), the cross-attention's q and out projections (its k and v are
computed once per sentence), both FFN matrices, biases and norms, and the output projection.
They count float32 for stock fairseq and CTranslate2 float32; for CTranslate2 int8 one byte per
matrix weight (float32 scales, biases and norms); for the plugin's engines what its kernel
reads: a matrix whose values are all float16 numbers is packed as float16 (small_gemm.py). The
demo target, stored in half precision, is; the widened ones are not (dividing by F moves the
smallest values into float16's subnormal range, where their low bits do not fit).
The plugin's fc2 reads only the weight rows of hidden units that are not zero (csrc/small_gemm.c:
ReLU zeros contribute nothing): the share of nonzero units (ffn_density: stock greedy over 8
sentences, the decoder's and the encoder's) gives the bytes its batch-1 step actually reads, and
the default's share of the triad at those bytes is printed beside the one at every weight.

ms/token = seconds / tokens written: at batch 1 the step time of the engines that write one
token per step, the encoder and everything around the steps included. GB/s = weight bytes per
step / that time. % of triad: each of the default's runs against the mean of the triads
measured just before and just after the turns it ran in, where the two agree within 15% (the
median of those shares; a run whose two differ more saw the machine's bandwidth change level
and is left out: a shared machine's may switch between levels that last seconds to minutes),
every other engine against the median of all those triads
(speculative decoding and BiLD write several tokens per pass over the target's weights, so
theirs can exceed 100%). The lean decoder's own step (benchmarks.steps.step_costs: one token at
position ~20, batch 1, median of 50) is given too, against the triads measured around it.

Speculative decoding, in the terms of Leviathan et al.: alpha, the acceptance rate; gamma, the
draft length; c, the draft's step time over the target's verify-pass time as measured inside the
speculative run (benchmark.py's c); E = (1 - alpha^(gamma+1)) / (1 - alpha), the expected tokens
per verify pass; bound = E / (gamma c + 1), the speedup bound over the target decoding alone,
against which the speculative / default speedup is set. c_step (the lean draft step over the
lean target step, both one token) is printed beside. At batch 1 a second line says where a pass
goes, which is what separates the speedup from the bound (that assumes a verify pass costs a
default step, E tokens a pass and nothing but drafting besides): the verify pass's ms beside the
default's ms/token, the drafting's, the encoders' (both models' encoders and cross-attention
K/V) and the rest's (the loop) ms per pass, and the tokens a pass measured beside E. A third
line gives the share of the bound that would be left with the loop free and a verify pass
costing a default token: what the encoders, drafting and the windows cut short by EOS cost
alone (scripts/benchmark_profile.py says where the rest of the time goes). A verify pass
reads the weights a default step reads, and more; where it took less than the default's decoder
step, the engines' runs met different bandwidth levels, and a line says that the ratio is
flattered.

For every speculative engine and batch size, one more line says where its time went: the shares
of its timed runs spent verifying, drafting, in the encoders and in the rest; the positions the
target verified per token written and the share of them that decided something (a kept draft,
or the position that gave the target's own token: the others lay after a rejection, or past a
row's window in a pass that computed every row at the widest window's width, where its rows
could not be ragged); and the verify passes' arithmetic rate,
dense-equivalent (2 flops per weight a position multiplies), beside the plugin's matmul measured
alone at 64 rows on fc1's weight: a rate near it means the passes are bound by arithmetic, and
then only fewer positions make them cheaper. "Decoding alone" sets the default against the
engine with the target's encoder and cross-attention K/V taken out of both: both do that work
alike, and the bound counts decoding only (the draft's encoder stays in, a cost of
speculating). At batch 8 "with no position wasted and the loop free" is the speedup left if
the verify time of the positions that decided nothing and the rest were gone (a pass bound by
arithmetic costs in proportion to its positions).

At batch 8 the triads are measured around each repeat's turns too, and printed with the
default's run of that repeat: a step of 8 rows is still partly bound by memory, so the
default's time (and with it every speedup over it at that batch) moves with the machine's
bandwidth level.

The adaptive engines warm up over every batch of their row (the others over its first and last):
their draft length learns its costs in the first rounds, which a long job amortises.

With --identical-sentences N, N sentences are also decoded at batch 32 by the default generator
(greedy and beam 5) and by the speculative one, for every F: "identical to x1" is the share of
those hypotheses equal to the x1 target's (widening changes only float rounding), and alpha over
the N sentences is the draft's acceptance rate against that target.

Prints a table per F and a summary, writes JSON, plots step time against model size (PNG).
The triads are benchmarks.probes', CTranslate2 runs in benchmarks.ctranslate2_worker's
processes and each fairseq engine's peak RSS alone is benchmarks.engine_rss's.
"""
import argparse
import gc
import json
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

from benchmarks import engine_rss  # noqa: E402
from benchmarks.engines import (ADAPTIVE_OF, BIG, BIG_ADAPTIVE, BILD, DEFAULT,  # noqa: E402
                                FAIRSEQ, SPEC_ADAPTIVE, SPECULATIVE, SPECULATIVE_ENGINES, STOCK,
                                build_generator, ct2_engine, ct2_model, draft_of,
                                fairseq_engine, measure)
from benchmarks.harness import identical_share, write_report  # noqa: E402
from benchmarks.limits import (bracketed_shares, bytes_read, ffn_density,  # noqa: E402
                               matmul_params, weight_bytes)
from benchmarks.models import (SCALE_WORK, add_model_args, batches, decode_all,  # noqa: E402
                               load_target, widened_target)
from benchmarks.probes import bandwidth, l3_mib  # noqa: E402
# the tables, lines and plot, which benchmarks/render.py finds on this module too
from benchmarks.scale_render import (FIGURES_KEY, plot, print_diagnostics,  # noqa: E402,F401
                                     print_tables)
from benchmarks.steps import KERNEL_ROWS, kernel_gflops, step_costs  # noqa: E402
from benchmarks.timers import encoder_timer, speculation_timers  # noqa: E402


def rows(args):
    """(setting, beam, batch size, sentences, fairseq engines) of every row."""
    speculative = [SPECULATIVE, SPEC_ADAPTIVE] + ([BIG, BIG_ADAPTIVE] if args.big_draft else [])
    return [("greedy", 1, 1, args.sentences, FAIRSEQ[:2] + speculative + [BILD]),
            ("greedy", 1, 8, args.batch_sentences, FAIRSEQ[:2] + speculative + [BILD]),
            ("beam 5", 5, 32, args.batch_sentences, FAIRSEQ[:2])]


def rss_alone(engine, path, args, beam, batch_size, sentences, folder):
    """Peak RSS MiB of a fairseq engine alone (benchmarks.engine_rss)."""
    draft, draft_len = draft_of(engine, args, batch_size)
    return engine_rss.alone(engine, path, args.data, draft=draft, draft_vocab=args.draft_vocab,
                            counts=args.draft_vocab_counts, draft_len=draft_len, beam=beam,
                            batch_size=batch_size, sentences=sentences, threads=args.threads,
                            folder=folder, prefix="benchmark_scale")


def split_figures(timers, speculative, default, default_encoders, params, batch_size):
    """Where a speculative engine's timed runs went, as shares of their time: the target's
    passes ("verify": its verify passes and any plain steps), drafting, the encoders (both
    models' encoders and cross-attention K/V) and the rest (the loop); positions verified per
    token written, and the share of them that decided something (stats.useful_share); the
    verify passes' arithmetic rate, dense-equivalent (2 x matmul_params flops a position:
    fc2's skipped zeros counted as done). decode_speedup:
    default / speculative with the target's encoder and cross-attention K/V taken out of both
    (the same work in both; the bound covers the decoding alone; the draft's encoder stays in,
    a cost of speculating). At batch > 1, where a pass is bound by its arithmetic (its time
    grows with its positions), no_waste_loop_free: default / speculative with the verify time
    of the positions that decided nothing and the rest taken out."""
    drafting, verifying, encoding, (_, verified, useful, tokens), draft_encoding = timers
    total = sum(speculative["seconds"])
    rest = total - verifying.seconds - drafting.seconds - encoding.seconds
    figures = {"shares": {"verify": verifying.seconds / total,
                          "drafting": drafting.seconds / total,
                          "encoders": encoding.seconds / total, "rest": rest / total},
               "verified_per_token": verified / max(tokens, 1),
               "useful_share": useful / max(verified, 1),
               "verify_gflops": 2 * params * verified / max(verifying.seconds, 1e-9) / 1e9}
    default_total = sum(default["seconds"])
    if default_encoders is not None:
        figures["default_encoder_share"] = default_encoders.seconds / default_total
        figures["decode_speedup"] = ((default_total - default_encoders.seconds)
                                     / (total - encoding.seconds + draft_encoding.seconds))
    if batch_size > 1:
        waste = verifying.seconds * (1 - figures["useful_share"])
        figures["no_waste_loop_free"] = default_total / (total - waste - rest)
    return figures


def speculative_figures(spec, timers, gamma, default, speculative, batch_size):
    """alpha, c, E, the bound and the speedup over the default (default / speculative: the
    engines' figures from measure()); and where a pass goes, which at batch 1 sets the speedup
    against the bound's assumptions (a verify pass costs a default step, E tokens a pass, gamma
    draft steps of c each, nothing else): the verify pass's time, the drafting's, the encoders'
    and the rest's (the loop) per pass, from the timed runs' ms/token x measured tokens a pass.
    The ceiling is the share of the bound left with the loop free and a verify pass costing a
    default token, the encoders and drafting as measured and the tokens a pass as measured."""
    drafting, verifying, encoding, (draft_steps, *_), _ = timers
    a = spec.stats.alpha
    passes = max(verifying.calls, 1)
    c = (drafting.seconds / max(draft_steps, 1)) / (verifying.seconds / passes)
    expected = (1 - a ** (gamma + 1)) / (1 - a) if a < 1 else gamma + 1.0
    bound = expected / (gamma * c + 1)
    speedup = (statistics.median(default["seconds"])
               / statistics.median(speculative["seconds"]))
    tokens = spec.stats.tokens_per_target_call
    figures = {"alpha": a, "gamma": gamma, "c": c, "expected_tokens_per_verify": expected,
               "bound": bound, "speedup_vs_default": speedup, "share_of_bound": speedup / bound,
               "tokens_per_target_call": tokens}
    if batch_size != 1:  # a pass then writes tokens to several sentences at once
        return figures
    verify_ms = 1e3 * verifying.seconds / passes
    draft_ms = 1e3 * drafting.seconds / passes
    encode_ms = 1e3 * encoding.seconds / passes
    default_ms = default["ms_per_token"]
    return {**figures, "verify_ms": verify_ms, "draft_ms_per_verify": draft_ms,
            "encoders_ms_per_verify": encode_ms,
            "other_ms_per_verify": (speculative["ms_per_token"] * tokens - verify_ms - draft_ms
                                    - encode_ms),
            "default_ms_per_token": default_ms,
            "share_of_bound_ceiling": (default_ms * tokens / (default_ms + draft_ms + encode_ms)
                                       / bound)}


# -- one scale ------------------------------------------------------------------------------
def run_scale(factor, args, folder, reference):
    from fairseq_fast.speculative.draft_loading import load_draft
    from fairseq_fast.speculative.draft_vocab import shortlist

    path = widened_target(factor, args.target)
    ct2_dir = None if args.no_ct2 else ct2_model(factor, path)
    target, cfg, task = load_target(path, args.data)
    draft = load_draft(task, args.draft, target)
    drafts = {args.draft: draft}
    if args.big_draft:
        drafts[args.big_draft] = load_draft(task, args.big_draft, target)
    tgt_dict = task.target_dictionary
    vocab = shortlist(tgt_dict, args.draft_vocab, args.draft_vocab_counts)
    dec = target.decoder
    d = dec.embed_tokens.weight.size(1)
    scale = {"factor": factor, "path": os.path.relpath(path, ROOT), "embed_dim": d,
             "ffn_dim": dec.layers[0].fc1.out_features,
             "heads": dec.layers[0].self_attn.num_heads,
             "parameters": sum(p.numel() for p in target.parameters()),
             "weight_bytes_per_step": weight_bytes(dec),
             "weight_bytes_per_step_int8": weight_bytes(dec, "int8"),
             "weight_bytes_per_step_plugin": weight_bytes(dec, "plugin"), "rows": []}
    # what reading the weights' footprint alone runs at (it may fit in a large L3)
    _, scale["read_gbs_at_weights"] = bandwidth(
        -(-scale["weight_bytes_per_step"] // 2 ** 20), args.threads, prefix="benchmark_scale")
    first, _ = batches(task, 1, 1)
    scale["ffn_density"] = ffn_density(target, task, batches(task, 8, 1)[0], cfg)
    scale["weight_bytes_per_step_read"] = bytes_read(
        dec, scale["weight_bytes_per_step_plugin"], scale["ffn_density"]["decoder"])
    before = bandwidth(args.stream_mib, args.threads, 3, "benchmark_scale")[0]
    scale["target_costs"] = step_costs(target, first[0], args.draft_len)
    scale["lean_step_triads"] = (before, bandwidth(args.stream_mib, args.threads, 3,
                                                   "benchmark_scale")[0])
    scale["draft_costs"] = step_costs(draft, first[0], args.draft_len)
    scale["c_step"] = (scale["draft_costs"]["lean_step_ms"]
                       / scale["target_costs"]["lean_step_ms"])
    scale["lean_step_gbs"] = (scale["weight_bytes_per_step_plugin"]
                              / scale["target_costs"]["lean_step_ms"] / 1e6)
    scale["matmul_params"] = matmul_params(dec)
    scale["kernel_gflops"] = kernel_gflops(dec.layers[0].fc1.weight, KERNEL_ROWS)
    print(f"[scale] x{factor}: {d} dims, {scale['parameters'] / 1e6:.1f}M parameters, "
          f"{scale['weight_bytes_per_step'] / 1e6:.0f} MB of weights per decoder step; lean "
          f"step {scale['target_costs']['lean_step_ms']:.2f} ms", flush=True)

    for name, beam, bsz, sentences, fairseq_engines in rows(args):
        samples, n = batches(task, sentences, bsz)
        print(f"[scale]   {name}, batch {bsz}, {n} sentences", flush=True)
        generators = {}
        for e in fairseq_engines:
            draft_path, draft_len = draft_of(e, args, bsz)
            generators[e] = build_generator(e, task, target, cfg, drafts.get(draft_path), vocab,
                                            beam, draft_len)
        engines = {e: fairseq_engine(e, g, target, samples, tgt_dict, warm_all=e in ADAPTIVE_OF)
                   for e, g in generators.items()}
        timers = {}  # c as it is inside each speculative run (benchmark.py's), and the splits
        for e in SPECULATIVE_ENGINES:
            if e in generators:
                timers[e], engines[e] = speculation_timers(generators[e], engines[e])
        default_encoders, engines[DEFAULT] = encoder_timer(generators[DEFAULT], engines[DEFAULT])
        if ct2_dir:
            ids = [i for s in samples for i in s["id"].tolist()]
            src = task.source_dictionary
            sources = [src.string(t[t.ne(src.pad()) & t.ne(src.eos())]).split()
                       for s in samples for t in s["net_input"]["src_tokens"]]
            for compute_type in ("float32", "int8"):
                for t in args.ct2_threads:
                    ct2_name = f"CTranslate2 {compute_type}@{t}"
                    engines[ct2_name] = ct2_engine(
                        ct2_name, ct2_dir, compute_type, sources, ids, beam, bsz, t, folder)
        brackets = []  # greedy: the triads just before and after each repeat's block
        figures, outputs = measure(
            list(engines.values()), args.repeats, n, slices=args.slices, brackets=brackets,
            bracket=((lambda: bandwidth(args.stream_mib, args.threads, 3, "benchmark_scale")[0])
                     if beam == 1 else None))
        if ct2_dir:
            from benchmarks import ctranslate2_worker as ct2

            for compute_type in ("float32", "int8"):
                ct2.fold_thread_counts(figures, f"CTranslate2 {compute_type}", args.ct2_threads)
        row = {"setting": name, "beam": beam, "batch_size": bsz, "sentences": n,
               "engines": figures}
        for e, timing in timers.items():
            spec = generators[e]
            figures[e]["split"] = split_figures(timing, figures[e], figures[DEFAULT],
                                                default_encoders, scale["matmul_params"], bsz)
            if e in FIGURES_KEY:
                row[FIGURES_KEY[e]] = speculative_figures(
                    spec, timing, draft_of(e, args, bsz)[1], figures[DEFAULT], figures[e], bsz)
        for e in fairseq_engines:
            figures[e]["process_peak_rss_mib"] = figures[e]["peak_rss_mib"]
            if e in ADAPTIVE_OF:  # the same models and buffers as its fixed-length engine's
                figures[e]["peak_rss_mib"] = figures[ADAPTIVE_OF[e]]["peak_rss_mib"]
            else:
                figures[e]["peak_rss_mib"] = rss_alone(e, path, args, beam, bsz, sentences,
                                                       folder)
        for e in ADAPTIVE_OF:
            if e in generators:
                stats = generators[e].stats
                figures[e]["alpha"] = stats.alpha
                figures[e]["mean_draft_len"] = stats.draft_calls / max(stats.target_calls, 1)
        if beam == 1 and bsz > 1:  # (seconds, triad before, triad after) of each default run
            row["default_runs_triads"] = [(sec, a, b) for sec, (a, b)
                                          in zip(figures[DEFAULT]["seconds"], brackets)]
        if beam == 1 and bsz == 1:
            row["triad_brackets"] = brackets
            triads = [t for pair in brackets for t in pair]
            for e, f in figures.items():
                kind = ("_int8" if "int8" in e else "_plugin" if e.startswith("fairseq_fast")
                        else "")
                f["weight_gbs"] = scale[f"weight_bytes_per_step{kind}"] / f["ms_per_token"] / 1e6
                f["triad_share"] = f["weight_gbs"] / statistics.median(triads)
            d = figures[DEFAULT]  # each run against the triads around it, where they agree
            for key, weights in (("triad_share", "weight_bytes_per_step_plugin"),
                                 ("read_triad_share", "weight_bytes_per_step_read")):
                shares = bracketed_shares(scale[weights], d["tokens"], d["seconds"], brackets)
                d[f"{key}_by_run"] = shares
                if shares:  # (else triad_share stays the other engines' kind: all triads)
                    d[key] = statistics.median(share for share, _ in shares)
        key = (name, bsz)
        if factor == 1:
            reference[key] = outputs[STOCK]
        if key in reference:
            ref = reference[key]
            row["stock_identical_to_x1"] = identical_share(outputs[STOCK], ref)
        scale["rows"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "engines"}), flush=True)

    if args.identical_sentences:
        scale["identical"] = identical_pass(factor, args, task, target, cfg, draft, vocab,
                                            reference)
        print(f"[scale]   {json.dumps(scale['identical'])}", flush=True)
    return scale


def identical_pass(factor, args, task, target, cfg, draft, vocab, reference):
    """--identical-sentences at batch 32: default greedy and beam 5, speculative; shares equal
    to x1's hypotheses and alpha over those sentences."""
    samples, n = batches(task, args.identical_sentences, 32, seed=3)
    result = {"sentences": n}
    for name, beam in (("greedy", 1), ("beam 5", 5)):
        default = build_generator(DEFAULT, task, target, cfg, None, None, beam,
                                  args.draft_len)
        _, hyps = decode_all(default, target, samples, seed=0)
        key = ("identical", name)
        if factor == 1:
            reference[key] = hyps
        if key in reference:
            ref = reference[key]
            result[f"{name} identical to x1"] = identical_share(hyps, ref)
        if beam == 1:
            greedy = hyps
    spec = build_generator(SPECULATIVE, task, target, cfg, draft, vocab, 1,
                           args.draft_len)
    _, hyps = decode_all(spec, target, samples, seed=0)
    result["alpha"] = spec.stats.alpha
    result["speculative identical to default greedy"] = identical_share(hyps, greedy)
    return result


def main():
    import torch

    from benchmarks import ctranslate2_worker as ct2
    import demo
    import fairseq_fast  # noqa: F401  (the plugin's overrides, as --user-dir loads them)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--factors", default="1,2,4")
    ap.add_argument("--sentences", type=int, default=40, help="batch-1 rows")
    ap.add_argument("--batch-sentences", type=int, default=96, help="batch 8 and 32 rows")
    ap.add_argument("--identical-sentences", type=int, default=0,
                    help="also decode this many sentences at batch 32 for 'identical to x1' and "
                         "alpha (0: skip)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slices", type=int, default=4,
                    help="the plugin's and stock's engines take turns on this many slices of "
                         "each run's batches (1: whole runs, one engine after another)")
    ap.add_argument("--draft-len", type=int, default=4)
    ap.add_argument("--big-draft", default=os.path.join(demo.EXAMPLE, "draft_big.pt"),
                    help="a second speculative engine with this draft ('' leaves it out): by "
                         "default the demo target's encoder and first three decoder layers, "
                         "distilled (user_dir_examples/README.md)")
    ap.add_argument("--big-draft-len", type=int, default=5,
                    help="the big draft's length at batch 1")
    ap.add_argument("--big-draft-len-batched", type=int, default=3,
                    help="the big draft's length at batch 8")
    ap.add_argument("--draft-vocab", type=int, default=1536,
                    help="the speculative engine's draft shortlist (0: every token)")
    ap.add_argument("--draft-vocab-counts", default=demo.COUNTS)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--ct2-threads", type=ct2.thread_counts, default=None,
                    help="CTranslate2's intra_threads counts, e.g. 1,2 (default: 1 and "
                         "--threads); each row reports it at its fastest")
    ap.add_argument("--no-ct2", action="store_true", help="leave CTranslate2 out")
    ap.add_argument("--stream-mib", type=int, default=1024,
                    help="size of each of the triad's three arrays")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_scale.json"))
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "scale.png"))
    args = ap.parse_args()
    args.ct2_threads = args.ct2_threads or ct2.thread_counts(f"1,{args.threads}")
    torch.set_grad_enabled(False)
    torch.set_num_threads(args.threads)
    factors = [int(f) for f in args.factors.split(",")]
    os.makedirs(SCALE_WORK, exist_ok=True)
    report = {"threads": args.threads, "ct2_threads": args.ct2_threads,
              "repeats": args.repeats, "draft_len": args.draft_len,
              "big_draft": (os.path.relpath(args.big_draft, ROOT) if args.big_draft else None),
              "big_draft_len": args.big_draft_len,
              "big_draft_len_batched": args.big_draft_len_batched,
              "draft_vocab": args.draft_vocab,
              "bandwidth": {"array_mib": args.stream_mib, "l3_mib": l3_mib(), "triad_gbs": [],
                            "read_gbs": []},
              "scales": []}

    def measure_bandwidth():
        triad, read = bandwidth(args.stream_mib, args.threads, prefix="benchmark_scale")
        report["bandwidth"]["triad_gbs"].append(triad)
        report["bandwidth"]["read_gbs"].append(read)
        print(f"[scale] bandwidth: triad {triad:.1f} GB/s, read {read:.1f} GB/s", flush=True)

    reference = {}
    with tempfile.TemporaryDirectory(prefix="benchmark_scale-") as folder:
        for factor in factors:
            measure_bandwidth()
            report["scales"].append(run_scale(factor, args, folder, reference))
            gc.collect()  # the last scale's models go before the next one loads
        measure_bandwidth()
    write_report(args.json, report)
    plot(report, args.png)
    print_tables(report)
    print_diagnostics(report)


if __name__ == "__main__":
    main()

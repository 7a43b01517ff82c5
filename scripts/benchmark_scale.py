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
theirs can exceed 100%). The lean decoder's own step (benchmark.step_costs: one token at
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
The triads are benchmarks.probes' and CTranslate2 runs in benchmarks.ctranslate2_worker's
processes. Internal mode (not for users): --rss-probe JOB.json.
"""
import argparse
import copy
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
WORK = os.path.join(ROOT, "work", "scale")

from benchmarks.harness import (ROTATE, FunctionEngine, Result, interleave,  # noqa: E402
                                run_module, slice_of, summarize, write_report)
from benchmarks.probes import PeakRSS, bandwidth, l3_mib, peak_rss_mib  # noqa: E402

# benchmark_draft.py imports slice_of from here
__all__ = ["slice_of"]


def _subprocess(args, what):
    """Run this script with `args` in a new process (its --rss-probe mode); its stdout."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *args],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"benchmark_scale: {what} failed:\n{done.stderr[-2000:]}")
    return done.stdout


# -- models -----------------------------------------------------------------------------------
def widened_target(factor, target):
    """Path of the demo target widened `factor` times, made (widen_model.widen_checkpoint) when
    missing or older than the target or widen_model.py."""
    import widen_model

    if factor == 1:
        return target
    path = os.path.join(WORK, f"target_x{factor}.pt")
    newest = max(os.path.getmtime(target), os.path.getmtime(widen_model.__file__))
    if not os.path.exists(path) or os.path.getmtime(path) < newest:
        print(f"[scale] widening {target} x{factor} -> {path}", flush=True)
        for note in widen_model.widen_checkpoint(target, path, factor):
            print(f"[scale]   {note}", flush=True)
    return path


def ct2_model(factor, path):
    out = os.path.join(WORK, f"ct2_x{factor}")
    run_module("benchmarks.ctranslate2_worker", ["--convert", path, out],
               f"CTranslate2 conversion of {path}", "benchmark_scale")
    return out


def per_sentence(name):
    """Whether the decoder parameter `name` runs once per source sentence, not per step: the
    cross-attention's K/V projections."""
    return ".encoder_attn.k_proj." in name or ".encoder_attn.v_proj." in name


def weight_bytes(decoder, kind="float32"):
    """Bytes of decoder weights one batch-1 step reads (see the module docstring), the matrices
    stored as `kind`: "float32"; "int8" (CTranslate2: one byte per weight, a float32 scale per
    row); "plugin" (the plugin's small-matrix kernel, which takes every matrix at one row, packs
    a matrix whose values are all float16 numbers as float16: small_gemm.py)."""
    total = 0
    for name, p in decoder.named_parameters(remove_duplicate=False):
        if name == "embed_tokens.weight" or name.startswith("embed_positions."):
            total += p.size(1) * 4  # one row each
        elif per_sentence(name):
            continue
        elif p.dim() == 2 and kind == "int8":
            total += p.numel() + 4 * p.size(0)
        elif p.dim() == 2 and kind == "plugin":
            total += plugin_bytes(p)
        else:
            total += 4 * p.numel()
    return total


def plugin_bytes(weight):
    """The bytes of a matrix as the plugin's small-matrix kernel stores it: float16 where every
    value is a float16 number (small_gemm.py), else float32."""
    import torch

    from fairseq_fast.kernels import small_gemm

    w = weight.detach()
    half = small_gemm.available() and torch.equal(w.half().float(), w)
    return (2 if half else 4) * w.numel()


def ffn_density(model, task, samples, cfg):
    """The share of nonzero hidden units fc2 reads (relu(fc1(x))) in the decoder's and the
    encoder's layers, over stock greedy decoding of `samples`: what the plugin's fc2 kernel
    reads of its weight rows (csrc/small_gemm.c skips the rows of zero units)."""
    counts = {"decoder": [0, 0], "encoder": [0, 0]}
    hooks = []
    for part in counts:
        for layer in getattr(model, part).layers:
            def hook(module, inputs, output, c=counts[part]):
                c[0] += int(inputs[0].ne(0).sum())
                c[1] += inputs[0].numel()
            hooks.append(layer.fc2.register_forward_hook(hook))
    try:
        generator = build_generator("stock fairseq", task, model, cfg, None, None, 1, None)
        for sample in samples:
            generator.generate([model], sample)
    finally:
        for h in hooks:
            h.remove()
    return {part: nonzero / max(total, 1) for part, (nonzero, total) in counts.items()}


def bytes_read(decoder, packed, density):
    """A batch-1 step's weight bytes as the plugin reads them: its packing's bytes, less the fc2
    weight rows of the hidden units that are zero (`density` of them are not, on average)."""
    skipped = sum(plugin_bytes(layer.fc2.weight) for layer in decoder.layers) * (1 - density)
    return packed - skipped


# -- one row ----------------------------------------------------------------------------------
SPECULATIVE, BIG = "fairseq_fast speculative", "fairseq_fast speculative, big draft"
# the same drafts with --adaptive-draft-len (the window length from measured costs)
SPEC_ADAPTIVE, BIG_ADAPTIVE = SPECULATIVE + ", adaptive", BIG + ", adaptive"
ADAPTIVE_OF = {SPEC_ADAPTIVE: SPECULATIVE, BIG_ADAPTIVE: BIG}
SPECULATIVE_ENGINES = (SPECULATIVE, BIG, *ADAPTIVE_OF)
DEFAULT = "fairseq_fast default"
FAIRSEQ = ["stock fairseq", DEFAULT, SPECULATIVE, SPEC_ADAPTIVE, BIG, BIG_ADAPTIVE,
           "fairseq_fast BiLD"]
ENGINES = FAIRSEQ + ["CTranslate2 float32", "CTranslate2 int8"]
# the JSON key of each speculative engine's figures (alpha, c, bound) in a row
FIGURES_KEY = {SPECULATIVE: "speculative", BIG: "speculative_big"}
KERNEL_ROWS = 64  # the rows at which kernel_gflops measures the arithmetic's rate


def rows(args):
    """(setting, beam, batch size, sentences, fairseq engines) of every row."""
    speculative = [SPECULATIVE, SPEC_ADAPTIVE] + ([BIG, BIG_ADAPTIVE] if args.big_draft else [])
    return [("greedy", 1, 1, args.sentences, FAIRSEQ[:2] + speculative + ["fairseq_fast BiLD"]),
            ("greedy", 1, 8, args.batch_sentences,
             FAIRSEQ[:2] + speculative + ["fairseq_fast BiLD"]),
            ("beam 5", 5, 32, args.batch_sentences, FAIRSEQ[:2])]


def draft_of(engine, args, batch_size):
    """(draft checkpoint, draft length) an engine uses at a batch size, (None, None) for those
    without one. The adaptive engines start at the batch-1 length and go up to twice it."""
    if engine == BIG:
        return args.big_draft, (args.big_draft_len if batch_size == 1
                                else args.big_draft_len_batched)
    if engine == BIG_ADAPTIVE:
        return args.big_draft, args.big_draft_len
    if engine in (SPECULATIVE, SPEC_ADAPTIVE, "fairseq_fast BiLD"):
        return args.draft, args.draft_len
    return None, None


def build_generator(engine, task, target, cfg, draft, vocab, beam, draft_len):
    """The generator of a fairseq engine, at most 200 tokens + </s> as fairseq-generate's
    defaults allow. stock fairseq: fairseq's own SequenceGenerator; default: what the plugin
    builds with no flag; speculative (either draft): the draft proposing draft_len tokens
    (scoring `vocab` only when given); BiLD: the draft as the small model, thresholds at their
    defaults."""
    from omegaconf import open_dict

    from benchmark import stock_generator
    from fairseq_fast.generators.bild import BiLDSequenceGenerator
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    gen_cfg = copy.deepcopy(cfg.generation)
    with open_dict(gen_cfg):
        gen_cfg.beam, gen_cfg.max_len_b = beam, 200
    if engine == "stock fairseq":
        return stock_generator(task, target, gen_cfg)
    if engine == "fairseq_fast default":
        return task.build_generator([target], gen_cfg)
    if engine in SPECULATIVE_ENGINES:
        return SpeculativeSequenceGenerator([target], task.target_dictionary, draft_model=draft,
                                            draft_len=draft_len, draft_vocab=vocab,
                                            adaptive_draft_len=engine in ADAPTIVE_OF)
    assert engine == "fairseq_fast BiLD", engine
    return BiLDSequenceGenerator([target], task.target_dictionary, small_model=draft,
                                 max_len_b=200)


def rss_probe_main(job_path):
    """One fairseq engine alone, as a fairseq-generate run of it would hold it: load the target
    (and the draft, for the engines that use one), build the generator, decode the row's
    longest batch; print the process's peak RSS in MiB."""
    import torch

    import fairseq_fast  # noqa: F401
    from benchmark import batches, decode_all, load_target
    from fairseq_fast.speculative.draft_loading import load_draft
    from fairseq_fast.speculative.draft_vocab import shortlist

    with open(job_path) as f:
        job = json.load(f)
    torch.set_grad_enabled(False)
    torch.set_num_threads(job["threads"])
    target, cfg, task = load_target(job["target"], job["data"])
    draft = vocab = None
    if job["draft"]:
        draft = load_draft(task, job["draft"], target)
    if job["engine"] in SPECULATIVE_ENGINES:
        vocab = shortlist(task.target_dictionary, job["draft_vocab"], job["counts"])
    generator = build_generator(job["engine"], task, target, cfg, draft, vocab, job["beam"],
                                job["draft_len"])
    samples, _ = batches(task, job["sentences"], job["batch_size"])
    decode_all(generator, target, samples[-1:], seed=0)  # sorted by length: the longest
    print(json.dumps(peak_rss_mib()))


def rss_alone(engine, path, args, beam, batch_size, sentences, folder):
    job = os.path.join(folder, "rss-probe.json")
    draft, draft_len = draft_of(engine, args, batch_size)
    with open(job, "w") as f:
        json.dump({"engine": engine, "target": path, "data": args.data, "draft": draft,
                   "draft_vocab": args.draft_vocab, "counts": args.draft_vocab_counts,
                   "draft_len": draft_len, "beam": beam, "batch_size": batch_size,
                   "sentences": sentences, "threads": args.threads}, f)
    out = _subprocess(["--rss-probe", job], f"peak RSS of {engine} alone")
    return json.loads(out.strip().splitlines()[-1])


def fairseq_engine(generator, model, samples, tgt_dict, peak=PeakRSS, warm_all=False):
    """run() -> ({id: target pieces}, seconds, tokens written, peak memory MiB); peak: the
    context manager that measures the run's peak memory into its `mib` (PeakRSS: this
    process's resident set). The warm-up (run(warm_up=True), not timed) decodes the first and
    last batches (first calls pack weights and grow buffers), or with warm_all every batch: an
    adaptive draft length learns its costs in its first rounds, which a long job amortises and
    a timed run of a few dozen sentences would not."""
    import torch

    from benchmark import decode_all

    def run(warm_up=False, part=None):
        if warm_up:
            decode_all(generator, model, samples if warm_all else samples[:1] + samples[-1:],
                       seed=0)
            return None
        batches = samples if part is None else slice_of(samples, *part)
        with peak() as memory:
            seconds, hyps = decode_all(generator, model, batches, seed=0)
        pieces = {i: tgt_dict.string(torch.tensor(h)).split() for i, h in hyps.items()}
        return pieces, seconds, sum(len(h) for h in hyps.values()), memory.mib
    run.sliced = True  # measure() may run it slice by slice (run(part=(i, parts)))
    return run


REGIME_AGREEMENT = 0.15  # the two triads around a run: within this of each other, or left out


def same_level(before, after, agree=REGIME_AGREEMENT):
    """Whether two triads agree within `agree` of the smaller: the machine's bandwidth stayed
    at one level between them."""
    return max(before, after) <= (1 + agree) * min(before, after)


def bracketed_shares(weight_bytes, tokens, seconds, brackets, agree=REGIME_AGREEMENT):
    """[(share, triad)] for each run (seconds, and the (before, after) triads around it) whose
    two triads are at the same level: the weight GB/s it ran at over their mean. A run whose
    triads differ more saw the machine's bandwidth change level and is left out."""
    shares = []
    for s, (before, after) in zip(seconds, brackets):
        if same_level(before, after, agree):
            triad = (before + after) / 2
            shares.append((weight_bytes * tokens / s / 1e9 / triad, triad))
    return shares


def ct2_engine(model_dir, compute_type, sources, ids, beam, batch_size, threads, folder):
    """run() -> ({id: target pieces}, seconds, tokens written, peak RSS MiB), in a process of
    its own"""
    job = os.path.join(folder, f"job-{compute_type}-{beam}-{batch_size}-{threads}.json")
    out = job[:-5] + ".out.json"
    with open(job, "w") as f:
        json.dump({"model_dir": model_dir, "compute_type": compute_type, "sources": sources,
                   "beam": beam, "batch_size": batch_size, "threads": threads, "out": out}, f)

    def run(warm_up=False):
        if warm_up:  # each process warms up on its own
            return None
        run_module("benchmarks.ctranslate2_worker", ["--job", job], f"CTranslate2 {compute_type}",
                   "benchmark_scale")
        with open(out) as f:
            result = json.load(f)
        tokens = sum(len(h) + 1 for h in result["hyps"])  # + </s>, as fairseq counts
        return dict(zip(ids, result["hyps"])), result["seconds"], tokens, result["peak_rss_mib"]
    return run


def ct2_label(report):
    from benchmarks import ctranslate2_worker as ct2

    return ct2.threads_label(report["ct2_threads"])


def measure(engines, repeats, n, slices=1, bracket=None, brackets=None,
            reference="stock fairseq"):
    """benchmarks.harness.interleave over this script's engines, the order rotating between
    repeats. engines: {name: run(warm_up=False, part=None) -> ({id: output}, seconds, tokens
    written, peak memory MiB)}; those with a true `sliced` attribute (fairseq_engine's) take
    run(part=(i, slices)) and go first in each repeat, as one block, taking turns slice by
    slice, so that each one's run of a repeat is spread over the same minutes as the others'
    (a shared machine's bandwidth may switch level for seconds to minutes: whole runs one after
    another can meet different levels); a run's figures are its slices' sums. The others
    (CTranslate2's, each in a process of its own) then run whole. bracket: a function measuring
    the memory bandwidth, called just before and just after each repeat's block, the (before,
    after) pairs appended to `brackets`. An engine's `identical`: the share of sentences whose
    output equals the `reference` engine's. Returns ({engine: figures}, {engine: outputs of its
    last run})."""
    def adapt(name, fn):
        def run(part):
            whole = not getattr(fn, "sliced", False)
            out, seconds, tokens, mib = fn() if whole else fn(part=(part.slice, part.slices))
            return Result(seconds, tokens, out, mib * 2 ** 20)
        return FunctionEngine(name, run, lambda: fn(warm_up=True),
                              getattr(fn, "sliced", False))

    def progress(repeat, name, r):
        print(f"[scale]     {name}: {r.seconds:.2f} s, {r.tokens} tokens, "
              f"{r.peak_rss_bytes / 2 ** 20:.0f} MiB", flush=True)

    timings = interleave([adapt(name, fn) for name, fn in engines.items()], None, repeats,
                         ROTATE, slices, bracket, on_result=progress)
    if brackets is not None:
        brackets.extend(timings.brackets)
    figures = {}
    for e, f in summarize(timings, reference, n).items():
        figures[e] = {"sent_per_s": f.sent_per_s, "seconds": f.runs_s, "tokens": f.tokens,
                      "ms_per_token": 1e3 * f.seconds / f.tokens,
                      "peak_rss_mib": f.peak_rss_bytes / 2 ** 20, "identical": f.identical}
    return figures, {e: rs[-1].outputs for e, rs in timings.runs.items()}


def timed_methods(spec):
    """(object, method) pairs speculation_timers wraps in a speculative generator: drafting,
    the target's passes (its verify passes, and the plain steps of a round that an adaptive
    length of 0 chose), then the encoders (the target's encoder and cross-attention K/V, the
    draft's start: its encoder and K/V)."""
    target = [(spec.target, "forward")]
    if spec.plain is not None:
        target.append((spec.plain, "run"))
    encoders = [(spec.target, "init_state"), (spec.proposer, "start")]
    if spec.encoder is not None:
        encoders.append((spec.encoder, "forward"))
    return [(spec.proposer, "propose")], target, encoders


def speculation_timers(spec, run_spec):
    """Time a speculative generator's draft, verify and encoder calls, and count its draft
    steps, verified positions, the positions that decided and the tokens written, inside its
    timed runs: ((drafting, verifying, encoding, [counts], the draft's encoding), run wrapped
    to count)."""
    from benchmark import CallTimer

    proposing, target, encoders = timed_methods(spec)
    drafting, verifying, encoding = CallTimer(), CallTimer(), CallTimer()
    for timer, methods in ((drafting, proposing), (verifying, target), (encoding, encoders)):
        for obj, name in methods:
            timer.wrap(obj, name)
    draft_encoding = CallTimer().wrap(*encoders[1])  # the draft's part of it (inside it)
    counts = [0, 0, 0, 0]  # draft steps, verified positions, those that decided, tokens

    def totals():
        st = spec.stats
        return (st.draft_calls, st.verified, st.decided, st.committed + st.plain_committed)

    def counted(warm_up=False, **part):
        before = totals()
        result = run_spec(warm_up, **part)
        for i, (a, b) in enumerate(zip(before, totals())):
            counts[i] += b - a
        if warm_up:  # the figures are the timed runs' alone
            for timer in (drafting, verifying, encoding, draft_encoding):
                timer.seconds, timer.calls = 0.0, 0
            counts[:] = [0] * len(counts)
        return result
    counted.sliced = getattr(run_spec, "sliced", False)
    return (drafting, verifying, encoding, counts, draft_encoding), counted


def encoder_timer(generator, run):
    """Time the plugin's default generator's encoders and cross-attention K/V (its ensemble's
    forward_encoder and each decoder backend's init_state) inside its timed runs: (timer, run
    wrapped), or (None, run) where the generator has no lean ensemble."""
    from benchmark import CallTimer
    from fairseq_fast.decoding.ensemble import FastEnsembleModel

    model = getattr(generator, "model", None)
    if not isinstance(model, FastEnsembleModel):
        return None, run
    timer = CallTimer().wrap(model, "forward_encoder")
    for backend in model.backends:
        timer.wrap(backend, "init_state")

    def timed(warm_up=False, **part):
        result = run(warm_up, **part)
        if warm_up:
            timer.seconds, timer.calls = 0.0, 0
        return result
    timed.sliced = getattr(run, "sliced", False)
    return timer, timed


def kernel_gflops(weight, rows, repeats=30):
    """GFLOP/s of the plugin's matmul (packed_linear.py's route for that many rows: the
    small-matrix kernel up to 160) on `weight` at `rows` rows, median of `repeats`: the
    arithmetic a verify pass can reach once its rows are many enough to be bound by it."""
    import torch

    from benchmark import median_time
    from fairseq_fast.kernels.packed_linear import PackedLinear

    linear = PackedLinear()
    x = torch.randn(rows, weight.size(1))
    w = weight.detach().float()
    seconds = median_time(lambda: linear(x, w), repeats)
    return 2 * w.numel() * rows / seconds / 1e9


def matmul_params(decoder):
    """Weights a decoder position multiplies (its matrices less the cross-attention K/V, which
    run once per source sentence, plus the output projection): half its dense flops."""
    total = 0
    for name, p in decoder.named_parameters(remove_duplicate=False):
        if p.dim() == 2 and name.startswith("layers.") and not per_sentence(name):
            total += p.numel()
    projection = getattr(decoder, "output_projection", None)
    if projection is not None:
        total += projection.weight.numel()
    return total


def split_figures(timers, speculative, default, default_encoders, params, batch_size):
    """Where a speculative engine's timed runs went, as shares of their time: the target's
    passes ("verify": its verify passes and any plain steps), drafting, the encoders (both
    models' encoders and cross-attention K/V) and the rest (the loop); positions verified per token written, and the share of them that decided
    something (stats.useful_share); the verify passes' arithmetic rate, dense-equivalent
    (2 x matmul_params flops a position: fc2's skipped zeros counted as done). decode_speedup:
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
    from benchmark import batches, load_target, step_costs
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
        engines = {e: fairseq_engine(g, target, samples, tgt_dict, warm_all=e in ADAPTIVE_OF)
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
                    engines[f"CTranslate2 {compute_type}@{t}"] = ct2_engine(
                        ct2_dir, compute_type, sources, ids, beam, bsz, t, folder)
        brackets = []  # greedy: the triads just before and after each repeat's block
        figures, outputs = measure(
            engines, args.repeats, n, slices=args.slices, brackets=brackets,
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
            for obj, method in sum(timed_methods(spec), []):
                del obj.__dict__[method]  # unwrap
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
            reference[key] = outputs["stock fairseq"]
        if key in reference:
            ref = reference[key]
            row["stock_identical_to_x1"] = (sum(outputs["stock fairseq"][i] == ref[i]
                                                for i in ref) / len(ref))
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
    from benchmark import batches, decode_all

    samples, n = batches(task, args.identical_sentences, 32, seed=3)
    result = {"sentences": n}
    for name, beam in (("greedy", 1), ("beam 5", 5)):
        default = build_generator("fairseq_fast default", task, target, cfg, None, None, beam,
                                  args.draft_len)
        _, hyps = decode_all(default, target, samples, seed=0)
        key = ("identical", name)
        if factor == 1:
            reference[key] = hyps
        if key in reference:
            ref = reference[key]
            result[f"{name} identical to x1"] = sum(hyps[i] == ref[i] for i in ref) / len(ref)
        if beam == 1:
            greedy = hyps
    spec = build_generator("fairseq_fast speculative", task, target, cfg, draft, vocab, 1,
                           args.draft_len)
    _, hyps = decode_all(spec, target, samples, seed=0)
    result["alpha"] = spec.stats.alpha
    result["speculative identical to default greedy"] = (sum(hyps[i] == greedy[i] for i in greedy)
                                                         / len(greedy))
    return result


# -- output -----------------------------------------------------------------------------------


def _lean_step_share(s, best):
    """The lean step's share of the triads measured around it (of the run's best triad in a
    report from before them)"""
    if "lean_step_triads" not in s:
        return f"{100 * s['lean_step_gbs'] / best:.0f}% of triad"
    before, after = s["lean_step_triads"]
    pair = f"{before:.1f}/{after:.1f}"
    if not same_level(before, after):
        return f"the bandwidth changed level around it: triads {pair} GB/s"
    share = 2 * s["lean_step_gbs"] / (before + after)
    return f"{100 * share:.0f}% of the triads around it, {pair} GB/s"


def _default_share(d, row):
    """The default's batch-1 share of the triad at the bytes it reads, and of which runs"""
    by_run = d.get("read_triad_share_by_run")
    if by_run is None:  # a report from before the triads after each run
        return f"{100 * d['read_triad_share']:.0f}% of the triads just before them"
    runs = len(row["triad_brackets"])
    if not by_run:
        return (f"no share: the bandwidth changed level during each of its {runs} runs (the "
                f"triads before and after differ by more than {100 * REGIME_AGREEMENT:.0f}%)")
    each = ", ".join(f"{100 * share:.0f}% of {triad:.1f}" for share, triad in by_run)
    return (f"{100 * d['read_triad_share']:.0f}% of the triads around them, median of the "
            f"{len(by_run)} of {runs} runs whose triads before and after agree: {each} GB/s")


def print_tables(report):
    bw = report["bandwidth"]
    triad = max(bw["triad_gbs"])
    print(f"\nmemory bandwidth: triad {triad:.1f} GB/s, read {max(bw['read_gbs']):.1f} GB/s "
          f"(best of {len(bw['triad_gbs'])} measurements; arrays {bw['array_mib']} MiB, L3 "
          f"{bw['l3_mib']} MiB); torch {report['threads']} threads, CTranslate2 "
          f"{ct2_label(report)}")
    print("\nsummary (batch-1 greedy unless stated; spec: the demo draft, big: the big draft)")
    print("| x | parameters | weight MB/step (plugin's; read) | default ms/step | "
          "default GB/s (% triad; of what it reads) | "
          "spec / default (bound) | spec / default bs 8 | beam 5 bs 32 default / stock | "
          "spec / CTranslate2 int8 | big / default (bound) | big / default bs 8 | "
          "big / CTranslate2 int8 | adaptive / default, bs 1; bs 8 (spec; big) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in report["scales"]:
        rows = {(r["setting"], r["batch_size"]): r for r in s["rows"]}
        g1, g8, b32 = rows.get(("greedy", 1)), rows.get(("greedy", 8)), rows.get(("beam 5", 32))
        d = g1["engines"]["fairseq_fast default"]
        ct2 = g1["engines"].get("CTranslate2 int8")
        spec = g1["engines"]["fairseq_fast speculative"]
        beam = b32["engines"]["fairseq_fast default"]["sent_per_s"] / b32["engines"][
            "stock fairseq"]["sent_per_s"]
        print(f"| {s['factor']} | {s['parameters'] / 1e6:.1f}M | "
              f"{s['weight_bytes_per_step'] / 1e6:.1f} "
              f"({s['weight_bytes_per_step_plugin'] / 1e6:.1f}"
              + (f"; {s['weight_bytes_per_step_read'] / 1e6:.1f}"
                 if "weight_bytes_per_step_read" in s else "")
              + f") | {d['ms_per_token']:.2f} | {d['weight_gbs']:.1f} "
              f"({100 * d.get('triad_share', d['weight_gbs'] / triad):.0f}%"
              + (f"; {100 * d['read_triad_share']:.0f}%" if "read_triad_share" in d else "")
              + ") | "
              f"{g1['speculative']['speedup_vs_default']:.2f}x "
              f"({g1['speculative']['bound']:.2f}x) | "
              f"{g8['speculative']['speedup_vs_default']:.2f}x | "
              f"{beam:.2f}x | "
              + (f"{spec['sent_per_s'] / ct2['sent_per_s']:.2f}x | " if ct2 else "- | ")
              + _big_summary(g1, g8, ct2) + f" {_adaptive_summary(g1, g8)} |")
    for s in report["scales"]:
        print(f"\nx{s['factor']}: {s['embed_dim']} dims, FFN {s['ffn_dim']}, {s['heads']} heads; "
              f"{s['parameters'] / 1e6:.1f}M parameters; decoder weights read per step "
              f"{s['weight_bytes_per_step'] / 1e6:.1f} MB float32 (the plugin's packing "
              f"{s['weight_bytes_per_step_plugin'] / 1e6:.1f} MB, int8 "
              f"{s['weight_bytes_per_step_int8'] / 1e6:.1f} MB); lean step "
              f"{s['target_costs']['lean_step_ms']:.2f} ms = {s['lean_step_gbs']:.1f} GB/s "
              f"({_lean_step_share(s, triad)})"
              + (f"; a read over a buffer of the float32 weights' size runs at "
                 f"{s['read_gbs_at_weights']:.1f} GB/s" if "read_gbs_at_weights" in s else "")
              + (f"; the plugin's matmul on fc1's weight at {KERNEL_ROWS} rows: "
                 f"{s['kernel_gflops']:.0f} GFLOP/s" if "kernel_gflops" in s else ""))
        if "ffn_density" in s:
            g1 = next(r for r in s["rows"] if (r["setting"], r["batch_size"]) == ("greedy", 1))
            d = g1["engines"][DEFAULT]
            read = s["weight_bytes_per_step_read"]
            print(f"fc2 reads the weight rows of nonzero hidden units only: "
                  f"{100 * s['ffn_density']['decoder']:.0f}% of the decoder's were nonzero "
                  f"({100 * s['ffn_density']['encoder']:.0f}% of the encoder's; stock greedy, 8 "
                  f"sentences), so a batch-1 step reads {read / 1e6:.1f} MB; the default's "
                  f"batch-1 runs at that: {read / d['ms_per_token'] / 1e6:.1f} GB/s "
                  f"({_default_share(d, g1)}). GB/s and % of triad below count every weight.")
        print("| setting | batch | engine | sent/s | x stock | x default | identical | "
              "ms/token | weight GB/s | % of triad | peak RSS MiB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for row in s["rows"]:
            eng = row["engines"]
            for e in ENGINES:
                if e not in eng:
                    continue
                f = eng[e]
                gbs = f.get("weight_gbs")
                shown = e + (f" ({f['threads']} thr)" if "threads" in f else "")
                print(f"| {row['setting']} | {row['batch_size']} | {shown} | "
                      f"{f['sent_per_s']:.2f} | "
                      f"{f['sent_per_s'] / eng['stock fairseq']['sent_per_s']:.2f}x | "
                      f"{f['sent_per_s'] / eng['fairseq_fast default']['sent_per_s']:.2f}x | "
                      f"{100 * f['identical']:.0f}% | {f['ms_per_token']:.2f} | "
                      + (f"{gbs:.1f} | {100 * f.get('triad_share', gbs / triad):.0f}% | "
                         if gbs else "- | - | ")
                      + f"{f['peak_rss_mib']:.0f} |")


def print_diagnostics(report):
    """The lines behind the tables, per target size: the triads around the default's runs,
    each speculative engine's bound and where its time goes, the adaptive schedule's lengths,
    and the identical checks."""
    for s in report["scales"]:
        print(f"\nx{s['factor']}:")
        for row in s["rows"]:
            if row.get("triad_brackets"):
                print(f"{row['setting']}, batch {row['batch_size']}: triads before and after the "
                      f"turns of each of the default's runs " + ", ".join(
                          f"{a:.1f}/{b:.1f}" for a, b in row["triad_brackets"])
                      + " GB/s; % of triad: the default's runs against the mean of the two "
                        "around each, where they agree within "
                        f"{100 * REGIME_AGREEMENT:.0f}% (median), the other engines against the "
                        "median of all of them")
            elif row.get("default_runs_triads"):
                print(_default_runs_line(row))
            elif row.get("triad_gbs"):  # a report from before the triads after each run
                print(f"{row['setting']}, batch {row['batch_size']}: triad just before each of "
                      f"the default's runs " + ", ".join(f"{t:.1f}" for t in row["triad_gbs"])
                      + " GB/s; % of triad: each of the default's runs against the triad just "
                        "before it (median), the other engines against those triads' median")
        for row in s["rows"]:
            for e, key in FIGURES_KEY.items():
                sp = row.get(key)
                if not sp:
                    continue
                c_step = f" (c_step {s['c_step']:.3f})" if e == SPECULATIVE else ""
                print(f"{e[len('fairseq_fast '):]}, batch {row['batch_size']}: alpha "
                      f"{sp['alpha']:.3f}, gamma {sp['gamma']}, c {sp['c']:.3f}{c_step}, E "
                      f"{sp['expected_tokens_per_verify']:.2f} tokens/verify, bound "
                      f"{sp['bound']:.2f}x, speculative / default {sp['speedup_vs_default']:.2f}x "
                      f"= {100 * sp['share_of_bound']:.0f}% of the bound")
                if row["batch_size"] == 1 and "verify_ms" in sp:
                    print(f"  a pass: verify {sp['verify_ms']:.2f} ms (the default: "
                          f"{sp['default_ms_per_token']:.2f} ms a token), drafting "
                          f"{sp['draft_ms_per_verify']:.2f} ms, "
                          + (f"the encoders {sp['encoders_ms_per_verify']:.2f} ms, "
                             if "encoders_ms_per_verify" in sp else "")
                          + f"the rest {sp['other_ms_per_verify']:.2f} ms; "
                          f"{sp['tokens_per_target_call']:.2f} tokens a pass (E "
                          f"{sp['expected_tokens_per_verify']:.2f})")
                warning = _level_warning(sp, row["engines"].get(e, {}))
                if warning:
                    print(warning)
                if row["batch_size"] == 1 and "share_of_bound_ceiling" in sp:
                    print(f"  with the loop free and a verify pass costing a default token "
                          f"(the encoders, drafting and tokens a pass as measured): "
                          f"{100 * sp['share_of_bound_ceiling']:.0f}% of the bound")
            eng = row["engines"]
            for e in SPECULATIVE_ENGINES:
                if "split" in eng.get(e, {}):
                    print(_split_line(e, eng[e]["split"], row, s))
            for e, fixed in ADAPTIVE_OF.items():
                if "mean_draft_len" in eng.get(e, {}):
                    f = eng[e]
                    print(f"{e[len('fairseq_fast '):]}, batch {row['batch_size']}: "
                          f"{f['mean_draft_len']:.2f} drafts a pass on average, alpha "
                          f"{f['alpha']:.3f}; / default "
                          f"{f['sent_per_s'] / eng['fairseq_fast default']['sent_per_s']:.2f}x, "
                          f"/ fixed length {f['sent_per_s'] / eng[fixed]['sent_per_s']:.2f}x")
            if "stock_identical_to_x1" in row:
                print(f"stock {row['setting']} batch {row['batch_size']}: identical to x1 "
                      f"{100 * row['stock_identical_to_x1']:.1f}%")
        if "identical" in s:
            print(f"identical pass: {json.dumps(s['identical'])}")


def _level_warning(sp, figures):
    """A line when a batch-1 verify pass (gamma + 1 positions over the same weights) took less
    than the default's decoder step (its ms/token less its encoders' share): possible only when
    the two engines' runs met different bandwidth levels, which flatters the ratio."""
    split = figures.get("split", {})
    if "verify_ms" not in sp or "default_encoder_share" not in split:
        return None
    step = sp["default_ms_per_token"] * (1 - split["default_encoder_share"])
    if sp["verify_ms"] >= step:
        return None
    return (f"  a verify pass took less than the default's decoder step ({sp['verify_ms']:.2f} "
            f"against {step:.2f} ms): the engines' runs met different bandwidth levels, and "
            f"this ratio over the default is flattered")


def _default_runs_line(row):
    """A batched greedy row's default runs, each with the triads around it."""
    return (f"{row['setting']}, batch {row['batch_size']}: the default's runs "
            + ", ".join(f"{sec:.2f} s (triads {a:.1f}/{b:.1f} GB/s)"
                        for sec, a, b in row["default_runs_triads"])
            + "; where a step of these rows is partly bound by memory, its time moves with the "
              "bandwidth level, and every speedup over it at this batch with it")


def _split_line(engine, sp, row, s):
    """One speculative engine's split_figures, as a line."""
    shares = sp["shares"]
    line = (f"{engine[len('fairseq_fast '):]}, batch {row['batch_size']}, its time: verify "
            f"{100 * shares['verify']:.0f}%, drafting {100 * shares['drafting']:.0f}%, the "
            f"encoders {100 * shares['encoders']:.0f}%, the rest {100 * shares['rest']:.0f}%; "
            f"{sp['verified_per_token']:.2f} positions verified a token, "
            f"{100 * sp['useful_share']:.0f}% of them decided; verify "
            f"{sp['verify_gflops']:.0f} GFLOP/s dense-equivalent")
    if "kernel_gflops" in s:
        line += (f" ({100 * sp['verify_gflops'] / s['kernel_gflops']:.0f}% of the matmul's "
                 f"{s['kernel_gflops']:.0f} at {KERNEL_ROWS} rows)")
    if "decode_speedup" in sp:
        bound = row.get(FIGURES_KEY.get(engine, ""), {}).get("bound")
        line += (f"; decoding alone (the target's encoder and K/V, "
                 f"{100 * sp['default_encoder_share']:.0f}% of the default's time, out of "
                 f"both): {sp['decode_speedup']:.2f}x over the "
                 f"default" + (f" = {100 * sp['decode_speedup'] / bound:.0f}% of the bound"
                               if bound else ""))
    if "no_waste_loop_free" in sp:
        line += (f"; with no position wasted and the loop free: "
                 f"{sp['no_waste_loop_free']:.2f}x")
    return line


def _adaptive_summary(g1, g8):
    """'a1; a8 (spec); b1; b8 (big)': the adaptive engines over the default ('-' where not run)"""
    parts = []
    for e, label in ((SPEC_ADAPTIVE, "spec"), (BIG_ADAPTIVE, "big")):
        ratios = ["-" if not r or e not in r["engines"] else
                  f"{r['engines'][e]['sent_per_s'] / r['engines'][DEFAULT]['sent_per_s']:.2f}x"
                  for r in (g1, g8)]
        parts.append(f"{'; '.join(ratios)} ({label})")
    return "; ".join(parts)


def _big_summary(g1, g8, ct2):
    """The big draft's columns of the summary ('-' where it was not run)."""
    if "speculative_big" not in g1:
        return "- | - | - |"
    big = g1["speculative_big"]
    ratio = (g1["engines"][BIG]["sent_per_s"] / ct2["sent_per_s"]) if ct2 else None
    return (f"{big['speedup_vs_default']:.2f}x ({big['bound']:.2f}x) | "
            + (f"{g8['speculative_big']['speedup_vs_default']:.2f}x | "
               if "speculative_big" in g8 else "- | ")
            + (f"{ratio:.2f}x |" if ratio else "- |"))


def plot(report, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = report["scales"]
    triad = max(report["bandwidth"]["triad_gbs"])
    mb = [s["weight_bytes_per_step"] / 1e6 for s in scales]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for e, marker in zip(ENGINES, "os^v<Dx"):
        pts = [(s["weight_bytes_per_step"] / 1e6, r["engines"][e]["ms_per_token"])
               for s in scales for r in s["rows"]
               if (r["setting"], r["batch_size"]) == ("greedy", 1) and e in r["engines"]]
        if pts:
            ax.plot(*zip(*pts), marker=marker, label=f"{e} (ms per token)")
    ax.plot(mb, [s["target_costs"]["lean_step_ms"] for s in scales], color="tab:gray",
            linestyle="-.", marker=".", label="lean decoder step alone")
    ax.plot(mb, [x / triad for x in mb], "k--",
            label=f"float32 weights / triad bandwidth ({triad:.0f} GB/s): the physical limit")
    ax.plot(mb, [s["weight_bytes_per_step_plugin"] / 1e6 / triad for s in scales], "k:",
            label="the same for the weights as the plugin packs them")
    for s, x in zip(scales, mb):
        ax.annotate(f"x{s['factor']}\n{s['parameters'] / 1e6:.0f}M", (x, x / triad),
                    fontsize=8, xytext=(0, -24), textcoords="offset points", ha="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(mb, [f"{x:.0f}" for x in mb])
    ax.minorticks_off()
    ax.set_xlabel("decoder weights read per step (MB, float32)")
    ax.set_ylabel("ms per token, greedy, batch 1")
    n = scales[0]["rows"][0]["sentences"]
    ax.set_title(f"demo target widened x{', x'.join(str(s['factor']) for s in scales)}: step time "
                 f"against model size\n({n} sentences, median of {report['repeats']}, torch "
                 f"{report['threads']} threads, CTranslate2 {ct2_label(report)})", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--rss-probe":
        return rss_probe_main(sys.argv[2])
    import torch

    from benchmarks import ctranslate2_worker as ct2
    import demo
    from benchmark import add_model_args
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
    os.makedirs(WORK, exist_ok=True)
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

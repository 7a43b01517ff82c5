"""The engines the benchmarks time, by name: stock fairseq, the plugin's default generator,
speculative decoding with the demo draft or the big one (fixed and adaptive draft length), BiLD,
and CTranslate2 in a process of its own; how each is built, and `measure`, which runs them side
by side (benchmarks.harness.interleave) and gives each one's figures.

Each engine is a benchmarks.harness Engine (warm_up(); run(Part) -> Result).
"""
import json
import os
import time

from benchmarks.harness import (ROTATE, FunctionEngine, Result, interleave, run_module,
                                slice_of, summarize)
from benchmarks.models import SCALE_WORK, decode_all, stock_generator
from benchmarks.probes import PeakRSS

STOCK = "stock fairseq"
DEFAULT = "fairseq_fast default"
# greedy search as --generator default --inflight-batching runs it: the speculative loop drafting
# nothing (built by build_generator; not one of the scale benchmark's engines)
DEFAULT_INFLIGHT = DEFAULT + ", in flight"
BILD = "fairseq_fast BiLD"
SPECULATIVE, BIG = "fairseq_fast speculative", "fairseq_fast speculative, big draft"
# the same drafts with --adaptive-draft-len (the window length from measured costs)
SPEC_ADAPTIVE, BIG_ADAPTIVE = SPECULATIVE + ", adaptive", BIG + ", adaptive"
ADAPTIVE_OF = {SPEC_ADAPTIVE: SPECULATIVE, BIG_ADAPTIVE: BIG}
SPECULATIVE_ENGINES = (SPECULATIVE, BIG, *ADAPTIVE_OF)
FAIRSEQ = [STOCK, DEFAULT, SPECULATIVE, SPEC_ADAPTIVE, BIG, BIG_ADAPTIVE, BILD]
ENGINES = FAIRSEQ + ["CTranslate2 float32", "CTranslate2 int8"]


def draft_of(engine, args, batch_size):
    """(draft checkpoint, draft length) an engine uses at a batch size, (None, None) for those
    without one, from args' draft, draft_len, big_draft, big_draft_len and
    big_draft_len_batched. The adaptive engines start at the batch-1 length and go up to twice
    it."""
    if engine == BIG:
        return args.big_draft, (args.big_draft_len if batch_size == 1
                                else args.big_draft_len_batched)
    if engine == BIG_ADAPTIVE:
        return args.big_draft, args.big_draft_len
    if engine in (SPECULATIVE, SPEC_ADAPTIVE, BILD):
        return args.draft, args.draft_len
    return None, None


def build_generator(engine, task, target, cfg, draft, vocab, beam, draft_len):
    """The generator of a fairseq engine, at most 200 tokens + </s> as fairseq-generate's
    defaults allow. stock fairseq: fairseq's own SequenceGenerator; default: what the plugin
    builds with no flag; speculative (either draft): the draft proposing draft_len tokens
    (scoring `vocab` only when given); BiLD: the draft as the small model, thresholds at their
    defaults; default, in flight: the speculative loop with no proposer (greedy search)."""
    import copy

    from omegaconf import open_dict

    from fairseq_fast.generators.bild import BiLDSequenceGenerator
    from fairseq_fast.generators.speculative import SpeculativeSequenceGenerator

    gen_cfg = copy.deepcopy(cfg.generation)
    with open_dict(gen_cfg):
        gen_cfg.beam, gen_cfg.max_len_b = beam, 200
    if engine == STOCK:
        return stock_generator(task, target, gen_cfg)
    if engine == DEFAULT:
        return task.build_generator([target], gen_cfg)
    if engine == DEFAULT_INFLIGHT:
        return SpeculativeSequenceGenerator([target], task.target_dictionary, draft_method="none",
                                            max_len_b=200)
    if engine in SPECULATIVE_ENGINES:
        return SpeculativeSequenceGenerator([target], task.target_dictionary, draft_model=draft,
                                            draft_len=draft_len, draft_vocab=vocab,
                                            adaptive_draft_len=engine in ADAPTIVE_OF)
    assert engine == BILD, engine
    return BiLDSequenceGenerator([target], task.target_dictionary, small_model=draft,
                                 max_len_b=200)


def fairseq_engine(name, generator, model, samples, tgt_dict, peak=PeakRSS, warm_all=False):
    """A harness Engine decoding `samples` with a fairseq generator; its Result.outputs are
    {id: target pieces}. It is sliceable: a Part's slice runs that slice of the samples. peak:
    the context manager that measures a run's peak memory into its `mib` (PeakRSS: this
    process's resident set; None: not measured). The warm-up (not timed) decodes the first and
    last batches (first calls pack weights and grow buffers), or with warm_all every batch: an
    adaptive draft length learns its costs in its first rounds, which a long job amortises and
    a timed run of a few dozen sentences would not."""
    import contextlib

    import torch

    def warm_up():
        decode_all(generator, model, samples if warm_all else samples[:1] + samples[-1:], seed=0)

    def run(part):
        with (peak() if peak else contextlib.nullcontext()) as memory:
            seconds, hyps = decode_all(generator, model,
                                       slice_of(samples, part.slice, part.slices), seed=0)
        pieces = {i: tgt_dict.string(torch.tensor(h)).split() for i, h in hyps.items()}
        return Result(seconds, sum(len(h) for h in hyps.values()), pieces,
                      memory.mib * 2 ** 20 if peak else None)
    return FunctionEngine(name, run, warm_up, sliceable=True)


def target_engine(name, generator, model, task, info, batches):
    """A sliceable harness Engine running a generator over `batches` of a target that
    fairseq_fast.draft.target loads (benchmarks.models.target_inputs); Result.outputs are
    {id: tokens}."""
    from fairseq_fast.draft import target as tgt

    def generate(todo):
        start, out = time.perf_counter(), {}
        for batch in todo:
            out.update(tgt.generate(task, generator, model, batch, info))
        return time.perf_counter() - start, out

    def run(part):
        seconds, out = generate(slice_of(batches, part.slice, part.slices))
        return Result(seconds, sum(t.numel() for t in out.values()),
                      {i: t.tolist() for i, t in out.items()})
    return FunctionEngine(name, run, lambda: generate(batches[:1] + batches[-1:]),
                          sliceable=True)


def ct2_model(factor, path):
    """The CTranslate2 float32 conversion of the checkpoint `path` (the target widened
    `factor` times), in work/scale/."""
    out = os.path.join(SCALE_WORK, f"ct2_x{factor}")
    run_module("benchmarks.ctranslate2_worker", ["--convert", path, out],
               f"CTranslate2 conversion of {path}", "benchmark_scale")
    return out


def ct2_engine(name, model_dir, compute_type, sources, ids, beam, batch_size, threads, folder):
    """A harness Engine running CTranslate2 in a process of its own (which warms up on its own),
    whole; Result.outputs are {id: target pieces}, its peak the worker's resident set."""
    job = os.path.join(folder, f"job-{compute_type}-{beam}-{batch_size}-{threads}.json")
    out = job[:-5] + ".out.json"
    with open(job, "w") as f:
        json.dump({"model_dir": model_dir, "compute_type": compute_type, "sources": sources,
                   "beam": beam, "batch_size": batch_size, "threads": threads, "out": out}, f)

    def run(part):
        run_module("benchmarks.ctranslate2_worker", ["--job", job], f"CTranslate2 {compute_type}",
                   "benchmark_scale")
        with open(out) as f:
            result = json.load(f)
        tokens = sum(len(h) + 1 for h in result["hyps"])  # + </s>, as fairseq counts
        return Result(result["seconds"], tokens, dict(zip(ids, result["hyps"])),
                      result["peak_rss_mib"] * 2 ** 20)
    return FunctionEngine(name, run)


def measure(engines, repeats, n, slices=1, bracket=None, brackets=None, reference=STOCK):
    """benchmarks.harness.interleave over these harness Engines, the order rotating between
    repeats, then benchmarks.harness.summarize, as the JSON figures the reports keep. The
    sliceable engines go first in each repeat, as one block, taking turns slice by slice, so
    that each one's run of a repeat is spread over the same minutes as the others' (a shared
    machine's bandwidth may switch level for seconds to minutes: whole runs one after another
    can meet different levels). The others (CTranslate2's, each in a process of its own) then
    run whole. bracket: a function measuring the memory bandwidth, called just before and just
    after each repeat's block, the (before, after) pairs appended to `brackets`. An engine's
    `identical`: the share of sentences whose output equals the `reference` engine's. Returns
    ({engine: figures}, {engine: outputs of its last run})."""
    def mib(b):
        return None if b is None else b / 2 ** 20

    def progress(repeat, name, r):
        memory = "" if r.peak_rss_bytes is None else f", {mib(r.peak_rss_bytes):.0f} MiB"
        print(f"[scale]     {name}: {r.seconds:.2f} s, {r.tokens} tokens{memory}", flush=True)

    timings = interleave(engines, None, repeats, ROTATE, slices, bracket, on_result=progress)
    if brackets is not None:
        brackets.extend(timings.brackets)
    figures = {}
    for e, f in summarize(timings, reference, n).items():
        figures[e] = {"sent_per_s": f.sent_per_s, "seconds": f.runs_s, "tokens": f.tokens,
                      "ms_per_token": 1e3 * f.seconds / f.tokens,
                      "peak_rss_mib": mib(f.peak_rss_bytes), "identical": f.identical}
    return figures, {e: rs[-1].outputs for e, rs in timings.runs.items()}

#!/usr/bin/env python3
"""Model shapes: stock fairseq against the plugin on checkpoints shaped like the models users decode

    python scripts/benchmark_shapes.py [--shapes NAME,...] [--repeats 3] [--tiny]
                                       [--ct2 float32,int8|none] [--ct2-threads N]
                                       [--folder work/shapes] [--json work/benchmark_shapes.json]

For each shape of benchmarks/shapes.py (transformer.wmt19.en-de, bart.large.cnn, M2M-100 418M,
NLLB-200 600M and 1.3B, XGLM 564M: their architectures, dictionary sizes and tasks, with random
weights stored in float16), the first run makes the checkpoint and a test set of random sentences
in --folder. Each of the shape's settings then runs the real `fairseq-generate` (for the language
model, `fairseq-interactive` on its prompts), stock and with `--user-dir fairseq_fast`, each in a
process of its own, taking turns over --repeats (benchmarks.harness.interleave; medians).

CTranslate2 takes turns with them (--ct2): the shape's checkpoint converted once by its own
converter (ct2-fairseq-converter's FairseqConverter), weights stored as float32 and as int8, each
compute type its own process (benchmarks/ctranslate2_worker.py --job) decoding the same sentences
with the setting's beam, length penalty, length limits, n-gram blocker and language tokens; its
time is translate_batch's (generate_batch's for the language model), with no warm-up, as
fairseq's.

Per engine: generation ms per token (fairseq's own count of generation seconds over the tokens it
wrote; for the language model, the new tokens, the prompt's prefill included in the time), x
stock, the share of hypotheses identical to stock's (float32 on CPU), peak resident memory, and
start-up (the process's wall time less generation: imports, loading).

The machine's limits beside them: for batch 1, the decoder weights a step reads (the encoder
attention's keys and values excluded; float32 in stock, float16 as the plugin packs these
checkpoints' weights, CTranslate2's float32 or int8) over ms per token, as a share of the memory
bandwidth (a triad measured before and after each repeat); for batched rows, the decoder's
multiply-adds over generation time, as a share of torch's float32 matmul rate at as many rows
(none for int8, whose arithmetic has a limit of its own). Generation time includes the
encoder and the first batch's one-time work (the plugin packs its weights then), so both shares
are lower bounds of the decoder's own.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

from benchmarks import probes, shapes  # noqa: E402
from benchmarks.harness import (REVERSE, FunctionEngine, Result, interleave,  # noqa: E402
                                micro_time, run_module, summarize, write_report)
from benchmarks.models import plugin_dir  # noqa: E402

STOCK, PLUGIN = "stock fairseq", "fairseq_fast"
# CTranslate2's engines by compute type
CT2 = {"float32": "CTranslate2 float32", "int8": "CTranslate2 int8"}
# bytes a step reads per decoder weight: stock computes in float32; the plugin packs a weight
# whose values are all float16 numbers (every weight of these float16 checkpoints) as float16;
# CTranslate2 reads its float32 or int8 weights (int8's per-row scales left out)
BYTES = {STOCK: 4, PLUGIN: 2, CT2["float32"]: 4, CT2["int8"]: 1}
BIN = os.path.dirname(sys.executable)
GENERATED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in [\d.]+s "
                       r"\(([\d.]+) sentences/s, ([\d.]+) tokens/s\)")
INTERACTIVE = re.compile(r"translation time: ([\d.]+)")


def command(shape, setting, folder, engine, threads):
    """The argument list and environment of one run of `setting` by `engine`."""
    args = [*shapes.generate_options(shape, folder, setting), *setting.flags, "--batch-size",
            str(setting.batch), "--required-batch-size-multiple", "1"]
    if shape.task == shapes.LANGUAGE_MODEL:
        cmd = [os.path.join(BIN, "fairseq-interactive"), *args, "--buffer-size",
               str(setting.batch), "--input", shapes.prompts_path(folder, shape, setting)]
    else:
        cmd = [os.path.join(BIN, "fairseq-generate"), *args]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if engine == STOCK:
        env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # stock fairseq's loader needs it here
    else:
        env.pop("FAIRSEQ_FAST_OFF", None)
        cmd += ["--user-dir", plugin_dir()]
    return cmd, env


def run_once(shape, setting, folder, engine, threads, prompts):
    """One process: Result(seconds=generation seconds, tokens, outputs {id: hypothesis},
    peak_rss_bytes, figures {"wall"})."""
    cmd, env = command(shape, setting, folder, engine, threads)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        code, peak = probes.run_measuring_peak(cmd, env=env, stdout=out, stderr=err)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        out, err = out.read(), err.read()
    if code != 0:
        sys.exit(f"benchmark_shapes: {engine} on {shape.name} ({setting.name}) failed:\n"
                 f"{err[-3000:]}")
    hyps = {}
    for line in out.splitlines():
        if line.startswith("H-"):
            fields = line.split("\t")
            hyps[int(fields[0][2:])] = fields[2] if len(fields) > 2 else ""
    log = out + err
    if shape.task == shapes.LANGUAGE_MODEL:
        found = INTERACTIVE.findall(log)
        if not found:
            sys.exit(f"benchmark_shapes: no translation time in {engine}'s log on {shape.name}")
        seconds = float(found[-1])
        tokens = sum(len(h.split()) - len(prompts[i].split()) for i, h in hyps.items())
    else:
        found = GENERATED.findall(log)
        if not found:
            sys.exit(f"benchmark_shapes: no 'Translated' line in {engine}'s log on {shape.name}")
        tokens, rate = int(found[-1][1].replace(",", "")), float(found[-1][3])
        seconds = tokens / rate
    return Result(seconds, tokens=tokens, outputs=hyps, peak_rss_bytes=peak,
                  figures={"wall": wall})


def ct2_models(shape, folder, kinds):
    """The shape's checkpoint converted by CTranslate2's own converter, once, for each compute
    type in `kinds`, the weights stored as that type: {kind: model folder}."""
    models = {}
    for kind in kinds:
        out = os.path.join(folder, f"ct2-{kind}")
        args = ["--convert", shapes.checkpoint_path(folder), out, "--data", folder, "--langs",
                *shape.langs, "--quantization", kind]
        if shape.task == shapes.MULTILINGUAL:
            args += ["--fixed-dictionary", os.path.join(folder, "dict.txt")]
        run_module("benchmarks.ctranslate2_worker", args,
                   f"CTranslate2's conversion of {shape.name}", "benchmark_shapes")
        models[kind] = out
    return models


def ct2_job(shape, setting, model_dir, kind, threads, lines):
    """A benchmarks.ctranslate2_worker job that decodes `lines` as fairseq-generate's flags of
    `setting` do: the beam, the length penalty, the length limits (fairseq writes at most
    --max-len-b tokens and then </s>; CTranslate2 at most max_decoding_length, </s> included,
    and none at the limit), the n-gram blocker; for the multilingual task the
    language tokens (source: prepended; target: the prefix); for the language model the prompts
    after </s>, fairseq's start of a sentence, and as many new tokens. No warm-up: fairseq's
    runs have none either."""
    src, tgt = shape.langs
    job = {"model_dir": model_dir, "compute_type": kind, "beam": flag_value(setting, "--beam", 5),
           "batch_size": setting.batch, "threads": threads, "warm_up": False}
    if shape.task == shapes.LANGUAGE_MODEL:
        # fairseq's limit is a x (prompt + its </s>) + b tokens in all; with a = 1 that is b + 1
        # new ones
        if flag_value(setting, "--max-len-a", 0.0) != 1:
            raise ValueError("a language model's setting runs with --max-len-a 1")
        job.update(generator=True, sources=[["</s>", *line.split()] for line in lines],
                   options={"max_length": flag_value(setting, "--max-len-b", 200) + 1})
        return job
    prefix = [f"__{src}__"] if shape.task == shapes.MULTILINGUAL else []
    job["sources"] = [prefix + line.split() for line in lines]
    if shape.task == shapes.MULTILINGUAL:
        job["target_prefix"] = [f"__{tgt}__"]
        job["strip"] = [f"__{lang}__" for lang in shape.langs]
    job["options"] = {
        "length_penalty": flag_value(setting, "--lenpen", 1.0),
        "max_decoding_length": flag_value(setting, "--max-len-b", 200),
        "min_decoding_length": flag_value(setting, "--min-len", 1),
        "no_repeat_ngram_size": flag_value(setting, "--no-repeat-ngram-size", 0)}
    return job


def run_ct2(job, path, lines):
    """One CTranslate2 process on `job` (written to `path`): a Result like run_once's, tokens
    counted as fairseq counts them (the target's language token and </s> in, for the language
    model the new tokens), hypotheses as fairseq prints them (the multilingual task strips every
    language token, the language model's hypotheses start with the prompt)."""
    job = dict(job, out=path[:-5] + ".out.json")
    with open(path, "w") as f:
        json.dump(job, f)
    start = time.perf_counter()
    run_module("benchmarks.ctranslate2_worker", ["--job", path],
               f"CTranslate2 {job['compute_type']}", "benchmark_shapes")
    wall = time.perf_counter() - start
    with open(job["out"]) as f:
        done = json.load(f)
    strip = set(job.get("strip", ()))
    if job.get("generator"):
        tokens = sum(len(h) for h in done["hyps"])
        outputs = {i: " ".join([lines[i], *h]) for i, h in enumerate(done["hyps"])}
    else:
        tokens = sum(len(h) + 1 for h in done["hyps"])
        outputs = {i: " ".join(t for t in h if t not in strip)
                   for i, h in enumerate(done["hyps"])}
    return Result(done["seconds"], tokens=tokens, outputs=outputs,
                  peak_rss_bytes=int(done["peak_rss_mib"] * 2 ** 20), figures={"wall": wall})


def ct2_kinds(text):
    """--ct2 "float32,int8" -> ["float32", "int8"]; "none" -> []."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    if kinds == ["none"]:
        return []
    wrong = [k for k in kinds if k not in CT2]
    if wrong or not kinds:
        raise argparse.ArgumentTypeError(f"expected float32, int8 or none, not {text!r}")
    return kinds


def matmul_rate(rows, threads, dim=1024, ffn=4096):
    """torch's float32 matmul rate at `rows` rows, (rows x dim) @ (dim x ffn), in GMAC/s."""
    import torch

    torch.set_num_threads(threads)
    x, w = torch.randn(rows, dim), torch.randn(dim, ffn)
    return rows * dim * ffn / micro_time(lambda: torch.mm(x, w), repeats=30) / 1e9


def repeats_ngram(hypothesis, n):
    """Whether a hypothesis holds some n-gram twice."""
    words = hypothesis.split()
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(set(grams)) < len(grams)


def flag_value(setting, flag, default=None):
    flags = list(setting.flags)
    return type(default)(flags[flags.index(flag) + 1]) if flag in flags else default


def rows_of(setting):
    beam = flag_value(setting, "--beam", 5)
    return beam, beam * setting.batch


def measure(shape, folder, made, args):
    prompts = shapes.sentences(shape, max(s.sentences for s in shape.settings))
    step = shapes.step_parameters(shapes.checkpoint_path(folder))
    models = ct2_models(shape, folder, args.ct2)
    rows = []
    for setting in shape.settings:
        beam, width = rows_of(setting)
        engines = [FunctionEngine(name, (lambda name: lambda part: run_once(
            shape, setting, folder, name, args.threads, prompts))(name), sliceable=True)
            for name in (STOCK, PLUGIN)]
        lines = prompts[:setting.sentences]
        for kind, model_dir in models.items():
            job = ct2_job(shape, setting, model_dir, kind, args.ct2_threads or args.threads,
                          lines)
            path = os.path.join(folder, f"ct2-job-{shape.settings.index(setting)}-{kind}.json")
            engines.append(FunctionEngine(CT2[kind], (lambda job, path: lambda part: run_ct2(
                job, path, lines))(job, path), sliceable=True))
        triads = []

        def bracket():
            triad = probes.bandwidth(args.bandwidth_mib, args.threads,
                                     prefix="benchmark_shapes")[0]
            triads.append(triad)
            return triad

        def progress(r, name, result):
            print(f"[shapes] {shape.name}, {setting.name}, repeat {r}: {name} "
                  f"{result.seconds:.2f} s generation, {result.figures['wall']:.1f} s wall",
                  flush=True)

        timings = interleave(engines, None, args.repeats, REVERSE, warm_up=False,
                             bracket=bracket if setting.batch == 1 else None,
                             on_result=progress)
        figures = summarize(timings, baseline=STOCK)
        gemm = matmul_rate(width, args.threads) if setting.batch > 1 else None
        row = {"setting": setting.name, "batch": setting.batch, "sentences": setting.sentences,
               "beam": beam, "rows": width, "flags": list(setting.flags),
               "triad_gbs": statistics.median(triads) if triads else None,
               "matmul_gmacs": gemm, "engines": {}}
        for name, s in figures.items():
            runs = timings.runs[name]
            ms_token = 1e3 * s.seconds / s.tokens
            if setting.batch == 1:
                limit = step * BYTES[name] / (ms_token / 1e3) / 1e9 / row["triad_gbs"]
            elif name != CT2["int8"]:  # int8 arithmetic has a limit of its own
                limit = beam * step / (ms_token / 1e3) / 1e9 / gemm
            else:
                limit = None
            row["engines"][name] = {
                "generation_s": s.seconds, "runs_s": s.runs_s, "tokens": s.tokens,
                "ms_token": ms_token, "x_stock": s.ratio, "identical": s.identical,
                "peak_rss_mib": s.peak_rss_bytes / 2 ** 20 if s.peak_rss_bytes else None,
                "startup_s": statistics.median(r.figures["wall"] - r.seconds for r in runs),
                "limit_share": limit}
            blocked = flag_value(setting, "--no-repeat-ngram-size", 0)
            if blocked:  # stock's CPU blocker bans nothing (fairseq #5206): no reference
                outputs = runs[-1].outputs
                row["engines"][name]["identical"] = None
                row["engines"][name]["no_repeat_share"] = sum(
                    not repeats_ngram(h, blocked) for h in outputs.values()) / len(outputs)
        rows.append(row)
    return {"name": shape.name, "source": shape.source, "task": shape.task, "arch": shape.arch,
            "symbols": shape.symbols, "options": list(shape.options),
            "parameters": made["parameters"], "step_parameters": step,
            "megabytes": made["megabytes"], "source_tokens": list(shape.source_tokens),
            "rows": rows}


def ct2_names(report):
    """CTranslate2's engines in the report's rows, float32 first."""
    found = {name for shape in report["shapes"] for row in shape["rows"] for name in row["engines"]}
    return [name for name in CT2.values() if name in found]


def _same(engine, n):
    """An engine's agreement with stock on n sentences: identical hypotheses, or for rows with
    --no-repeat-ngram-size the hypotheses that repeat no n-gram."""
    if engine.get("identical") is None:
        return f"{round(engine['no_repeat_share'] * n)}/{n} with no repeated n-gram"
    return f"{round(engine['identical'] * n)}/{n}"


def per_engine(engines, names, fmt):
    """fmt(figures) of each engine in `names`, "a / b"; "-" for one the row lacks."""
    return " / ".join("-" if engines.get(n) is None else fmt(engines[n]) for n in names)


def print_tables(report):
    ct2 = ct2_names(report)
    print(f"Random weights, float16 on disk, float32 on the CPU ({report['threads']} threads); "
          f"the real fairseq-generate (fairseq-interactive for the language model), stock and "
          f"with the plugin, each in its own process, {report['repeats']} repeats alternating, "
          f"medians. Limit: the share of the memory bandwidth (batch 1) or of the matmul rate "
          f"(batched rows) that the generation time implies."
          + (f" x CTranslate2: its ms/token over the plugin's ({', '.join(ct2)}, "
             f"{report.get('ct2_threads', report['threads'])} threads, in the same turns)."
             if ct2 else ""))
    print()
    kinds = " / ".join(name.split()[-1] for name in ct2)
    print("| shape | setting | parameters | stock ms/token | plugin ms/token | x stock | "
          + (f"x CTranslate2 {kinds} | " if ct2 else "")
          + "plugin, % of limit | identical | peak MiB stock / plugin | start-up s stock / "
          "plugin |")
    print("|---|---|---|---|---|---|" + ("---|" if ct2 else "") + "---|---|---|---|")
    for shape in report["shapes"]:
        for row in shape["rows"]:
            st, pl = row["engines"][STOCK], row["engines"][PLUGIN]
            limit = "bandwidth" if row["batch"] == 1 else "matmul"
            n = row["sentences"]
            same = _same(pl, n)
            if pl["identical"] is None:
                same += f" (stock {_same(st, n).split()[0]}, fairseq #5206)"
            versus = per_engine(row["engines"], ct2,
                          lambda e: f"{e['ms_token'] / pl['ms_token']:.2f}x")
            print(f"| {shape['name']} | {row['setting']} | {shape['parameters'] / 1e6:.0f}M | "
                  f"{st['ms_token']:.2f} | {pl['ms_token']:.2f} | **{pl['x_stock']:.2f}x** | "
                  + (f"{versus} | " if ct2 else "")
                  + f"{100 * pl['limit_share']:.0f}% of {limit} | "
                  f"{same} | "
                  f"{st['peak_rss_mib']:,.0f} / {pl['peak_rss_mib']:,.0f} | "
                  f"{st['startup_s']:.1f} / {pl['startup_s']:.1f} |")
    if not ct2:
        return
    print()
    print(f"CTranslate2 in the same runs, converted by its own converter (weights stored as "
          f"{kinds}), decoding the same sentences with fairseq's settings; identical: to stock "
          f"fairseq's float32 hypotheses; start-up: its process's wall time less decoding "
          f"(imports, loading).")
    print()
    print(f"| shape | setting | ms/token {kinds} | x stock | identical | % of limit | "
          f"peak MiB | start-up s |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in report["shapes"]:
        for row in shape["rows"]:
            e, n = row["engines"], row["sentences"]
            limit = per_engine(e, ct2, lambda x: "-" if x["limit_share"] is None
                         else f"{100 * x['limit_share']:.0f}%")
            print(f"| {shape['name']} | {row['setting']} | "
                  f"{per_engine(e, ct2, lambda x: format(x['ms_token'], '.2f'))} | "
                  f"{per_engine(e, ct2, lambda x: format(x['x_stock'], '.2f') + 'x')} | "
                  f"{per_engine(e, ct2, lambda x: _same(x, n))} | {limit} | "
                  f"{per_engine(e, ct2, lambda x: format(x['peak_rss_mib'], ',.0f'))} | "
                  f"{per_engine(e, ct2, lambda x: format(x['startup_s'], '.1f'))} |")


def print_diagnostics(report):
    print("Where each shape comes from, and what the limits were:")
    print()
    for shape in report["shapes"]:
        limits = "; ".join(
            f"{row['setting']}: " + (f"triad {row['triad_gbs']:.1f} GB/s"
                                     if row["triad_gbs"] else
                                     f"matmul {row['matmul_gmacs']:.0f} GMAC/s at "
                                     f"{row['rows']} rows")
            for row in shape["rows"])
        print(f"- **{shape['name']}**: {shape['source']}. `--task {shape['task']} --arch "
              f"{shape['arch']} {' '.join(shape['options'])}`; a step reads "
              f"{shape['step_parameters'] / 1e6:.0f}M parameters; "
              f"{'prompts' if shape['task'] == shapes.LANGUAGE_MODEL else 'sources'} of "
              f"{shape['source_tokens'][0]}-{shape['source_tokens'][1]} words; {limits}.")


def main():
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=",".join(s.name for s in shapes.SHAPES),
                    help="comma-separated shape names (default: all)")
    ap.add_argument("--tiny", action="store_true",
                    help="the same shapes at toy sizes (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs of each engine per setting, taking turns (medians)")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads(),
                    help="OMP_NUM_THREADS of every run (default: torch's thread count here)")
    ap.add_argument("--bandwidth-mib", type=int, default=1024,
                    help="the triad's arrays, MiB each")
    ap.add_argument("--ct2", type=ct2_kinds, default=list(CT2),
                    help="CTranslate2's compute types to run beside them, comma-separated "
                         "(float32, int8), or none (default: both; needs the ctranslate2 "
                         "package)")
    ap.add_argument("--ct2-threads", type=int, default=None,
                    help="CTranslate2's intra_threads (default: --threads)")
    ap.add_argument("--folder", default=os.path.join(ROOT, "work", "shapes"),
                    help="where the checkpoints and test sets are made and kept")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_shapes.json"))
    args = ap.parse_args()
    chosen = []
    for name in args.shapes.split(","):
        shape = shapes.find(name.strip())
        if shape is None:
            sys.exit(f"benchmark_shapes: no shape {name!r}; one of "
                     f"{', '.join(s.name for s in shapes.SHAPES)}")
        chosen.append(shapes.tiny(shape) if args.tiny else shape)
    if args.ct2:
        try:
            import ctranslate2  # noqa: F401
        except ImportError:
            sys.exit("benchmark_shapes: CTranslate2 is not installed (pip install "
                     "ctranslate2==4.8.5), or pass --ct2 none")
    report = {"threads": args.threads, "ct2_threads": args.ct2_threads or args.threads,
              "repeats": args.repeats, "tiny": args.tiny, "shapes": []}
    for shape in chosen:
        folder = os.path.join(args.folder, shape.name)
        made = shapes.make(shape, folder)
        report["shapes"].append(measure(shape, folder, made, args))
        write_report(args.json, report)
    print_tables(report)
    print()
    print_diagnostics(report)


if __name__ == "__main__":
    main()

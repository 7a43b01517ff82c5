#!/usr/bin/env python3
"""Loading a checkpoint: stock fairseq against the plugin, with and without skip_init.

    python scripts/benchmark_load.py [--arch bart_large] [--vocab 50260] [--repeats 5]
                                     [--json work/benchmark_load.json]

A random-weight checkpoint of a fairseq architecture (its registered defaults; task translation
with a joined dictionary of --vocab words), stored in float16 as released checkpoints are, is
made once in --folder. Each run then loads it in a fresh process, as fairseq-generate does
(checkpoint_utils.load_model_ensemble_and_task), and times the call alone (not the imports):

    stock fairseq              no plugin (TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, which stock
                               fairseq needs on this torch)
    plugin, fairseq's init     the plugin loaded, the skip off (FAIRSEQ_FAST_OFF=skip_init, or
                               a command line with --sampling): weights-only loading and the
                               checkpoint checks, then fairseq's random initialisation
    plugin, skip_init          the plugin as fairseq-generate runs it without --sampling
                               (fairseq_fast/init_skip.py)
    hub, skip_init=True        a program with the plugin imported, loading through the hub
                               (fairseq.hub_utils.from_pretrained, which every hub class's
                               from_pretrained calls) with skip_init=True

side by side (benchmarks.harness.interleave, the order rotating between repeats; medians). Per
engine: the load in seconds, x stock, and whether the loaded weights are stock's (a digest of
every tensor of the state dict).

Then the time to a first translation: `fairseq-interactive` on one line of input (greedy, at most
8 tokens: the output of random weights is noise), stock against the plugin (`--user-dir`), the
wall time of the whole process (imports, loading, the kernels' first use, generation), alternated
the same way; and whether the two printed the same hypothesis.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import shapes  # noqa: E402
from benchmarks.harness import (ROTATE, FunctionEngine, Result, interleave,  # noqa: E402
                                summarize, write_report)

STOCK, PLUGIN, SKIP = "stock fairseq", "plugin, fairseq's init", "plugin, skip_init"
HUB = "hub, skip_init=True"
BIN = os.path.dirname(sys.executable)


def make_checkpoint(arch, vocab, folder):
    """The random-weight float16 checkpoint of `arch` in `folder` (made when missing): (its
    path, its parameter count)."""
    path = os.path.join(folder, f"{arch}-{vocab}.pt")
    meta = path + ".json"
    if os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            return path, json.load(f)["parameters"]
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf

    print(f"[load] making a random-weight {arch} checkpoint in {folder}", flush=True)
    os.makedirs(folder, exist_ok=True)
    for side in ("src", "tgt"):
        with open(os.path.join(folder, f"dict.{side}.txt"), "w") as f:
            f.writelines(f"w{i} 1\n" for i in range(vocab))
    args = options.parse_args_and_arch(options.get_training_parser(), [
        folder, "--task", "translation", "--arch", arch, "--source-lang", "src",
        "--target-lang", "tgt", "--share-all-embeddings"])
    cfg = convert_namespace_to_omegaconf(args)
    model = tasks.setup_task(cfg.task).build_model(cfg.model)
    parameters = sum(p.numel() for p in model.parameters())
    shapes.save_float16(model, cfg, path)
    with open(meta, "w") as f:
        json.dump({"parameters": parameters}, f)
    return path, parameters


def worker(engine, path, folder, threads):
    """One load in this process: prints {"seconds", "digest"} as JSON."""
    import hashlib

    import torch

    torch.set_num_threads(threads)
    from fairseq import checkpoint_utils

    if engine != STOCK:
        from fairseq_fast import init_skip

        init_skip._allowed[0] = engine == SKIP  # as fairseq-generate's parse sets it
    start = time.perf_counter()
    if engine == HUB:
        from fairseq import hub_utils

        models = hub_utils.from_pretrained(folder, os.path.basename(path), ".",
                                           skip_init=True)["models"]
    else:
        models, _, _ = checkpoint_utils.load_model_ensemble_and_task(
            [path], arg_overrides={"data": folder})
    seconds = time.perf_counter() - start
    digest = hashlib.sha1()
    for name, value in sorted(models[0].state_dict().items()):
        digest.update(name.encode())
        digest.update(value.detach().contiguous().numpy().tobytes())
    print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))


def environment(name, **extra):
    """The environment of a process that loads as `name` does: stock fairseq needs
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD on this torch; the plugin runs with every override on."""
    env = dict(os.environ, **extra)
    if name == STOCK:
        env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    else:
        env.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
        env.pop("FAIRSEQ_FAST_OFF", None)
    return env


def engine(name, path, folder, threads):
    env = environment(name, PYTHONPATH=ROOT)

    def run(part):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name,
                              "--path", path, "--folder", folder, "--threads", str(threads)],
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            sys.exit(f"benchmark_load: the {name} load failed:\n{out.stderr[-2000:]}")
        got = json.loads(out.stdout.strip().splitlines()[-1])
        return Result(got["seconds"], outputs={0: got["digest"]})

    return FunctionEngine(name, run, lambda: run(None))


def first_translation(name, path, folder):
    """fairseq-interactive on one line, stock or with the plugin: a run's seconds are the
    process's wall time, its output the hypothesis line."""
    cmd = [os.path.join(BIN, "fairseq-interactive"), folder, "--path", path, "--source-lang",
           "src", "--target-lang", "tgt", "--beam", "1", "--max-len-a", "0", "--max-len-b", "8"]
    env = environment(name)
    if name != STOCK:
        cmd += ["--user-dir", os.path.join(ROOT, "fairseq_fast")]

    def run(part):
        start = time.perf_counter()
        out = subprocess.run(cmd, input="w1 w2 w3 w4 w5 w6\n", capture_output=True, text=True,
                             env=env)
        seconds = time.perf_counter() - start
        if out.returncode != 0:
            sys.exit(f"benchmark_load: {name}'s fairseq-interactive failed:\n"
                     f"{out.stderr[-2000:]}")
        hyps = [line.split("\t")[-1] for line in out.stdout.splitlines() if line.startswith("H-")]
        return Result(seconds, outputs={0: hyps[0] if hyps else None})

    return FunctionEngine(f"fairseq-interactive, {name if name == STOCK else 'plugin'}", run,
                          lambda: run(None))


def _summary(timings, baseline):
    return {name: {"seconds": s.seconds, "runs_s": s.runs_s, "ratio": s.ratio,
                   "identical": s.identical}
            for name, s in summarize(timings, baseline=baseline).items()}


def print_tables(report):
    print(f"`{report['arch']}` (fairseq's defaults), {report['parameters'] / 1e6:.0f}M "
          f"parameters, a joined dictionary of {report['vocab']:,} words, float16 on disk "
          f"({report['megabytes']:,.0f} MB); {report['threads']} torch threads; each load in a "
          f"fresh process, the call alone timed.")
    print()
    print("| load | seconds | x stock | weights identical to stock's |")
    print("|---|---|---|---|")
    for name, e in report["engines"].items():
        print(f"| {name} | {e['seconds']:.2f} | {e['ratio']:.2f}x | "
              f"{'yes' if e['identical'] == 1 else 'no'} |")
    if "first_translation" in report:
        print()
        print("To a first translation: one line through fairseq-interactive, greedy, at most 8 "
              "tokens, the process's wall time.")
        print()
        print("| run | seconds | x stock | same hypothesis as stock |")
        print("|---|---|---|---|")
        for name, e in report["first_translation"].items():
            print(f"| {name} | {e['seconds']:.2f} | {e['ratio']:.2f}x | "
                  f"{'yes' if e['identical'] == 1 else 'no'} |")


def main():
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="bart_large", help="a fairseq architecture name")
    ap.add_argument("--vocab", type=int, default=50260, help="words in the joined dictionary")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--folder", default=os.path.join(ROOT, "work", "load"),
                    help="where the checkpoint is made and kept")
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_load.json"))
    ap.add_argument("--worker", choices=(STOCK, PLUGIN, SKIP, HUB), help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.path, args.folder, args.threads)
    path, parameters = make_checkpoint(args.arch, args.vocab, args.folder)
    engines = [engine(name, path, args.folder, args.threads)
               for name in (STOCK, PLUGIN, SKIP, HUB)]
    timings = interleave(engines, None, args.repeats, ROTATE, on_result=lambda r, n, res: print(
        f"[load] repeat {r}: {n} {res.seconds:.2f} s", flush=True))
    report = {"arch": args.arch, "vocab": args.vocab, "parameters": parameters,
              "megabytes": os.path.getsize(path) / 1e6, "threads": args.threads,
              "repeats": args.repeats, "engines": _summary(timings, STOCK)}
    runs = [first_translation(name, path, args.folder) for name in (STOCK, SKIP)]
    timings = interleave(runs, None, args.repeats, ROTATE, on_result=lambda r, n, res: print(
        f"[load] repeat {r}: {n} {res.seconds:.2f} s", flush=True))
    report["first_translation"] = _summary(timings, runs[0].name)
    write_report(args.json, report)
    print_tables(report)


if __name__ == "__main__":
    main()

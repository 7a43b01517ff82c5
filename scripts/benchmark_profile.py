#!/usr/bin/env python3
"""Where the time goes: perf samples of greedy runs on the widened target at batch 1 and 8, split into matmul, attention, other kernels, OpenMP waits, torch, Python, the OS and idle.

    python scripts/benchmark_profile.py [--factor 4] [--batch-sizes 1,8] [--sentences 20]
                                        [--batch-sentences 24] [--repeats 3]
                                        [--engines stock,default,speculative,big]
                                        [--frequency 999] [--threads N]
                                        [--json work/benchmark_profile.json]

The engines are benchmark_scale.py's, built as it builds them (stock fairseq; the plugin's
default generator; speculative with the demo draft, --draft-len 4 and the 1536-token shortlist;
speculative with the big draft, --big-draft-len 5 at batch 1 and --big-draft-len-batched 3 at
larger batches), on the demo target widened --factor times (made in work/scale/ as
benchmark_scale.py makes it). Each batch size is a run of its own: --sentences sentences at batch
1, --batch-sentences at the others. Each engine decodes the shortest and the longest batch once
untimed, then the engines alternate, `repeats` times; in its turn an engine decodes every batch
twice: timed alone (ms/token), then under `perf record` attached to this process and enabled
only while it decodes (perf's control FIFO; "under perf" is that run's ms/token: perf's own
process shares the cores). Every sample is a cpu-clock period of one thread, filed by the
function it caught and that function's library:

    matmul      the GEMM kernels: the plugin's (sg_linear_*, and sg_sparse_linear_* with the
                listing of its input's nonzeros) and torch's (MKL, oneDNN, cpublas), and code
                generated at run time, which perf files under anonymous memory (perf-<pid>.map):
                torch's own operators are compiled ahead of time, so in these runs that is
                oneDNN's GEMM code, where the plugin sends linears of more than 160 rows (an
                encoder at batch 8)
    attention   the plugin's attention kernels (fa_*, the scores and weighted sums); stock's
                attention runs as torch ops, and is matmul and torch here
    kernels     the plugin's other C: layer norms, the greedy draft's steps, n-gram blocking
    omp wait    OpenMP's barriers and spinning (libgomp): a thread of a parallel region waiting
                for the others to arrive, or for the next region while Python runs
    torch       torch's operators and dispatch, and libc (allocation, copies)
    python      the interpreter
    os          the kernel (system calls, page faults, timers)
    idle        threads x wall minus the on-CPU total: capacity the process left unused

Shares are of threads x wall (--threads, torch's thread count: the capacity the engines run
on), summed over the repeats. With memory-bound matmuls a thread's wait is not all lost time:
the other thread then has the memory bandwidth to itself. The main thread and the others are
also given apart. Needs perf (Debian: linux-perf) allowed to profile this process
(kernel.perf_event_paranoid <= 2); without it, the JSON says why and nothing is measured, and a
perf that fails while it records ends the run with one line and exit status 1.
"""
import argparse
import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)
from benchmarks.engines import (BIG, DEFAULT, SPECULATIVE, STOCK, build_generator,  # noqa: E402
                                draft_of)
from benchmarks.harness import (ROTATE, FunctionEngine, Result, interleave,  # noqa: E402
                                median_figure, summarize, write_report)

CATEGORIES = ["matmul", "attention", "kernels", "omp wait", "torch", "python", "os", "idle"]
# the plugin's C kernels (kernels-<hash>.so): matmul and attention functions by name
_PLUGIN_MATMUL = re.compile(r"^sg_(linear|sparse_linear|nonzero)")
_PLUGIN_ATTENTION = re.compile(r"^(fa_|scores_|weighted_sum_|attend)")
# torch's GEMMs: MKL, oneDNN (dnnl, brgemm, jit gemm kernels), cpublas, sgemm
_TORCH_MATMUL = re.compile(r"gemm|mkl_blas|dnnl|jit_avx|cpublas", re.IGNORECASE)
# code generated at run time (oneDNN's kernels): perf names its library after the map file a JIT
# may write, perf-<pid>.map, or after the anonymous mapping itself
_GENERATED = re.compile(r"(^|/)perf-\d+\.map$|^//anon|^\[anon")


def category(symbol: str, library: str) -> str:
    """The category (CATEGORIES, idle aside) of a sample caught in `symbol` of `library`."""
    name = os.path.basename(library)
    if name.startswith("kernels-"):
        if _PLUGIN_MATMUL.match(symbol):
            return "matmul"
        if _PLUGIN_ATTENTION.match(symbol):
            return "attention"
        return "kernels"
    if "libgomp" in name or "libiomp" in name:
        return "omp wait"
    if library.startswith("[kernel") or library == "[vdso]":
        return "os"
    if _GENERATED.search(library):
        return "matmul"
    if _TORCH_MATMUL.search(symbol) or "libmkl" in name or "libdnnl" in name:
        return "matmul"
    if "python" in name and "torch" not in name:
        return "python"
    return "torch"


_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def parse(script_text: str):
    """`perf script -F tid,period,ip,sym,dso` output -> {tid: {category: seconds}} (cpu-clock
    periods are nanoseconds)."""
    threads = {}
    for line in script_text.splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        tid, period, symbol, library = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        into = threads.setdefault(tid, dict.fromkeys(CATEGORIES[:-1], 0.0))
        into[category(symbol, library)] += period * 1e-9
    return threads


def split(threads, main_tid: int, wall: float, capacity: int):
    """Per-thread seconds ({tid: {category: s}}) and wall seconds -> the split as shares of
    capacity x wall ({category: share}, idle included), and the main thread's and the other
    threads' own splits as shares of wall."""
    total = dict.fromkeys(CATEGORIES, 0.0)
    main, others = dict.fromkeys(CATEGORIES[:-1], 0.0), dict.fromkeys(CATEGORIES[:-1], 0.0)
    for tid, seconds in threads.items():
        for cat, s in seconds.items():
            total[cat] += s
            (main if tid == main_tid else others)[cat] += s
    total["idle"] = max(capacity * wall - sum(total.values()), 0.0)
    cap = capacity * wall
    return ({k: v / cap for k, v in total.items()}, {k: v / wall for k, v in main.items()},
            {k: v / wall for k, v in others.items()})


def perf_problem():
    """None when perf runs here (it counts a command's cpu-clock), else one line saying why
    not. Attaching to this process can still be refused: PerfRecording then raises PerfError."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf not found (Debian: apt install linux-perf)"
    try:
        done = subprocess.run([perf, "stat", "-e", "cpu-clock", "true"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"perf does not run: {e}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return "perf cannot profile here: " + (lines[0] if lines else f"exit {done.returncode}")
    return None


class PerfError(RuntimeError):
    """perf failed while recording (it had passed perf_problem's check)."""


class PerfRecording:
    """`perf record` of this process, started disabled; `with recording.enabled():` samples
    only inside the block. Then `.threads()` parses the samples ({tid: {category: s}})."""

    def __init__(self, folder: str, frequency: int):
        self.data = os.path.join(folder, "perf.data")
        ctl, ack = os.path.join(folder, "ctl"), os.path.join(folder, "ack")
        for fifo in (ctl, ack):
            os.mkfifo(fifo)
        # read-write opens of a FIFO do not wait for the other end (perf's)
        self._ctl, self._ack = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
        self.process = subprocess.Popen(
            ["perf", "record", "-q", "-F", str(frequency), "-D", "-1", "--control",
             f"fifo:{ctl},{ack}", "-p", str(os.getpid()), "-o", self.data],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def _command(self, word: str, timeout: float = 60.0):
        """Send perf a control word and wait for its ack (perf 5.10+)."""
        os.write(self._ctl, (word + "\n").encode())
        answer, deadline = b"", time.monotonic() + timeout
        while b"\n" not in answer:  # perf may follow it with a NUL
            if self.process.poll() is not None:
                err = self.process.stderr.read().strip().splitlines()
                raise PerfError("perf record exited: "
                                + (err[0] if err else f"code {self.process.returncode}"))
            if time.monotonic() > deadline:
                raise PerfError(f"perf did not answer {word!r} in {timeout:.0f} s")
            if select.select([self._ack], [], [], 0.2)[0]:
                answer += os.read(self._ack, 64)
        if answer.strip(b"\x00\n ") != b"ack":
            raise PerfError(f"perf answered {word!r} with {answer!r}")

    @contextlib.contextmanager
    def enabled(self):
        self._command("enable")
        try:
            yield
        finally:
            self._command("disable")

    def threads(self):
        """Stop perf; the samples by thread and category."""
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=300)
        os.close(self._ctl)
        os.close(self._ack)
        if self.process.returncode not in (0, -signal.SIGINT):
            raise PerfError(f"perf record failed: {err.strip()[:300]}")
        done = subprocess.run(["perf", "script", "-i", self.data, "-F", "tid,period,ip,sym,dso"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise PerfError(f"perf script failed: {done.stderr.strip()[:300]}")
        return parse(done.stdout)


# -- the run ----------------------------------------------------------------------------------
# the engines by a short name: benchmark_scale.py's greedy ones with a fixed draft length
ENGINES = {"stock": STOCK, "default": DEFAULT, "speculative": SPECULATIVE, "big": BIG}


def profile(args):
    from benchmarks.models import SCALE_WORK, load_target, widened_target

    os.makedirs(SCALE_WORK, exist_ok=True)
    path = widened_target(args.factor, args.target)
    target, cfg, task = load_target(path, args.data)
    dec = target.decoder
    return {"factor": args.factor, "repeats": args.repeats, "threads": args.threads,
            "frequency": args.frequency, "embed_dim": dec.embed_tokens.weight.size(1),
            "parameters": sum(p.numel() for p in target.parameters()),
            "runs": [profile_batch(args, target, cfg, task, b) for b in args.batch_sizes],
            "perf": None}


def profile_batch(args, target, cfg, task, batch_size):
    """One batch size's engines, alternating, each timed alone and then under perf."""
    from benchmarks.models import batches, decode_all
    from fairseq_fast.speculative.draft_loading import load_draft
    from fairseq_fast.speculative.draft_vocab import shortlist

    vocab = shortlist(task.target_dictionary, args.draft_vocab, args.draft_vocab_counts)
    samples, n = batches(task, args.sentences if batch_size == 1 else args.batch_sentences,
                         batch_size)
    generators = {}
    for key in args.engines:
        draft, draft_len = draft_of(ENGINES[key], args, batch_size)
        generators[key] = build_generator(
            ENGINES[key], task, target, cfg, load_draft(task, draft, target) if draft else None,
            vocab, 1, draft_len)
    main_tid = threading.get_native_id()
    threads = {key: [] for key in generators}  # each run's {thread: {category: seconds}}

    def engine(key):
        generator = generators[key]

        def warm_up():  # first calls pack weights and grow buffers
            decode_all(generator, target, samples[:1] + samples[-1:], seed=0)

        def run(part):
            seconds, _ = decode_all(generator, target, samples, seed=0)
            with tempfile.TemporaryDirectory(prefix="benchmark_profile-") as folder:
                recording = PerfRecording(folder, args.frequency)
                with recording.enabled():
                    profiled, hyps = decode_all(generator, target, samples, seed=0)
                threads[key].append(recording.threads())
            return Result(seconds, sum(len(h) for h in hyps.values()),
                          figures={"under_perf": profiled})
        return FunctionEngine(key, run, warm_up)

    def progress(repeat, key, r):
        print(f"[profile] batch {batch_size}, {ENGINES[key]}: {r.seconds:.2f} s, under perf "
              f"{r.figures['under_perf']:.2f} s, {r.tokens} tokens", flush=True)

    timings = interleave([engine(key) for key in generators], None, args.repeats, ROTATE,
                         on_result=progress)
    figures = summarize(timings)
    engines = {}
    for key, done in timings.runs.items():
        under_perf = [r.figures["under_perf"] for r in done]
        merged = {}
        for seen in threads[key]:
            for tid, seconds in seen.items():
                into = merged.setdefault(tid, dict.fromkeys(CATEGORIES[:-1], 0.0))
                for cat, s in seconds.items():
                    into[cat] += s
        shares, main, others = split(merged, main_tid, sum(under_perf), args.threads)
        tokens = figures[key].tokens
        engines[ENGINES[key]] = {
            "seconds": figures[key].runs_s, "seconds_under_perf": under_perf,
            "tokens": tokens, "ms_per_token": 1e3 * figures[key].seconds / tokens,
            "ms_per_token_under_perf": 1e3 * median_figure(done, "under_perf") / tokens,
            "split": shares, "main_thread": main, "other_threads": others,
            "threads_seen": len(merged)}
    return {"batch_size": batch_size, "sentences": n, "engines": engines}


def print_tables(report):
    if report.get("perf"):
        print(f"no profile: {report['perf']}")
        return
    # a report written before batch sizes were runs of their own: one run, at batch 1
    runs = report.get("runs") or [{"batch_size": 1, "sentences": report["sentences"],
                                   "engines": report["engines"]}]
    print(f"x{report['factor']} ({report['embed_dim']} dims, "
          f"{report['parameters'] / 1e6:.1f}M parameters), greedy, {report['repeats']} runs, "
          f"{report['threads']} threads, perf at {report['frequency']} Hz; shares of threads x "
          "wall")
    for run in runs:
        print()
        print(f"batch {run['batch_size']}, {run['sentences']} sentences")
        print()
        print("| engine | ms/token | under perf | " + " | ".join(CATEGORIES) + " |")
        print("|---|---|---|" + "---|" * len(CATEGORIES))
        for name, e in run["engines"].items():
            print(f"| {name} | {e['ms_per_token']:.2f} | {e['ms_per_token_under_perf']:.2f} | "
                  + " | ".join(f"{100 * e['split'][c]:.1f}%" for c in CATEGORIES) + " |")
    print()
    print("the main thread's time and the other threads' together, as shares of wall (the main "
          "thread runs Python; the others only the parallel regions)")
    print()
    print("| batch | engine | thread | " + " | ".join(CATEGORIES[:-1]) + " |")
    print("|---|---|---|" + "---|" * (len(CATEGORIES) - 1))
    for run in runs:
        for name, e in run["engines"].items():
            for which in ("main_thread", "other_threads"):
                print(f"| {run['batch_size']} | {name} | {which.replace('_', ' ')} | "
                      + " | ".join(f"{100 * e[which][c]:.1f}%" for c in CATEGORIES[:-1])
                      + " |")


def main():
    import torch

    import demo
    from benchmarks.models import add_model_args
    import fairseq_fast  # noqa: F401  (the plugin's overrides, as --user-dir loads them)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_model_args(ap)
    ap.add_argument("--factor", type=int, default=4, help="the target's widening factor")
    ap.add_argument("--batch-sizes", default="1,8",
                    help="comma-separated batch sizes, each profiled in a run of its own")
    ap.add_argument("--sentences", type=int, default=20, help="sentences at batch 1")
    ap.add_argument("--batch-sentences", type=int, default=24,
                    help="sentences at the larger batch sizes")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default="stock,default,speculative,big",
                    help="comma-separated, of: " + ", ".join(ENGINES))
    ap.add_argument("--draft-len", type=int, default=4)
    ap.add_argument("--big-draft", default=os.path.join(demo.EXAMPLE, "draft_big.pt"))
    ap.add_argument("--big-draft-len", type=int, default=5)
    ap.add_argument("--big-draft-len-batched", type=int, default=3,
                    help="the big draft's length at batch sizes above 1")
    ap.add_argument("--draft-vocab", type=int, default=1536)
    ap.add_argument("--draft-vocab-counts", default=demo.COUNTS)
    ap.add_argument("--frequency", type=int, default=999, help="perf's samples per second")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--json", default=os.path.join(ROOT, "work", "benchmark_profile.json"))
    args = ap.parse_args()
    args.engines = args.engines.split(",")
    try:
        args.batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    except ValueError:
        ap.error(f"--batch-sizes takes comma-separated integers, not {args.batch_sizes!r}")
    if any(b < 1 for b in args.batch_sizes):
        ap.error("--batch-sizes must be at least 1")
    unknown = [e for e in args.engines if e not in ENGINES]
    if unknown:
        ap.error(f"unknown engine {unknown[0]!r} (choose from {', '.join(ENGINES)})")
    torch.set_grad_enabled(False)
    torch.set_num_threads(args.threads)
    problem = perf_problem()
    if problem:
        print(f"[profile] {problem}: nothing measured", flush=True)
        report = {"perf": problem}
    else:
        try:
            report = profile(args)
        except PerfError as e:
            sys.exit(f"benchmark_profile: {e}")
    write_report(args.json, report)
    print_tables(report)


if __name__ == "__main__":
    main()

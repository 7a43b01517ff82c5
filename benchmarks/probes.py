"""What the machine gives: memory bandwidth (a STREAM-like triad and a plain read), the L3 size,
a process's peak resident set, and the environment a benchmark's figures depend on (CPU, ISA,
cores, GPU, versions, commit, date).

    python -m benchmarks.probes bandwidth [--mib 1024] [--threads N] [--repeats 5]
    python -m benchmarks.probes rss

print one JSON line: [triad GB/s, read GB/s], best of --repeats, over float32 arrays of --mib
MiB each with torch's --threads; or this process's peak RSS in bytes. bandwidth() runs the
first in a process of its own: freeing gigabytes slows the next allocations of the process that
held them.
"""
import argparse
import datetime
import importlib
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from importlib import metadata

from benchmarks import ROOT
from benchmarks.harness import run_module


# -- memory bandwidth --------------------------------------------------------------------------
def stream(mib, threads, repeats):
    """(triad GB/s, read GB/s) in this process, best of `repeats`: a = b + 3 c over float32
    arrays of `mib` MiB each (3 arrays moved, as STREAM counts them), and sum(b) (1 array
    read)."""
    import torch

    torch.set_num_threads(threads)
    n = mib * 2 ** 20 // 4
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    torch.add(b, c, alpha=3.0, out=a)  # touch every page first
    triad = read = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.add(b, c, alpha=3.0, out=a)
        triad = min(triad, time.perf_counter() - t0)
        t0 = time.perf_counter()
        b.sum()
        read = min(read, time.perf_counter() - t0)
    return 3 * n * 4 / triad / 1e9, n * 4 / read / 1e9


def bandwidth(mib, threads, repeats=5, prefix="benchmarks"):
    """stream() in a process of its own: (triad GB/s, read GB/s)."""
    out = run_module("benchmarks.probes", ["bandwidth", "--mib", mib, "--threads", threads,
                                           "--repeats", repeats],
                     "bandwidth measurement", prefix)
    return tuple(json.loads(out.strip().splitlines()[-1]))


def l3_mib():
    """The L3 cache's size in MiB as sysfs gives it for CPU 0; None where it does not."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as f:
            size = f.read().strip()
        return int(size[:-1]) / 1024 if size.endswith("K") else int(size) / 2 ** 20
    except (OSError, ValueError):
        return None


# -- peak resident set -------------------------------------------------------------------------
def parse_vm_hwm(status):
    """The VmHWM line of a /proc/PID/status text, in bytes; None without one."""
    m = re.search(r"^VmHWM:\s+(\d+)\s*kB", status, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def peak_rss_bytes():
    """This process's peak resident set in bytes: VmHWM, which (unlike ru_maxrss) does not carry
    a parent's size over fork + exec; ru_maxrss (kilobytes on Linux) where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            found = parse_vm_hwm(f.read())
    except OSError:
        found = None
    if found is None:
        found = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return found


def peak_rss_mib():
    """peak_rss_bytes() in MiB."""
    return peak_rss_bytes() / 2 ** 20


class PeakRSS:
    """Peak resident set of this process during a `with` block, in `bytes` and `mib`: the
    kernel's high-water mark is reset on entry (/proc/self/clear_refs, Linux >= 4.0). Where that
    is not allowed, the process's peak so far is reported and `reset` is False."""

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.reset = True
        except OSError:
            self.reset = False
        return self

    def __exit__(self, *exc):
        self.bytes = peak_rss_bytes()
        self.mib = self.bytes / 2 ** 20
        return False


# A launcher that needs only the standard library: it starts the command, waits for it and writes
# the command's ru_maxrss to a file. ru_maxrss carries the spawning process's own high-water mark
# over fork (or vfork) + exec, so the command is spawned from this small process rather than from
# a benchmark that has held a model.
_LAUNCHER = ("import os, subprocess, sys\n"
             "proc = subprocess.Popen(sys.argv[2:])\n"
             "_, status, usage = os.wait4(proc.pid, 0)\n"
             "with open(sys.argv[1], 'w') as f:\n"
             "    f.write(str(usage.ru_maxrss))\n"
             "sys.exit(os.waitstatus_to_exitcode(status))\n")


def run_measuring_peak(cmd, env=None, stdout=None, stderr=None):
    """Run `cmd` to its end: (exit code, its peak resident set in bytes, or None where it could
    not be read). The figure is the command's own (with its children's), not raised to this
    process's size (see _LAUNCHER)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "maxrss")
        code = subprocess.call([sys.executable, "-S", "-c", _LAUNCHER, out, *cmd], env=env,
                               stdout=stdout, stderr=stderr)
        try:
            with open(out) as f:
                return code, int(f.read()) * 1024  # kilobytes on Linux
        except (OSError, ValueError):
            return code, None


# -- the environment the figures come from ---------------------------------------------------
def _cpu():
    """(model name, ISA the kernels compile for, physical cores, logical CPUs usable here)."""
    model, flags, cores, physical = None, "", set(), None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = (part.strip() for part in line.partition(":"))
                if key == "model name" and model is None:
                    model = value
                elif key == "flags" and not flags:
                    flags = value
                elif key == "physical id":
                    physical = value
                elif key == "core id":
                    cores.add((physical, value))
    except OSError:
        pass
    words = flags.split()
    isa = ("AVX-512" if "avx512f" in words else "AVX2" if "avx2" in words
           else "no AVX2" if words else "unknown")
    logical = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count())
    return model or platform.processor() or platform.machine(), isa, len(cores) or None, logical


def _version(*dists):
    """The first of `dists` installed, by its metadata or else (a package on the path with no
    metadata, e.g. fairseq run from its source) its module's __version__."""
    for dist in dists:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    for dist in dists:
        try:
            return importlib.import_module(dist.replace("-", "_")).__version__
        except (ImportError, AttributeError):
            continue
    return "not installed"


def _commit():
    """`git rev-parse --short HEAD`, + "-dirty" when tracked files differ from it."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")  # read only: no index refresh
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, env=env, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def _gpu():
    """The CUDA GPU torch sees, or None."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


def environment():
    """What the figures depend on, taken when a benchmark starts (NAME.env.json in --out)."""
    model, isa, cores, logical = _cpu()
    return {"cpu": model, "isa": isa, "physical_cores": cores, "logical_cpus": logical,
            "gpu": _gpu(), "python": platform.python_version(), "torch": _version("torch"),
            "fairseq": _version("fairseq-fixed", "fairseq"),
            "ctranslate2": _version("ctranslate2"), "commit": _commit(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.probes",
                                 description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="probe", required=True)
    bw = sub.add_parser("bandwidth", help="triad and read GB/s, best of --repeats")
    bw.add_argument("--mib", type=int, default=1024, help="size of each array")
    bw.add_argument("--threads", type=int, default=None, help="torch's threads (default: its)")
    bw.add_argument("--repeats", type=int, default=5)
    sub.add_parser("rss", help="this process's peak resident set, bytes")
    args = ap.parse_args(argv)
    if args.probe == "bandwidth":
        import torch

        threads = args.threads or torch.get_num_threads()
        print(json.dumps(list(stream(args.mib, threads, args.repeats))))
    else:
        print(json.dumps(peak_rss_bytes()))


if __name__ == "__main__":
    main()

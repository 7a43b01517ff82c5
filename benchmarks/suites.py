"""The benchmark suite that `scripts/report.py` runs: one declaration per benchmark.

A `Suite` names its script, the arguments of a full and of a `--quick` run, the plot it draws,
what it needs of the machine and where docs/benchmarks.md shows it: among what users get, or in
the appendix of diagnostics. Running lives in scripts/report.py, rendering in
benchmarks/render.py.
"""
import os
from dataclasses import dataclass
from typing import Optional, Tuple

from benchmarks import ROOT

SCRIPTS = os.path.join(ROOT, "scripts")

USERS = "users"           # docs/benchmarks.md's body: what a user gets
APPENDIX = "appendix"     # its appendix: where the time goes, what each part adds


@dataclass(frozen=True)
class Suite:
    name: str                          # its JSON is NAME.json, its section "## NAME: ..."
    script: str                        # in scripts/
    full: Tuple[str, ...]              # the arguments of a full run
    quick: Tuple[str, ...]             # those of a --quick (smoke) run
    plot: Optional[Tuple[str, str]] = None   # (file, caption) it draws with --png FILE
    ct2_threads: bool = False          # takes --ct2-threads
    gpu: bool = False                  # needs a CUDA GPU; its last run's figures are kept
    part: str = USERS                  # USERS or APPENDIX

    def command(self, python, out, quick, ct2_threads=None):
        """The argument list that runs this benchmark, its JSON (and plot) going into `out`."""
        args = [python, os.path.join(SCRIPTS, self.script), *(self.quick if quick else self.full),
                "--json", os.path.join(out, f"{self.name}.json")]
        if self.plot:
            args += ["--png", os.path.join(out, self.plot[0])]
        if self.ct2_threads and ct2_threads:
            args += ["--ct2-threads", str(ct2_threads)]
        return args


# where the figures of a benchmark that needs a GPU are kept between runs
KEPT = os.path.join(ROOT, "docs", "gpu")


def _s(*args):
    return tuple(str(a) for a in args)


SUITES = (
    Suite("shapes", "benchmark_shapes.py", (),
          _s("--tiny", "--repeats", 1, "--bandwidth-mib", 256, "--folder",
             os.path.join(ROOT, "work", "shapes-tiny"))),
    Suite("engines", "benchmark_engines.py", _s("--sentences", 60),
          _s("--sentences", 24, "--repeats", 1), ct2_threads=True),
    Suite("speculative", "benchmark.py", _s("--sentences", 60),
          _s("--sentences", 24, "--repeats", 1)),
    Suite("bild", "benchmark_bild.py", _s("--bleu-sentences", 120, "--speed-sentences", 60),
          _s("--bleu-sentences", 40, "--speed-sentences", 12, "--repeats", 1),
          plot=("bild_sweep.png", "BiLD sweep: BLEU delta against speedup")),
    Suite("defaults", "benchmark_defaults.py", _s("--sentences", 128),
          _s("--sentences", 32, "--repeats", 1)),
    Suite("linear", "benchmark_linear.py", _s("--sentences", 40),
          _s("--sentences", 12, "--repeats", 2), part=APPENDIX),
    Suite("pipeline", "benchmark_pipeline.py", _s("--sentences", 200),
          _s("--sentences", 64, "--repeats", 1)),
    Suite("latency", "benchmark_latency.py", _s("--sentences", 300),
          _s("--sentences", 40, "--repeats", 1), ct2_threads=True),
    Suite("scale", "benchmark_scale.py",
          _s("--factors", "1,2,4", "--sentences", 20, "--batch-sentences", 64,
             "--identical-sentences", 48),
          _s("--sentences", 3, "--batch-sentences", 16, "--identical-sentences", 16,
             "--repeats", 1),
          plot=("scale.png", "step time against model size"), ct2_threads=True),
    Suite("hub", "benchmark_hub.py", _s("--sentences", 20),
          _s("--sentences", 4, "--repeats", 1, "--factors", 1)),
    Suite("load", "benchmark_load.py", _s("--repeats", 5),
          _s("--arch", "transformer", "--vocab", 1000, "--repeats", 1, "--folder",
             os.path.join(ROOT, "work", "load-quick"))),
    Suite("profile", "benchmark_profile.py", _s("--sentences", 20, "--batch-sentences", 24),
          _s("--sentences", 3, "--batch-sentences", 8, "--repeats", 1), part=APPENDIX),
    Suite("distributed", "benchmark_distributed.py", _s("--sentences", 400),
          _s("--sentences", 64, "--repeats", 1)),
    Suite("compile", "benchmark_compile.py", _s("--repeats", 7),
          _s("--models", "demo", "--rows", 1, "--repeats", 1, "--steps", 2), part=APPENDIX),
    Suite("gpu", "benchmark_gpu.py", _s("--sentences", 30, "--batch-sentences", 160),
          _s("--factors", 1, "--sentences", 6, "--batch-sentences", 32, "--repeats", 1),
          gpu=True),
    Suite("draft", "benchmark_draft.py", _s("--sentences", 30, "--batch-sentences", 48),
          _s("--made", os.path.join(ROOT, "work", "draft-quick", "draft.pt"), "--hours", 0.05,
             "--factors", 1, "--sentences", 8, "--batch-sentences", 16, "--repeats", 1)),
    Suite("draftlm", "benchmark_draft.py",
          _s("--part", "lm", "--sentences", 30, "--batch-sentences", 48),
          _s("--part", "lm", "--lm-folder", os.path.join(ROOT, "work", "draft-quick-lm"),
             "--lm-train-hours", 0.05, "--hours", 0.05, "--sentences", 8,
             "--batch-sentences", 16, "--repeats", 1)),
    Suite("inflight", "benchmark_inflight.py", _s("--sentences", 96),
          _s("--factors", 1, "--batch-sizes", 8, "--sentences", 16, "--min-batches", 1,
             "--repeats", 1)),
    Suite("draftfree", "benchmark_draft_free.py",
          _s("--sentences", 20, "--batch-sentences", 48, "--long-sentences", 8,
             "--sweep-sentences", 10, "--copy-hours", 0.5, "--copy-draft-hours", 0),
          _s("--factors", 1, "--copy-factors", 1, "--sentences", 6, "--batch-sentences", 16,
             "--long-sentences", 3, "--sweep-sentences", 3, "--repeats", 1, "--slices", 1)),
)

# the benchmarks whose full runs docs/benchmarks.md's summary is made from
HEADLINE_NEEDS = ("engines", "speculative", "bild", "defaults", "latency")


def names(suites=SUITES):
    return [suite.name for suite in suites]


def find(name, suites=SUITES):
    """The suite called `name`, or None."""
    return next((suite for suite in suites if suite.name == name), None)

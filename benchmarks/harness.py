"""Engines side by side: run them in turns over several repeats, then summarise.

A benchmark declares its matrix as engines (anything with `name`, `warm_up()` and
`run(part) -> Result`) and the work they share (`parts`: the batches, the sentences, or None),
then

    timings = interleave(engines, parts, repeats=3, order=ROTATE)
    figures = summarize(timings, baseline="stock fairseq", sentences=n)

`interleave` decides who runs when (the order policy, slices, a probe around each repeat);
`summarize` gives each engine's medians, its ratio to the baseline engine and the share of its
outputs identical to the baseline's.
"""
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Sequence, runtime_checkable

from benchmarks import ROOT

# -- what an engine is -----------------------------------------------------------------------


@dataclass
class Part:
    """What one call of Engine.run covers: `items`, the share of the benchmark's parts this call
    runs (all of them, or slice `slice` of `slices`; None when the benchmark has no parts), in
    repeat `repeat` (0-based; an engine may seed its random draws with it)."""
    items: Optional[Sequence]
    repeat: int = 0
    slice: int = 0
    slices: int = 1


@dataclass
class Result:
    """One timed run: wall seconds, tokens written, outputs ({sentence id: hypothesis} or a list
    in sentence order; None where not compared), the peak resident set in bytes where measured,
    and `figures`, anything else the engine measured ({name: number}; slices add up)."""
    seconds: float
    tokens: int = 0
    outputs: Any = None
    peak_rss_bytes: Optional[int] = None
    figures: dict = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """One way of doing the benchmark's work. An engine whose `sliceable` attribute is true can
    run any contiguous slice of the parts (see interleave)."""
    name: str

    def warm_up(self) -> None:
        """Untimed work before the first repeat: first calls, packed weights, grown buffers."""

    def run(self, part: Part) -> Result:
        """Do the work of `part`, timed."""


class FunctionEngine:
    """An Engine from functions: run(part) -> Result, and an optional warm_up()."""

    def __init__(self, name: str, run: Callable[[Part], Result],
                 warm_up: Optional[Callable[[], None]] = None, sliceable: bool = False):
        self.name, self._run, self._warm_up, self.sliceable = name, run, warm_up, sliceable

    def warm_up(self):
        if self._warm_up is not None:
            self._warm_up()

    def run(self, part):
        return self._run(part)


def combine(results: Sequence[Result]) -> Result:
    """One run's Result from its slices': seconds, tokens and figures added, outputs merged
    (dicts by id, lists concatenated), the highest peak RSS."""
    outputs = None
    for r in results:
        if r.outputs is None:
            continue
        if outputs is None:
            outputs = {} if isinstance(r.outputs, Mapping) else []
        if isinstance(outputs, dict):
            outputs.update(r.outputs)
        else:
            outputs.extend(r.outputs)
    peaks = [r.peak_rss_bytes for r in results if r.peak_rss_bytes is not None]
    figures = {}
    for r in results:
        for k, v in r.figures.items():
            figures[k] = figures.get(k, 0) + v
    return Result(seconds=sum(r.seconds for r in results),
                  tokens=sum(r.tokens for r in results), outputs=outputs,
                  peak_rss_bytes=max(peaks) if peaks else None, figures=figures)


# -- who runs when -----------------------------------------------------------------------------
FIXED = "fixed"              # A B C in every repeat
REVERSE = "reverse"          # A B C, then C B A in odd repeats (two engines: AB BA AB ...)
ROTATE = "rotate"            # repeat r starts at engine r mod n: ABC BCA CAB
ROTATE_REST = "rotate-rest"  # the first engine always first, the others rotating: ABCD ACDB ADBC
ORDERS = (FIXED, REVERSE, ROTATE, ROTATE_REST)


def order_of(names: Sequence[str], repeat: int, order: str = ROTATE) -> list:
    """The engines' order in repeat `repeat` (0-based) under the policy `order`."""
    names = list(names)
    if order == FIXED:
        return names
    if order == REVERSE:
        return names if repeat % 2 == 0 else names[::-1]
    if order == ROTATE:
        k = repeat % len(names) if names else 0
        return names[k:] + names[:k]
    if order == ROTATE_REST:
        return names[:1] + order_of(names[1:], repeat, ROTATE)
    raise ValueError(f"unknown order {order!r}; one of {', '.join(ORDERS)}")


def slice_of(items: Sequence, i: int, parts: int) -> Sequence:
    """The i-th of `parts` contiguous slices of `items`, as even as they divide."""
    return items[len(items) * i // parts: len(items) * (i + 1) // parts]


@dataclass
class Timings:
    """What interleave measured: runs, {engine: [Result of each repeat]}; brackets, the
    bracket's (before, after) values around each repeat's block (empty without a bracket)."""
    runs: dict
    brackets: list = field(default_factory=list)


def interleave(engines: Sequence[Engine], parts: Optional[Sequence] = None, repeats: int = 3,
               order: str = ROTATE, slices: int = 1,
               bracket: Optional[Callable[[], Any]] = None, warm_up: bool = True,
               on_result: Optional[Callable[[int, str, Result], None]] = None) -> Timings:
    """Warm every engine up (unless warm_up is false), then run each once per repeat, in the
    order `order` gives for that repeat.

    Within a repeat the sliceable engines go first, as one block: with slices > 1 they take
    turns slice by slice (slice 0 of every block engine, then slice 1, ...), so that each one's
    run is spread over the same minutes as the others'; a run is its slices' Results combined.
    The other engines then run whole (Part(parts)), in the same order. bracket: a probe (e.g.
    the memory bandwidth) called just before and just after each repeat's block; its values go
    to Timings.brackets. on_result(repeat, name, result) is called for each run as it is
    recorded (a progress line)."""
    names = [e.name for e in engines]
    if len(set(names)) != len(names):
        raise ValueError(f"engine names repeat: {names}")
    if slices < 1:
        raise ValueError(f"slices must be at least 1, not {slices}")
    by_name = {e.name: e for e in engines}
    if warm_up:
        for e in engines:
            e.warm_up()
    timings = Timings({name: [] for name in names})
    for r in range(repeats):
        ordered = order_of(names, r, order)
        block = [n for n in ordered if getattr(by_name[n], "sliceable", False)]
        pieces = {n: [] for n in block}
        before = bracket() if bracket else None
        for i in range(slices):
            for n in block:
                items = None if parts is None else slice_of(parts, i, slices)
                pieces[n].append(by_name[n].run(Part(items, r, i, slices)))
        if bracket:
            timings.brackets.append((before, bracket()))
        for n in ordered:
            result = combine(pieces[n]) if n in pieces else by_name[n].run(Part(parts, r))
            timings.runs[n].append(result)
            if on_result:
                on_result(r, n, result)
    return timings


# -- what it gives -----------------------------------------------------------------------------
@dataclass
class Summary:
    """One engine's figures over its runs. seconds: the median run; runs_s: every run's;
    sent_per_s: sentences / seconds (None without a sentence count); tokens: the last run's,
    tokens_per_s = tokens / seconds; ratio: the baseline's seconds / these (above 1: faster
    than the baseline); identical: the share of the baseline's outputs that this engine's equal,
    both from their last runs (None where either has none); peak_rss_bytes: the highest run's."""
    seconds: float
    runs_s: list
    sent_per_s: Optional[float]
    tokens: int
    tokens_per_s: Optional[float]
    ratio: Optional[float]
    identical: Optional[float]
    peak_rss_bytes: Optional[int]


def _by_id(outputs):
    return outputs if isinstance(outputs, Mapping) else dict(enumerate(outputs))


def identical_share(outputs, reference) -> Optional[float]:
    """The share of `reference`'s outputs (by sentence id, or position for lists) that
    `outputs` has equal; None when either is None or the reference is empty."""
    if outputs is None or reference is None or len(reference) == 0:
        return None
    outputs, reference = _by_id(outputs), _by_id(reference)
    return sum(outputs.get(i) == reference[i] for i in reference) / len(reference)


def summarize(timings, baseline: Optional[str] = None,
              sentences: Optional[int] = None) -> dict:
    """{engine: Summary} from interleave's Timings (or its runs, {engine: [Result]}), in the
    engines' order. baseline: the engine the ratios and identical shares are against."""
    runs = timings.runs if isinstance(timings, Timings) else timings
    medians = {name: statistics.median(r.seconds for r in rs) for name, rs in runs.items()}
    base = runs[baseline][-1].outputs if baseline is not None else None
    out = {}
    for name, rs in runs.items():
        seconds, tokens = medians[name], rs[-1].tokens
        peaks = [r.peak_rss_bytes for r in rs if r.peak_rss_bytes is not None]
        out[name] = Summary(
            seconds=seconds, runs_s=[r.seconds for r in rs],
            sent_per_s=None if sentences is None else sentences / seconds,
            tokens=tokens, tokens_per_s=tokens / seconds if tokens else None,
            ratio=None if baseline is None else medians[baseline] / seconds,
            identical=None if baseline is None else identical_share(rs[-1].outputs, base),
            peak_rss_bytes=max(peaks) if peaks else None)
    return out


def median_figure(results: Sequence[Result], key: str) -> float:
    """The median over runs of one of the engines' own figures (Result.figures[key])."""
    return statistics.median(r.figures[key] for r in results)


# -- small measurements ------------------------------------------------------------------------
def micro_time(fn: Callable[[], Any], repeats: int = 50) -> float:
    """Median seconds of one call of fn, over `repeats` calls after an untimed one, with
    torch.utils.benchmark.Timer at torch's current thread count and on the host's clock (the
    caller synchronises a device where it means to)."""
    import torch
    from torch.utils.benchmark import Timer

    fn()
    timer = Timer(stmt="fn()", globals={"fn": fn}, timer=time.perf_counter,
                  num_threads=torch.get_num_threads())
    return statistics.median(timer.timeit(number=1).median for _ in range(repeats))


def run_module(module: str, args: Sequence[str], what: str, prefix: str = "benchmarks"):
    """Run `python -m module args...` from the repository's root (so that `benchmarks` imports)
    and return its stdout; on failure exit with `what` and the end of its stderr."""
    done = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{prefix}: {what} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def write_report(path: str, report: dict) -> None:
    """A benchmark's JSON report at `path` (its folder made where missing)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)

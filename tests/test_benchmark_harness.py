"""benchmarks/: the order engines run in, slices, the bracket, the summaries, the RSS probe.

No models and no timing: the engines here record what they were asked to run and return the
seconds and outputs they are given.
"""
import statistics
import subprocess
import sys

import pytest

from benchmarks import ROOT, probes
from benchmarks.harness import (FIXED, REVERSE, ROTATE, ROTATE_REST, Engine, FunctionEngine,
                                Part, Result, Timings, combine, identical_share, interleave,
                                order_of, slice_of, summarize)


class Recorder:
    """An engine that logs (name, repeat, slice, items) for each run into a shared list."""

    def __init__(self, name, log, sliceable=False, seconds=1.0, outputs=None):
        self.name, self.log, self.sliceable = name, log, sliceable
        self.seconds, self.outputs = seconds, outputs
        self.warmed = 0

    def warm_up(self):
        self.warmed += 1
        self.log.append((self.name, "warm-up"))

    def run(self, part):
        self.log.append((self.name, part.repeat, part.slice,
                         None if part.items is None else list(part.items)))
        outputs = None if part.items is None else {i: f"{self.name}{i}" for i in part.items}
        return Result(self.seconds, len(part.items or ()), self.outputs or outputs)


def runs_of(log):
    """The engine names of the logged runs, warm-ups left out, as one string per repeat."""
    repeats = {}
    for entry in log:
        if entry[1] != "warm-up":
            repeats.setdefault(entry[1], []).append(entry[0])
    return [" ".join(names) for _, names in sorted(repeats.items())]


# -- order ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("order, want", [
    (FIXED, ["A B C", "A B C", "A B C", "A B C"]),
    (REVERSE, ["A B C", "C B A", "A B C", "C B A"]),
    (ROTATE, ["A B C", "B C A", "C A B", "A B C"]),
    (ROTATE_REST, ["A B C", "A C B", "A B C", "A C B"]),
])
def test_each_order_policy_gives_its_sequence(order, want):
    log = []
    engines = [Recorder(name, log) for name in "ABC"]
    interleave(engines, None, repeats=4, order=order, warm_up=False)
    assert runs_of(log) == want
    assert [" ".join(order_of("ABC", r, order)) for r in range(4)] == want


def test_rotate_rest_keeps_the_first_engine_first_with_four():
    assert ["".join(order_of("SABC", r, ROTATE_REST)) for r in range(4)] == [
        "SABC", "SBCA", "SCAB", "SABC"]


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown order"):
        order_of(["A"], 0, "random")


def test_warm_up_comes_first_once_per_engine_and_can_be_skipped():
    log = []
    engines = [Recorder(name, log) for name in "AB"]
    interleave(engines, None, repeats=2)
    assert log[:2] == [("A", "warm-up"), ("B", "warm-up")]
    assert [e.warmed for e in engines] == [1, 1]
    interleave(engines, None, repeats=1, warm_up=False)
    assert [e.warmed for e in engines] == [1, 1]


def test_engine_names_must_differ():
    with pytest.raises(ValueError, match="repeat"):
        interleave([Recorder("A", []), Recorder("A", [])], None, repeats=1)


# -- slices --------------------------------------------------------------------------------------
def test_slice_of_cuts_contiguous_even_slices_covering_everything():
    items = list(range(7))
    cut = [slice_of(items, i, 3) for i in range(3)]
    assert cut == [[0, 1], [2, 3], [4, 5, 6]]
    assert slice_of(items, 0, 1) == items


def test_sliceable_engines_take_turns_slice_by_slice_then_the_others_run_whole():
    log = []
    engines = [Recorder("ct2", log), Recorder("A", log, sliceable=True),
               Recorder("B", log, sliceable=True)]
    timings = interleave(engines, list(range(4)), repeats=2, order=ROTATE, slices=2,
                         warm_up=False)
    assert [e for e in log] == [
        # repeat 0, order ct2 A B: the block A B, slice by slice, then ct2 whole
        ("A", 0, 0, [0, 1]), ("B", 0, 0, [0, 1]), ("A", 0, 1, [2, 3]), ("B", 0, 1, [2, 3]),
        ("ct2", 0, 0, [0, 1, 2, 3]),
        # repeat 1, order A B ct2
        ("A", 1, 0, [0, 1]), ("B", 1, 0, [0, 1]), ("A", 1, 1, [2, 3]), ("B", 1, 1, [2, 3]),
        ("ct2", 1, 0, [0, 1, 2, 3])]
    # a run is its slices combined: seconds and tokens added, outputs merged
    a = timings.runs["A"][0]
    assert (a.seconds, a.tokens) == (2.0, 4)
    assert a.outputs == {0: "A0", 1: "A1", 2: "A2", 3: "A3"}
    assert len(timings.runs["ct2"]) == 2 and timings.runs["ct2"][0].seconds == 1.0


def test_the_bracket_is_measured_around_each_repeats_block():
    log = []
    values = iter(range(100))

    def bracket():
        log.append(("bracket",))
        return next(values)

    engines = [Recorder("A", log, sliceable=True), Recorder("ct2", log)]
    timings = interleave(engines, [0, 1], repeats=2, order=FIXED, slices=2, bracket=bracket,
                         warm_up=False)
    assert [e[0] for e in log] == ["bracket", "A", "A", "bracket", "ct2"] * 2
    assert timings.brackets == [(0, 1), (2, 3)]
    assert interleave(engines, [0], repeats=1, warm_up=False).brackets == []


def test_combine_keeps_the_highest_peak_and_adds_figures():
    r = combine([Result(1.0, 2, [1], 10, {"calls": 1}), Result(2.0, 3, [2], 30, {"calls": 2}),
                 Result(0.5, 0, None, None)])
    assert (r.seconds, r.tokens, r.outputs, r.peak_rss_bytes, r.figures) == (
        3.5, 5, [1, 2], 30, {"calls": 3})


def test_on_result_sees_every_run_in_order_and_function_engines_are_engines():
    seen = []
    engine = FunctionEngine("f", lambda part: Result(float(part.repeat)))
    assert isinstance(engine, Engine) and isinstance(Recorder("r", []), Engine)
    interleave([engine], None, repeats=3, on_result=lambda r, n, res: seen.append((r, n,
                                                                                 res.seconds)))
    assert seen == [(0, "f", 0.0), (1, "f", 1.0), (2, "f", 2.0)]


# -- summaries -----------------------------------------------------------------------------------
def timings_of(seconds, outputs, tokens=None):
    """Timings with the given {engine: [seconds per run]} and {engine: last run's outputs}."""
    runs = {}
    for name, ss in seconds.items():
        runs[name] = [Result(s, (tokens or {}).get(name, 0), None) for s in ss]
        runs[name][-1].outputs = outputs.get(name)
    return Timings(runs)


def test_summarize_gives_medians_rates_and_ratios_against_the_baseline():
    # medians 4.0 and 2.0; means would be 5.0 and 2.0; the slowest run last, first, middle
    t = timings_of({"stock": [3.0, 4.0, 8.0], "fast": [1.0, 9.0, 2.0, 2.0, 0.5]},
                   {"stock": {0: "a"}, "fast": {0: "a"}}, tokens={"stock": 40, "fast": 44})
    f = summarize(t, baseline="stock", sentences=10)
    assert list(f) == ["stock", "fast"]
    assert f["stock"].seconds == 4.0 and f["fast"].seconds == 2.0
    assert f["fast"].runs_s == [1.0, 9.0, 2.0, 2.0, 0.5]
    assert f["stock"].sent_per_s == 2.5 and f["fast"].sent_per_s == 5.0
    assert f["stock"].ratio == 1.0 and f["fast"].ratio == 2.0  # baseline / engine: faster > 1
    assert f["fast"].tokens == 44 and f["fast"].tokens_per_s == 22.0
    assert f["fast"].seconds == statistics.median([1.0, 9.0, 2.0, 2.0, 0.5])


def test_the_identical_share_counts_the_baselines_sentences_in_the_last_run():
    outputs = {"stock": {0: [4, 5], 1: [6], 2: [7, 8], 3: [9]},
               "fast": {0: [4, 5], 1: [6], 2: [7, 9], 3: [9], 4: [1]},  # one differs, one extra
               "partial": {0: [4, 5]}}                                  # three missing
    t = timings_of({"stock": [1.0], "fast": [1.0], "partial": [1.0]}, outputs)
    f = summarize(t, baseline="stock")
    assert f["stock"].identical == 1.0
    assert f["fast"].identical == 0.75
    assert f["partial"].identical == 0.25
    assert f["fast"].sent_per_s is None  # no sentence count given

    # only the last run's outputs count: an earlier run that matched changes nothing
    runs = {"stock": [Result(1.0, 0, ["x", "y"])],
            "fast": [Result(1.0, 0, ["x", "y"]), Result(1.0, 0, ["x", "z"])]}
    assert summarize(runs, baseline="stock")["fast"].identical == 0.5


def test_identical_share_takes_lists_by_position_and_none_without_outputs():
    assert identical_share(["a", "b", "c"], ["a", "x", "c"]) == pytest.approx(2 / 3)
    assert identical_share(None, ["a"]) is None and identical_share(["a"], None) is None
    f = summarize(timings_of({"stock": [1.0], "fast": [2.0]}, {}), baseline="stock")
    assert f["fast"].identical is None and f["fast"].ratio == 0.5


def test_summarize_without_a_baseline_has_no_ratio_and_keeps_the_highest_peak():
    runs = {"a": [Result(1.0, peak_rss_bytes=5), Result(3.0, peak_rss_bytes=7),
                  Result(2.0, peak_rss_bytes=6)]}
    f = summarize(runs)["a"]
    assert f.ratio is None and f.identical is None and f.peak_rss_bytes == 7 and f.seconds == 2.0


# -- probes --------------------------------------------------------------------------------------
def test_vm_hwm_is_read_in_bytes():
    status = "Name:\tpython\nVmPeak:\t  900 kB\nVmHWM:\t  1234 kB\nVmRSS:\t  1000 kB\n"
    assert probes.parse_vm_hwm(status) == 1234 * 1024
    assert probes.parse_vm_hwm("Name:\tpython\n") is None


def test_peak_rss_is_this_processes_and_grows_with_what_it_holds():
    before = probes.peak_rss_bytes()
    assert before > 1 << 20
    with probes.PeakRSS() as peak:
        block = bytearray(64 << 20)  # touched: zero-filled pages are written
        block[::4096] = b"\1" * len(block[::4096])
    assert peak.bytes >= 64 << 20 and peak.mib == peak.bytes / 2 ** 20
    assert probes.peak_rss_bytes() >= peak.bytes - (1 << 20)
    del block


def test_the_rss_probe_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "benchmarks.probes", "rss"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 1 << 20


def test_part_defaults_to_the_whole_of_one_repeat():
    assert Part([1, 2]) == Part([1, 2], repeat=0, slice=0, slices=1)


def test_no_benchmark_script_imports_another():
    """What the benchmark scripts share lives in benchmarks/, not in one of them."""
    import ast
    import os

    folder = os.path.join(ROOT, "scripts")
    scripts = {f[:-3] for f in os.listdir(folder)
               if f.startswith("benchmark") and f.endswith(".py")}
    for name in sorted(scripts):
        with open(os.path.join(folder, f"{name}.py")) as f:
            tree = ast.parse(f.read())
        imported = {a.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for a in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & scripts, f"{name}.py imports {sorted(imported & scripts)}"


def test_each_target_has_widened_checkpoints_of_its_own(tmp_path):
    """The demo target's keep their names (other scripts point at them); another target's never
    take a name of the demo target's or of a third target's."""
    import os

    from benchmarks import models

    demo = os.path.join(ROOT, "user_dir_examples", "bible_es_en", "target.pt")
    names = {models._widened_name(demo), models._widened_name(str(tmp_path / "a" / "target.pt")),
             models._widened_name(str(tmp_path / "b" / "target.pt"))}
    assert models._widened_name(demo) == "target"
    assert len(names) == 3
    assert all(n.startswith("target") for n in names)


def test_a_commands_peak_is_its_own_not_raised_to_the_benchmarks(tmp_path):
    held = bytearray(256 << 20)  # this process's high-water mark is at least this
    held[::4096] = b"\1" * len(held[::4096])
    code, small = probes.run_measuring_peak([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert code == 3 and small < 128 << 20
    grow = "b = bytearray(192 << 20); b[::4096] = b'\\1' * len(b[::4096]); print('ok')"
    with open(tmp_path / "out", "w+") as out:
        code, big = probes.run_measuring_peak([sys.executable, "-c", grow], stdout=out)
        out.seek(0)
        assert out.read() == "ok\n"
    assert code == 0 and 192 << 20 <= big < 256 << 20
    del held

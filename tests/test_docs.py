"""The documentation's own contracts: a short README, a flags table that is options.py's, no
development history in the repository's files, and docs/benchmarks.md's writer.

Each check is a function that returns what it found wrong; the tests assert it finds nothing in
the repository and something in a deliberately broken input, so every test is shown to fail
when it should.
"""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
README = os.path.join(ROOT, "README.md")
MAX_README_LINES = 250

sys.path.insert(0, SCRIPTS)
sys.path.insert(0, ROOT)
import flags_table  # noqa: E402
import report  # noqa: E402
from benchmarks import render, suites  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# -- README length ----------------------------------------------------------------------------
def too_long(text, limit=MAX_README_LINES):
    n = len(text.splitlines())
    return [f"README.md has {n} lines, more than {limit}"] if n > limit else []


def test_readme_is_at_most_250_lines():
    assert too_long(read(README)) == []


def test_length_check_fails_past_the_limit():
    assert too_long("line\n" * (MAX_README_LINES + 1))
    assert not too_long("line\n" * MAX_README_LINES)


# -- the flags table --------------------------------------------------------------------------
def flags_problems(readme_text):
    """Differences between the README's flags table and the one options.py gives."""
    have = flags_table.between_markers(readme_text)
    if have is None:
        return [f"README.md has no {flags_table.START} ... {flags_table.END} block"]
    want = flags_table.table()
    if have == want:
        return []
    have_rows, want_rows = set(have.splitlines()), set(want.splitlines())
    return ([f"README only: {row}" for row in sorted(have_rows - want_rows)]
            + [f"options.py only: {row}" for row in sorted(want_rows - have_rows)]
            or ["same rows, other order"]) + [
        "regenerate it: python scripts/flags_table.py --write"]


def test_readme_flags_table_is_options_py():
    assert flags_problems(read(README)) == []


def test_flags_table_lists_every_field_with_default_and_help():
    from dataclasses import fields

    from fairseq_fast.options import FastGenerationConfig

    rows = {name: (default, text) for name, default, text in flags_table.rows()}
    for f in fields(FastGenerationConfig):
        if f.name.startswith("_"):  # FairseqDataclass's own _name
            continue
        name = "--" + f.name.replace("_", "-")
        assert name in rows
        assert rows[name][1] == " ".join(f.metadata["help"].split())
    assert rows["--draft-len"][0] == "`4`" and rows["--no-fast-beam"][0] == "off"
    assert rows["--draft-path"][0] == ""


@pytest.mark.parametrize("change", ["default", "help", "name", "missing row"])
def test_flags_check_fails_when_the_table_differs(change):
    text = read(README)
    table = flags_table.between_markers(text)
    row = next(line for line in table.splitlines() if line.startswith("| `--draft-len`"))
    broken = {"default": row.replace("| `4` |", "| `5` |"),
              "help": row.replace("gamma", "k"),
              "name": row.replace("--draft-len", "--draft-length"),
              "missing row": ""}[change]
    assert broken != row
    assert flags_problems(text.replace(row + "\n", broken + "\n" if broken else ""))


# -- no development history -------------------------------------------------------------------
HISTORY = [
    (re.compile(r"\b[Ss]essions?[ -][0-9]+"), "a numbered development period"),
    (re.compile(r"\b(?:this|that|earlier|later|previous|last|next|since) session\b"),
     "a development period"),
    (re.compile(r"\b(?:this|that|Intel|AMD) machine\b"), "the machine a figure came from"),
    (re.compile(r"\bthis project is measured on\b"), "the machine a figure came from"),
    (re.compile(r"(?<![\w.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w])"),
     "a commit hash"),
]
# the demo corpus and its dictionaries are data, not prose; this file holds the patterns'
# examples
SKIPPED = re.compile(r"^(user_dir_examples/bible_es_en/|tests/test_docs\.py$)")


def matches(path, text, patterns):
    """'path:line: what: match' for each match of [(pattern, what)] in text."""
    found = []
    for pattern, what in patterns:
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path}:{line}: {what}: {m.group(0)!r}")
    return found


def history_problems(path, text):
    return matches(path, text, HISTORY)


def repository_text_files():
    """Tracked files and new ones git does not ignore, minus data and binaries."""
    names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, text=True, check=True,
                           env=dict(os.environ, GIT_OPTIONAL_LOCKS="0")).stdout.splitlines()
    for name in sorted(set(names)):
        path = os.path.join(ROOT, name)
        if SKIPPED.match(name) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            raw = f.read()
        if b"\0" in raw:
            continue
        try:
            yield name, raw.decode("utf-8")
        except UnicodeDecodeError:
            continue


def test_no_development_history_in_the_repository():
    found = [p for name, text in repository_text_files() for p in history_problems(name, text)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("text", [
    "as measured in session 12", "the session-2 draft", "Sessions 5 and 6 did", "since session",
    "on this machine", "the AMD machine's figures", "at commit 8cf7ceb",
    "`render.py` at 89f9896: 3.1x"])
def test_history_check_finds_history(text):
    assert history_problems("x.py", text)


@pytest.mark.parametrize("text", [
    '@pytest.fixture(scope="session")', "start_new_session=True", "possession",
    "SPLAT(1.44269504088896341f)", "key.hexdigest()[:16]", "0x7fffffff", "1e-9",
    "fairseq issue #5206", "the machine it runs on"])
def test_history_check_ignores_ordinary_text(text):
    assert history_problems("x.py", text) == []


def test_a_commit_hash_is_history_in_benchmarks_md_too():
    assert history_problems("docs/benchmarks.md", "| commit | 8cf7ceb-dirty |") != []


# -- no measured figures in the package's prose -------------------------------------------------
MEASURED = [
    (re.compile(r"\b[0-9]+(?:\.[0-9]+)? ?(?:ms|us|µs)\b"), "a measured time"),
    (re.compile(r"~ ?[0-9.]+ ?%"), "a measured share"),
    (re.compile(r"\b[0-9]+(?:\.[0-9]+)?x (?:the time|faster|slower)\b"), "a measured ratio"),
    (re.compile(r"\btook [~0-9]"), "a measured time"),
]


def measured_figures(path, text):
    """Figures measured on some machine, in the package's comments, docstrings and help texts:
    they rot as the code changes; docs/benchmarks.md holds them, written by a script."""
    return matches(path, text, MEASURED)


def test_no_measured_figures_in_the_package_scripts_or_benchmarks():
    found = [p for name, text in repository_text_files()
             if name.startswith(("fairseq_fast/", "scripts/", "benchmarks/"))
             for p in measured_figures(name, text)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("text", [
    "checking them took ~30 us", "~5% of a run", "a 4-row group took 1.3x the time",
    "costs ~0.2 ms a step", "0.72x faster"])
def test_measured_figure_check_finds_figures(text):
    assert measured_figures("x.py", text)


@pytest.mark.parametrize("text", [
    'f"{seconds * 1000:.2f} ms"', "the 64-candidate limit", "~1e-7 relative", "x4 target",
    "float16 -> float32"])
def test_measured_figure_check_ignores_ordinary_text(text):
    assert measured_figures("x.py", text) == []


# -- docs/benchmarks.md and the README's figures ------------------------------------------------
ENV = {"cpu": "Test CPU @ 1 GHz", "isa": "AVX2", "physical_cores": 2, "logical_cpus": 2,
       "python": "3.11.0", "torch": "2.13.0", "fairseq": "0.12.3.1", "ctranslate2": "4.8.5",
       "commit": "abc1234-dirty", "date": "2030-01-02 03:04 UTC", "quick": False}
DEFAULTS = {"threads": 2, "batch_size": 32, "sentences": 256, "settings": [
    {"setting": "beam 5, no-repeat-ngram 3", "stock_sent_per_s": 15.0, "ours_sent_per_s": 45.0,
     "speedup": 3.0, "stock_outside_model_share": 0.3, "ours_outside_model_share": 0.1,
     "fp32_identical_share": 0.5},
    {"setting": "beam 5", "stock_sent_per_s": 16.0, "ours_sent_per_s": 48.0, "speedup": 3.0,
     "stock_outside_model_share": 0.27, "ours_outside_model_share": 0.09,
     "fp32_identical_share": 1.0},
    {"setting": "greedy", "stock_sent_per_s": 50.0, "ours_sent_per_s": 120.0, "speedup": 2.4,
     "stock_outside_model_share": 0.22, "ours_outside_model_share": 0.1,
     "fp32_identical_share": 1.0}],
    "ngram_blocker": {"rows": 320, "steps": 200, "n": 3, "stock_cpu_s": 1.4, "ours_s": 0.007,
                      "speedup": 200.0, "ours_torch_s": 0.025, "torch_speedup": 56.0}}
SCALE = {"threads": 2, "rows": [{"model": "x2", "stock_sent_per_s": 3.5, "speedup": 2.5,
                                 "bandwidth_gb_s": 12.25, "identical": True}]}


def test_generic_tables_render_any_benchmarks_rows():
    text = render.generic_tables(SCALE)
    assert "threads 2" in text
    assert "| model | stock sent per s | speedup | bandwidth gb s | identical |" in text
    assert "| x2 | 3.5 | 2.5 | 12.25 | yes |" in text


def test_markdown_has_the_header_and_one_section_per_benchmark(tmp_path, monkeypatch):
    # a benchmark the writer has never heard of, with no script: it gets the generic table
    toy = suites.Suite("toy", "benchmark_toy.py", (), (), plot=("toy.png", "a toy plot"))
    md = str(tmp_path / "benchmarks.md")
    text = render.markdown({"defaults": DEFAULTS, "toy": SCALE},
                           {"defaults": dict(ENV, command="python scripts/benchmark_defaults.py"),
                            "toy": ENV}, md=md, plots={"toy": str(tmp_path / "toy.png")},
                           suites=suites.SUITES + (toy,))
    assert text.endswith("| x2 | 3.5 | 2.5 | 12.25 | yes |\n\n![a toy plot](toy.png)\n")
    for fact in ("Test CPU @ 1 GHz (AVX2), 2 cores, 2 logical CPUs", "| torch | 2.13.0 |",
                 "| fairseq | 0.12.3.1 |", "| CTranslate2 | 4.8.5 |",
                 "| date | 2030-01-02 03:04 UTC |", "| run | full |"):
        assert fact in text
    assert "abc1234" not in text  # the commit is in NAME.env.json, never in the docs
    assert text.count("\n## ") == 2
    assert "## defaults: " in text and "\n## toy\n" in text
    # benchmark_defaults.py's own table, with the blank lines markdown needs around it
    assert "\n\n| setting | stock sent/s | plugin sent/s | speedup |" in text
    assert "| beam 5 | 16.00 | 48.00 | 3.00x | 27% / 9% | 100.0% |\n" in text
    assert "| 100.0% |\n\nn-gram blocker alone (320 rows x 200 steps" in text
    assert "| x2 | 3.5 | 2.5 | 12.25 | yes |" in text
    quick = render.markdown({"defaults": DEFAULTS}, {"defaults": dict(ENV, quick=True)}, md=md)
    assert "`--quick`" in quick


def test_write_only_rewrites_the_file_whole(tmp_path):
    out, md = tmp_path / "out", tmp_path / "docs" / "benchmarks.md"
    out.mkdir()
    (out / "defaults.json").write_text(json.dumps(DEFAULTS))
    (out / "defaults.env.json").write_text(json.dumps(ENV))
    md.parent.mkdir()
    md.write_text("stale hand edit\n")
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{render.SHAPES_START}\nold\n{render.SHAPES_END}\n")
    done = subprocess.run([sys.executable, os.path.join(SCRIPTS, "report.py"), "--write-only",
                           "--out", str(out), "--md", str(md), "--png", str(tmp_path / "r.png"),
                           "--readme", str(readme)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    text = md.read_text()
    assert "stale hand edit" not in text and "| CTranslate2 | 4.8.5 |" in text
    assert "![every feature against stock fairseq](../r.png)" in text
    assert "old" in readme.read_text()  # no shapes run: the README's figures untouched


def full_report():
    return {
        "defaults": DEFAULTS,
        "engines": {"settings": [
            {"setting": "greedy", "batch_size": 1, "engines": {
                "stock fairseq": {"sent_per_s": 5.0, "identical": 1.0},
                "fairseq_fast default": {"sent_per_s": 20.0, "identical": 1.0}}},
            {"setting": "beam 5", "batch_size": 32, "engines": {
                "stock fairseq": {"sent_per_s": 13.0, "identical": 1.0},
                "fairseq_fast default": {"sent_per_s": 33.0, "identical": 1.0}}}]},
        "speculative": {"settings": [
            {"setting": "greedy", "batch_size": 1, "speedup": 3.75, "fp32_identical_share": 1.0},
            {"setting": "sampling T=1", "batch_size": 1, "speedup": 2.86,
             "fp32_identical_share": None}]},
        "bild": {"sweep": [{"fallback": 0.6, "rollback": 5, "bleu_delta": 0.11}],
                 "side_by_side": [{"fallback": 0.6, "rollback": 5, "batch_size": 1,
                                   "speedup": 3.43}]},
        "latency": {"ratio": 1.06, "ct2_threads": 1}}


def test_headline_table_comes_from_the_run(tmp_path):
    rep = full_report()
    table = render.headline(rep)
    assert "| default generator (no flag) | beam 5, batch 32 | 3.00x | identical |" in table
    assert "| default generator (no flag) | greedy, batch 1 | 4.00x | identical |" in table
    assert "| `--generator speculative` | sampling T=1, batch 1 | 2.86x |" in table
    assert "| `--generator bild` | fallback 0.6, rollback 5, batch 1 | 3.43x | BLEU +0.11" in table
    assert "1.06x CTranslate2's" in table and render.DOCS_TAIL in table
    assert render.headline({k: v for k, v in rep.items() if k != "bild"}) is None


def shapes_report():
    def engines(stock_ms, ours_ms, identical):
        return {"stock fairseq": {"ms_token": stock_ms, "identical": 1.0},
                "fairseq_fast": {"ms_token": ours_ms, "x_stock": stock_ms / ours_ms,
                                 "identical": identical}}
    return {"threads": 2, "shapes": [
        {"name": "transformer.wmt19.en-de", "parameters": 269.7e6, "rows": [
            {"setting": "greedy, batch 1", "engines": engines(30.0, 7.5, 1.0)}]},
        {"name": "bart.large.cnn", "parameters": 406.3e6, "rows": [
            {"setting": "CNN/DM", "engines": engines(20.0, 10.0, None)}]}]}


def test_the_readmes_first_figures_come_from_a_full_shapes_run(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"top\n{render.SHAPES_START}\nold\n{render.SHAPES_END}\nrest\n")
    report = {"shapes": shapes_report()}
    assert not render.update_readme(report, {"shapes": dict(ENV, quick=True)}, str(readme))
    assert not render.update_readme(report, {}, str(readme))  # its run was not recorded
    assert "old" in readme.read_text()
    assert render.update_readme(report, {"shapes": ENV}, str(readme))
    text = readme.read_text()
    assert text.startswith(f"top\n{render.SHAPES_START}\n") and "old" not in text
    assert text.endswith(f"{render.SHAPES_END}\nrest\n")
    assert "on Test CPU @ 1 GHz (AVX2) with 2 threads" in text
    assert "| transformer.wmt19.en-de (270M) | greedy, batch 1 | 30.0 | 7.5 | 4.00x | " \
           "identical |" in text
    assert "| bart.large.cnn (406M) | CNN/DM | 20.0 | 10.0 | 2.00x | correct blocking" in text


def test_readme_has_the_first_figures_markers_and_points_to_benchmarks_md():
    text = read(README)
    block = text[text.index(render.SHAPES_START):text.index(render.SHAPES_END)]
    assert "| model | setting | stock ms/token | fairseq_fast ms/token | x stock | " in block
    assert "| CTranslate2 float32 / int8 ms/token | output |" in block
    assert "docs/benchmarks.md" in text[:text.index("## Set-up")]


# -- CTranslate2 at its fastest thread count ---------------------------------------------------
def test_ct2_thread_counts_parse_and_the_fastest_count_wins():
    import argparse

    import ctranslate2_baseline as ct2
    from benchmarks import scale_render

    assert ct2.thread_counts("2,1,2") == [1, 2] and ct2.thread_counts(4) == [4]
    for bad in ("", "0,1", "one"):
        with pytest.raises(argparse.ArgumentTypeError):
            ct2.thread_counts(bad)
    # sentences/s: the higher rate is the faster count, whichever order they come in
    assert ct2.fastest({1: 0.5, 2: 0.75}) == 2 and ct2.fastest({2: 0.5, 1: 0.75}) == 1
    assert ct2.threads_label([1, 2]) == "best of 1/2 threads"
    assert ct2.threads_label([1]) == "1 thread" and ct2.threads_label(2) == "2 threads"

    figures = {"stock fairseq": {"sent_per_s": 1.0},
               "CTranslate2 int8@1": {"sent_per_s": 7.0, "identical": 0.9},
               "CTranslate2 int8@2": {"sent_per_s": 5.0, "identical": 0.8}}
    ct2.fold_thread_counts(figures, "CTranslate2 int8", [1, 2])
    assert sorted(figures) == ["CTranslate2 int8", "stock fairseq"]
    assert figures["CTranslate2 int8"] == {"sent_per_s": 7.0, "identical": 0.9, "threads": 1,
                                           "sent_per_s_by_threads": {1: 7.0, 2: 5.0}}
    assert scale_render.ct2_label({"ct2_threads": [1, 2]}) == "best of 1/2 threads"
    assert scale_render.ct2_label({"ct2_threads": 2}) == "2 threads"  # an older report


def test_latency_and_headline_name_ct2s_fastest_count():
    rep = full_report()
    rep["latency"] = {"ratio": 1.5, "sentences": 300, "ct2_threads": 2,
                      "ct2_threads_tried": [1, 2],
                      "ct2_runs_by_threads": {"1": [10.0, 11.0, 12.0], "2": [20.0]},
                      "runs": {"fairseq_fast speculative": [30.0], "CTranslate2": [20.0]},
                      "medians": {"fairseq_fast speculative": 30.0, "CTranslate2": 20.0}}
    assert "Against CTranslate2 (2 threads, its fastest of 1/2)" in render.headline(rep)
    text = render.latency_tables(rep["latency"])
    assert "CTranslate2 threads 2 (the fastest of 1: 11.00 sentences/s, 2: 20.00" in text
    assert "Against CTranslate2 (1 thread)," in render.headline(full_report())


# -- the GPU section ------------------------------------------------------------------------------
def gpu_report():
    def engines(stock, default, spec):
        return {"stock fairseq": {"ms_per_token": stock, "identical": 1.0, "peak_gpu_mib": 90.0},
                "fairseq_fast default": {"ms_per_token": default, "identical": 1.0,
                                         "peak_gpu_mib": 80.0},
                "fairseq_fast default, no CUDA graphs": {
                    "ms_per_token": default * 4, "identical": 1.0, "peak_gpu_mib": 80.0},
                "fairseq_fast speculative": {"ms_per_token": spec, "identical": 0.9,
                                             "peak_gpu_mib": 85.0, "alpha": 0.7}}
    step = {"stock step": {"synced_ms": 6.0, "host_ms": 6.0, "kernels": 180,
                           "kernel_busy_ms": 0.3, "syncs": 1},
            "lean step": {"synced_ms": 4.0, "host_ms": 4.0, "kernels": 160,
                          "kernel_busy_ms": 0.4, "syncs": 2},
            "matmuls only": {"synced_ms": 1.5, "host_ms": 1.5, "kernels": 61,
                             "kernel_busy_ms": 0.15, "syncs": 0}}
    return {"device": "Test GPU", "torch": "2.11.0", "cuda": "13.0", "repeats": 3,
            "draft_len": 4, "draft_vocab": 1536, "cases": [
                {"factor": f, "dtype": d, "parameters": 10.5e6 * f * f,
                 "step": {**step, "lean step": {**step["lean step"], "kernel_busy_ms": busy}},
                 "rows": [
                    {"setting": "greedy", "beam": 1, "batch_size": 1, "sentences": 30,
                     "engines": engines(8.0, 8.0 / x, 8.0 / (x + 0.5))},
                    {"setting": "beam 5", "beam": 5, "batch_size": 32, "sentences": 30,
                     "engines": {k: v for k, v in engines(1.0, 1.0 / (x - 0.25), 9.0).items()
                                 if k in ("stock fairseq", "fairseq_fast default")}}]}
                for f, d, x, busy in ((1, "float32", 1.5, 0.4), (4, "float16", 2.0, 0.5))]}


def test_gpu_step_is_skipped_without_a_gpu_and_its_kept_figures_render(tmp_path, monkeypatch,
                                                                         capsys):
    out, kept = tmp_path / "out", tmp_path / "kept"
    out.mkdir()
    kept.mkdir()
    monkeypatch.setattr(render, "KEPT", str(kept))
    monkeypatch.setattr(report, "KEPT", str(kept))
    monkeypatch.setattr(report, "_runs_here", lambda suite: suite.name != "gpu")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("ran a benchmark"))
    report.run_suite(["gpu"], str(out), quick=False)
    assert "[report] gpu: skipped: torch sees no CUDA GPU" in capsys.readouterr().out
    assert not os.listdir(out)
    assert "gpu" not in render.load(str(out))
    (kept / "gpu.json").write_text(json.dumps(gpu_report()))
    (kept / "gpu.env.json").write_text(json.dumps(dict(ENV, gpu="Test GPU", python="3.12")))
    (out / "defaults.json").write_text(json.dumps(DEFAULTS))
    (out / "defaults.env.json").write_text(json.dumps(ENV))
    found, envs = render.load(str(out)), render.load_environments(str(out))
    assert found["gpu"] == gpu_report() and envs["gpu"]["gpu"] == "Test GPU"
    text = render.markdown(found, envs, md=str(tmp_path / "benchmarks.md"))
    section = text[text.index("\n## gpu: "):]
    assert "Unlike the header: gpu Test GPU, python 3.12." in section
    assert ("| x4 (168.0M) | float16 | greedy, batch 1 | 30 | fairseq_fast default | 4.000 | "
            "2.00x | 100.0% | - | 80 |") in section
    assert "| x1 | float32 | lean step | 4.00 | 4.00 | 160 | 0.400 | 2 |" in section
    assert "| Test CPU @ 1 GHz (AVX2)" in text  # the header is the CPU run's


def test_gpu_sentence_gives_the_ranges_and_the_step_times():
    sentence = render._gpu_sentence({"gpu": gpu_report()})
    assert sentence == (
        " On a GPU (Test GPU, float32 and float16, targets x1, x4), greedy batch 1 is "
        "1.50-2.00x stock with the default generator, whose decoder calls replay CUDA graphs "
        "(0.38-0.50x with them off), and 2.00-2.50x with speculative decoding; beam 5 at batch "
        "32 is 1.25-1.75x. A step's GPU time there follows its kernel count more than its size "
        "(0.40 ms at x1, 0.50 ms at x4), so a draft step costs most of a target step.")
    assert render._gpu_sentence({}) == ""
    assert sentence in render.headline({**full_report(), "gpu": gpu_report()})


def scale_report():
    def greedy(batch, spec, big=None):
        row = {"setting": "greedy", "batch_size": batch,
               "speculative": {"speedup_vs_default": spec}}
        if big is not None:
            row["speculative_big"] = {"speedup_vs_default": big}
        return row
    return {"scales": [
        {"factor": 4, "parameters": 156.3e6, "rows": [greedy(1, 1.9, 2.4), greedy(8, 1.0, 1.2)]},
        {"factor": 1, "parameters": 10.5e6, "rows": [greedy(1, 0.9, 0.8), greedy(8, 0.8, 0.7),
                                                     {"setting": "beam 5", "batch_size": 32}]}]}


def test_scale_sentence_gives_speculative_over_default_by_target_size():
    sentence = render._scale_sentence({"scale": scale_report()})
    assert sentence == (
        " Speculative decoding over the default generator, greedy batch 1, by target size (the "
        "demo target widened x1, x4: 10.5M, 156M parameters): 0.90x, 1.90x with the demo draft, "
        "0.80x, 2.40x with a deeper one; at batch 8, 0.70-1.20x. On a CPU it pays where a step "
        "is bound by memory, not by overhead.")
    assert sentence in render.headline({**full_report(), "scale": scale_report()})
    assert render._scale_sentence({}) == ""
    without_big = scale_report()
    for s in without_big["scales"]:
        for row in s["rows"]:
            row.pop("speculative_big", None)
    assert "deeper" not in render._scale_sentence({"scale": without_big})


# -- the default's share of the bandwidth: the triads around each run --------------------------
def test_scale_engines_take_turns_on_slices_between_triads():
    """In each repeat the sliceable engines (the plugin's, stock's) take turns slice by slice,
    the order rotating between repeats, between one triad before and one after; the others
    (CTranslate2's) then run whole. A run's figures are its slices' sums."""
    from benchmarks.engines import DEFAULT, measure
    from benchmarks.harness import FunctionEngine, Result, slice_of

    assert [slice_of(list(range(5)), i, 2) for i in range(2)] == [[0, 1], [2, 3, 4]]
    assert slice_of([7], 3, 4) == [7] and slice_of([7], 0, 4) == []
    calls = []

    def engine(name, sliceable=True):
        def run(part):
            calls.append((name, (part.slice, part.slices)))
            ids = slice_of(range(4), part.slice, part.slices)
            return Result(0.5 * len(ids), 10 * len(ids), {i: ["t"] for i in ids},
                          len(ids) * 2 ** 20)
        return FunctionEngine(name, run, lambda: calls.append((name, "warm-up")), sliceable)

    stock, default, ct2 = "stock fairseq", DEFAULT, "CTranslate2 int8"
    engines = [engine(stock), engine(default), engine(ct2, sliceable=False)]
    triads, brackets = iter([20.0, 21.0, 30.0, 31.0]), []
    figures, outputs = measure(engines, 2, 4, slices=2, bracket=lambda: next(triads),
                               brackets=brackets)
    assert brackets == [(20.0, 21.0), (30.0, 31.0)]
    assert calls[:3] == [(e, "warm-up") for e in (stock, default, ct2)]
    assert calls[3:] == [(stock, (0, 2)), (default, (0, 2)), (stock, (1, 2)), (default, (1, 2)),
                         (ct2, (0, 1)), (default, (0, 2)), (stock, (0, 2)), (default, (1, 2)),
                         (stock, (1, 2)), (ct2, (0, 1))]
    for e in (stock, default, ct2):
        assert figures[e]["seconds"] == [2.0, 2.0] and figures[e]["tokens"] == 40
        assert figures[e]["peak_rss_mib"] == (4.0 if e == ct2 else 2.0)
        assert figures[e]["identical"] == 1.0 and sorted(outputs[e]) == [0, 1, 2, 3]


def test_scale_sets_each_default_run_against_the_triads_around_it():
    from benchmarks import scale_render
    from benchmarks.limits import bracketed_shares

    brackets = [(20.0, 21.0), (20.0, 40.0), (40.0, 40.0)]
    # 10 tokens in 1 s at 1 GB a step: 10 GB/s; the run whose triads differ by 2x is left out
    shares = bracketed_shares(1e9, 10, [1.0, 1.0, 1.0], brackets)
    assert shares == [(10 / 20.5, 20.5), (10 / 40.0, 40.0)]
    assert bracketed_shares(1e9, 10, [1.0], [(20.0, 23.0)])  # 15% apart
    assert not bracketed_shares(1e9, 10, [1.0], [(23.1, 20.0)])

    row = {"triad_brackets": brackets}
    d = {"read_triad_share": 0.37, "read_triad_share_by_run": shares}
    assert scale_render._default_share(d, row) == (
        "37% of the triads around them, median of the 2 of 3 runs whose triads before and "
        "after agree: 49% of 20.5, 25% of 40.0 GB/s")
    assert scale_render._default_share({"read_triad_share_by_run": []}, row).startswith(
        "no share: the bandwidth changed level during each of its 3 runs")
    old = {"read_triad_share": 0.62}  # a report from before the triads after each run
    assert scale_render._default_share(old, {}) == "62% of the triads just before them"

    lean = {"lean_step_gbs": 30.0, "lean_step_triads": (40.0, 40.0)}
    assert scale_render._lean_step_share(lean, 60.0) == (
        "75% of the triads around it, 40.0/40.0 GB/s")
    lean["lean_step_triads"] = (40.0, 60.0)
    assert "changed level" in scale_render._lean_step_share(lean, 60.0)
    assert scale_render._lean_step_share({"lean_step_gbs": 30.0}, 60.0) == "50% of triad"


def test_scale_split_says_where_a_speculative_engines_time_went():
    """Shares of the timed runs, positions verified per token and the share that decided, the
    verify rate from the matmul weights a position multiplies, decoding without the encoders,
    and at batch > 1 the speedup left with no position wasted and the loop free."""
    import types

    import benchmark_scale
    from benchmarks import scale_render
    from benchmarks.engines import SPECULATIVE

    def timer(seconds):
        return types.SimpleNamespace(seconds=seconds, calls=1)

    # 10 s over two runs: verify 6, drafting 1, encoders 2 (the draft's 0.5), the rest 1; 400
    # positions, 300 of them decided, 250 tokens; 1e9 weights a position: 2 x 1e9 x 400 flops
    # in 6 s
    timers = (timer(1.0), timer(6.0), timer(2.0), [40, 400, 300, 250], timer(0.5))
    spec, default = {"seconds": [5.0, 5.0]}, {"seconds": [7.0, 7.0]}
    sp = benchmark_scale.split_figures(timers, spec, default, timer(4.0), 10 ** 9, 8)
    assert sp["shares"] == pytest.approx({"verify": 0.6, "drafting": 0.1, "encoders": 0.2,
                                          "rest": 0.1})
    assert sp["verified_per_token"] == 1.6 and sp["useful_share"] == 0.75
    assert sp["verify_gflops"] == pytest.approx(2 * 400 / 6)
    assert sp["default_encoder_share"] == pytest.approx(4 / 14)
    assert sp["decode_speedup"] == pytest.approx((14 - 4) / (10 - 1.5))
    assert sp["no_waste_loop_free"] == pytest.approx(14 / (10 - 6 * 0.25 - 1))
    at_one = benchmark_scale.split_figures(timers, spec, default, None, 10 ** 9, 1)
    assert "no_waste_loop_free" not in at_one and "decode_speedup" not in at_one

    row = {"batch_size": 1, "speculative": {"bound": 2.5}}
    line = scale_render._split_line(
        SPECULATIVE, benchmark_scale.split_figures(
            timers, spec, default, timer(4.0), 10 ** 9, 1), row, {"kernel_gflops": 200.0})
    assert line.startswith("speculative, batch 1, its time: verify 60%, drafting 10%, the "
                           "encoders 20%, the rest 10%; 1.60 positions verified a token, 75% "
                           "of them decided; verify 133 GFLOP/s dense-equivalent (67% of the "
                           "matmul's 200 at 64 rows)")
    assert line.endswith("1.18x over the default = 47% of the bound")


def test_scale_prints_each_batched_default_run_with_its_triads():
    from benchmarks import scale_render

    row = {"setting": "greedy", "batch_size": 8,
           "default_runs_triads": [(5.91, 35.9, 37.0), (4.8, 58.2, 60.1)]}
    assert scale_render._default_runs_line(row).startswith(
        "greedy, batch 8: the default's runs 5.91 s (triads 35.9/37.0 GB/s), 4.80 s (triads "
        "58.2/60.1 GB/s); where a step")


def test_scale_flags_a_verify_pass_cheaper_than_a_default_step():
    """At batch 1 a verify pass reads what a default step reads and more: cheaper means the
    runs met different bandwidth levels."""
    from benchmarks import scale_render

    sp = {"verify_ms": 9.04, "default_ms_per_token": 11.0}
    figures = {"split": {"default_encoder_share": 0.1}}  # a decoder step: 9.9 ms
    assert "9.04 against 9.90 ms" in scale_render._level_warning(sp, figures)
    assert scale_render._level_warning({**sp, "verify_ms": 10.5}, figures) is None
    assert scale_render._level_warning(sp, {}) is None  # no split: nothing to set it against


def test_scale_counts_the_matmul_weights_a_decoder_position_multiplies():
    """Every layer matrix but the cross-attention K/V (once per sentence), plus the output
    projection, tied to the embeddings or not; no biases, norms or position tables."""
    from benchmarks.limits import matmul_params
    from model_factory import DummyTask, make_dictionary, translation_model

    d = make_dictionary(20)
    task = DummyTask(d, d)
    for share in (False, True):
        model = translation_model(task, layers=2, dim=16, heads=2, share=share)
        dec = model.decoder
        per_layer = 6 * 16 * 16 + 2 * 16 * dec.layers[0].fc1.out_features
        assert matmul_params(dec) == (
            2 * per_layer + dec.output_projection.weight.numel())


# -- the draft benchmark, and a partial run ------------------------------------------------------
def draft_row(target, batch, engine, speed, alpha):
    return {"target": target, "batch_size": batch, "engine": engine, "speed_over_default": speed,
            "alpha": alpha, "tokens_per_target_call": 3.0, "identical": 1.0,
            "ms_per_token": 1.0, "default_ms_per_token": 2.0, "encoder_shared": True}


DRAFT = {"hours": 1.0, "threads": 2, "made_seconds": None,
         "made": {"wall_seconds": 4140.0, "decoder_layers": 2, "encoder_frozen": True,
                  "stages": {"data": {"train_sentences": 29734, "seconds": 160.0},
                             "train": {"updates": 3300, "agreement": 84.0}}},
         "translation": {"rows": [
             draft_row("x1", 1, "fairseq-fast-draft", 0.95, 0.81),
             draft_row("x1", 1, "fairseq-fast-draft, adaptive", 1.05, 0.80),
             draft_row("x4", 1, "fairseq-fast-draft", 2.31, 0.81),
             draft_row("x4", 8, "fairseq-fast-draft", 1.20, 0.81),
             draft_row("x4", 1, "fairseq-fast-draft widened x4", 1.40, 0.81),
             draft_row("x1", 1, "demo draft (hand-made)", 0.90, 0.73),
             draft_row("x4", 1, "demo draft (hand-made)", 1.80, 0.73)]}}
DRAFT_LM = {"hours": 1.0, "threads": 2,
            "lm": {"rows": [draft_row("x1", 1, "fairseq-fast-draft", 1.10, 0.70),
                            draft_row("x1", 1, "fairseq-fast-draft, adaptive", 1.20, 0.71)]}}


def test_draft_tables_give_the_summary_first_then_every_run():
    import benchmark_draft

    printed = render.script_tables("benchmark_draft.py", DRAFT)
    assert printed.index("| draft | alpha | x1 bs1 | x4 bs1 | x4 bs8 |") < \
        printed.index("Every run (translation)")
    assert "| fairseq-fast-draft | 0.810 | 1.05x | 2.31x | 1.20x |" in printed  # the faster
    assert "| demo draft (hand-made) | 0.730 | 0.90x | 1.80x | - |" in printed
    assert "69 minutes of wall time" in printed and "3,300 training updates" in printed
    assert "language model" not in printed
    printed = render.script_tables("benchmark_draft.py", DRAFT_LM)
    assert "| fairseq-fast-draft | 0.700 | 1.20x |" in printed  # alpha at the fixed length
    assert "Every run (lm)" in printed and "translation" not in printed
    assert benchmark_draft.summary_rows(DRAFT_LM, "lm")[0][1] == 0.70


def test_readme_draft_figures_come_from_the_draft_run(tmp_path):
    text = render.draft_sentence({"draft": DRAFT})
    assert "`fairseq-fast-draft --hours 1`" in text and "took 69 minutes" in text
    assert "α 0.810 (the hand-made drafts': 0.730)" in text
    assert "1.05x, 2.31x the default generator at batch 1 on the demo target widened x1, x4; " \
        "made from the x4 target itself (its first decoder layers at its width, its encoder " \
        "shared), 1.40x (docs/benchmarks.md" in text
    assert "language model" not in text
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{render.DRAFT_START}\nold\n{render.DRAFT_END}\nb\n")
    run = {"draft": DRAFT}
    assert not render.update_readme_draft(run, {"draft": dict(ENV, quick=True)}, str(readme))
    assert render.update_readme_draft(run, {"draft": ENV}, str(readme))
    assert readme.read_text() == f"a\n{render.DRAFT_START}\n{text}\n{render.DRAFT_END}\nb\n"
    assert render.DRAFT_START in read(README) and render.DRAFT_END in read(README)


def test_readme_language_model_draft_figures_stand_inside_their_sentence(tmp_path):
    """The draftlm run's figures go between markers inside a line, and stay inside it; the
    draft run's block (markers on lines of their own) is left alone."""
    figures = render.draft_lm_figures({"draftlm": DRAFT_LM})
    assert figures == "α 0.700, 1.20x at batch 1"
    assert render.draft_lm_figures({"draft": DRAFT}) is None
    readme = tmp_path / "README.md"
    draft_block = f"{render.DRAFT_START}\nold\n{render.DRAFT_END}\n"
    readme.write_text(f"{draft_block}On a model: {render.DRAFT_LM_START}old"
                      f"{render.DRAFT_LM_END}.\n")
    assert render.update_readme_draft({"draftlm": DRAFT_LM}, {"draftlm": ENV}, str(readme))
    assert readme.read_text() == (f"{draft_block}On a model: {render.DRAFT_LM_START}{figures}"
                                  f"{render.DRAFT_LM_END}.\n")
    assert render.DRAFT_LM_START in read(README) and render.DRAFT_LM_END in read(README)


def free_row(setting, batch, engine, speed, alpha=0.5):
    return {"setting": setting, "batch_size": batch, "engine": engine,
            "speed_over_default": speed, "identical": 1.0, "ms_per_token": 1.0,
            "alpha": alpha, "tokens_per_target_call": 1.5, "plain_share": 0.25,
            "drafts_offered_per_round": 2.0}


DRAFT_FREE = {"threads": 2, "draft_len": 4, "rows": [
    free_row("copy", 1, "default", 1.0), free_row("copy", 1, "ngram", 2.4),
    free_row("copy", 1, "ngram, adaptive", 2.6), free_row("copy", 1, "layers", 0.6),
    free_row("copy", 1, "layers, adaptive", 1.01), free_row("copy", 8, "ngram", 1.5),
    free_row("copy", 8, "ngram, adaptive", 1.4), free_row("long", 1, "ngram, adaptive", 3.1),
    free_row("mt x1", 1, "ngram, adaptive", 0.99), free_row("mt x4", 1, "ngram, adaptive", 1.02),
    free_row("mt x4", 1, "layers", 0.7), free_row("mt x4", 1, "layers, adaptive", 1.0)],
    "sweep": [{"setting": "mt x4", "layers": 2, "depth": 6, "alpha": 0.3,
               "speed_over_default": 0.8}],
    "reuse": [{"setting": "mt x4", "layers": 3, "depth": 6, "target_1_ms": 10.0,
               "target_5_ms": 12.0, "draft_1_ms": 5.5, "draft_5_ms": 6.0,
               "saving_share_of_verify": 0.0417}],
    "widths": [{"setting": "copy", "batch_size": 8, "ms": {"1": 2.0, "2": 3.0, "5": 6.5}}]}


def test_draft_free_tables_give_the_summary_first():
    printed = render.script_tables("benchmark_draft_free.py", DRAFT_FREE)
    assert printed.index("| copy | 1 | 2.40x / 2.60x | 0.60x / 1.01x | - |") < \
        printed.index("Every run")
    assert "| copy | 8 | 1.50x / 1.40x | - | - |" in printed
    assert "| mt x4 | 2 of 6 | 0.300 | 0.80x |" in printed
    assert "| mt x4 | 3 of 6 | 12.000 | 10.000 | 5.500 | 6.000 | 4.2% |" in printed
    assert "| setting | batch | 1 per row | 2 per row | 5 per row | perfect draft, at most |" \
        in printed
    assert "| copy | 8 | 2.000 (1.00x) | 3.000 (1.50x) | 6.500 (3.25x) | 1.54x (4 drafts) |" \
        in printed


def test_readme_draft_free_figures_come_from_the_draftfree_run(tmp_path):
    text = render.draft_free_sentence({"draftfree": DRAFT_FREE})
    assert "`ngram` 2.60x at batch 1 and 1.40x at batch 8 on an English denoising model" in text
    assert "3.10x on inputs of several hundred tokens, 0.99x on the demo Spanish→English pair " \
        "(1.02x widened x4); `layers` 1.01x on the denoiser, 1.00x on the demo target widened " \
        "x4. Part of each speed-up is plain greedy steps" in text
    plain = {(r["setting"], r["engine"]): r["plain_share"] for r in DRAFT_FREE["rows"]
             if r["batch_size"] == 1}
    assert (f"{100 * plain[('copy', 'ngram, adaptive')]:.0f}% of the `ngram` tokens on the "
            f"denoiser, {100 * plain[('copy', 'layers, adaptive')]:.0f}% of the `layers` ones "
            "(docs/benchmarks.md's draftfree section).") in text
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{render.DRAFT_FREE_START}\nold\n{render.DRAFT_FREE_END}\nb\n")
    run = {"draftfree": DRAFT_FREE}
    assert not render.update_readme_draft(run, {"draftfree": dict(ENV, quick=True)},
                                          str(readme))
    assert render.update_readme_draft(run, {"draftfree": ENV}, str(readme))
    assert readme.read_text() == \
        f"a\n{render.DRAFT_FREE_START}\n{text}\n{render.DRAFT_FREE_END}\nb\n"
    assert render.DRAFT_FREE_START in read(README)


def test_readme_draft_free_figures_lead_with_the_widened_copy_model():
    rows = DRAFT_FREE["rows"] + [free_row("copy x2", 1, "ngram, adaptive", 1.7),
                                 free_row("copy x4", 1, "ngram, adaptive", 2.2),
                                 free_row("copy x4", 8, "ngram, adaptive", 1.1)]
    text = render.draft_free_sentence({"draftfree": dict(DRAFT_FREE, rows=rows)})
    assert "`ngram` 2.20x at batch 1 and 1.10x at batch 8 on an English denoising model (its " \
        "output copies most of its input; `scripts/copy_pair.py`) widened x4 (the same outputs " \
        "from about 16 times the weights), 2.60x and 1.40x at its own size, 3.10x on inputs" in text
    assert "1.70x" not in text  # only the widest


def test_a_partial_run_keeps_the_other_benchmarks_sections(tmp_path):
    md = tmp_path / "benchmarks.md"
    first = render.markdown({"defaults": DEFAULTS},
                            {"defaults": dict(ENV, command="python scripts/benchmark_defaults.py")},
                            md=str(md))
    md.write_text(first)
    kept = render.sections(md.read_text())
    assert list(kept) == ["defaults"]
    second = render.markdown({"draft": DRAFT}, {"draft": ENV}, md=str(md), kept=kept)
    assert kept["defaults"] in second  # as the file had it, its command line and date included
    assert second.index("## defaults:") < second.index("## draft:")  # in the suite's order
    assert "the other sections give their own" in second
    replaced = render.markdown({"defaults": DEFAULTS}, {"defaults": ENV}, md=str(md),
                               kept={"defaults": "## defaults: stale"})
    assert "stale" not in replaced  # a benchmark in the run is written anew


def test_a_partial_run_keeps_the_full_runs_header(tmp_path):
    """The header names the full run's machine, even where the partial run's first benchmark is
    the kept GPU run; the new section says how its own machine differs, in what the header
    shows."""
    md = tmp_path / "benchmarks.md"
    md.write_text(render.markdown({"defaults": DEFAULTS}, {"defaults": ENV}, md=str(md)))
    header = render.header_of(md.read_text())
    assert "| CPU | Test CPU @ 1 GHz (AVX2), 2 cores, 2 logical CPUs |" in header
    assert render.header_environment(header) == {
        "gpu": None, "cpu": "Test CPU @ 1 GHz", "isa": "AVX2", "physical_cores": 2,
        "logical_cpus": 2, "torch": "2.13.0", "fairseq": "0.12.3.1", "ctranslate2": "4.8.5"}
    gpu_env = dict(ENV, gpu="Test GPU", cpu="Other CPU", python="3.12")
    draft_env = dict(ENV, isa="AVX512", python="3.12", date="2030-02-03 04:05 UTC",
                     command="python scripts/benchmark_draft.py")
    text = render.markdown({"gpu": gpu_report(), "draft": DRAFT},
                           {"gpu": gpu_env, "draft": draft_env}, md=str(md),
                           kept=render.sections(md.read_text()), header=header)
    assert text.startswith(header + "\n")
    assert text.count("| CPU |") == 1 and "2030-02-03" not in render.header_of(text)
    draft = render.sections(text)["draft"]
    assert "Unlike the header: isa AVX512." in draft  # python: the header does not show it
    assert "Unlike the header: gpu Test GPU, cpu Other CPU." in render.sections(text)["gpu"]
    assert render.sections(text)["defaults"] == render.sections(md.read_text())["defaults"]
    # a run of everything the file has renews the header; a section of no benchmark is dropped
    renewed = render.markdown({"defaults": DEFAULTS}, {"defaults": draft_env}, md=str(md),
                              kept={"gone": "## gone: a benchmark no longer in the suite"},
                              header=header)
    assert "2030-02-03" in render.header_of(renewed) and "## gone" not in renewed


# -- the file's shape: the summary first, the diagnostics in an appendix ----------------------
def _toy_script(tmp_path, monkeypatch, name, diagnostics=True):
    """A benchmark script on the path whose print_table prints its figure and whose
    print_diagnostics (where asked) prints a line that belongs in the appendix."""
    code = ("def print_table(report):\n    print(f\"| figure |\\n|---|\\n| {report['x']} |\")\n")
    if diagnostics:
        code += "def print_diagnostics(report):\n    print(f\"diagnostic {report['why']}\")\n"
    (tmp_path / f"{name}.py").write_text('"""A toy benchmark."""\n' + code)
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}.py"


def test_the_summary_comes_first_and_the_diagnostics_go_to_the_appendix(tmp_path, monkeypatch):
    toy = suites.Suite("toy", _toy_script(tmp_path, monkeypatch, "toy_users"), (), ())
    probe = suites.Suite("probe", _toy_script(tmp_path, monkeypatch, "toy_probe", False), (),
                         (), part=suites.APPENDIX)
    run = {**full_report(), "toy": {"x": 7, "why": "the triads"}, "probe": {"x": 8}}
    envs = {name: ENV for name in run}
    text = render.markdown(run, envs, md=str(tmp_path / "benchmarks.md"),
                           suites=suites.SUITES + (probe, toy))
    order = [text.index(s) for s in ("## summary: ", "## engines: ", "## toy\n",
                                     render.APPENDIX_HEADING, "## probe\n",
                                     "## toy (diagnostics): ")]
    assert order == sorted(order)
    summary = render.sections(text)["summary"]
    assert "| `--generator speculative` | sampling T=1, batch 1 | 2.86x |" in summary
    assert "docs/benchmarks.md" not in summary and render.DOCS_TAIL in summary
    assert "| 7 |" in render.sections(text)["toy"]
    assert "diagnostic" not in render.sections(text)["toy"]
    assert "diagnostic the triads" in render.sections(text)["toy (diagnostics)"]
    # no appendix where nothing belongs there
    bare = render.markdown({"defaults": DEFAULTS}, {"defaults": ENV},
                           md=str(tmp_path / "benchmarks.md"))
    assert render.APPENDIX_HEADING not in bare and "## summary" not in bare


def test_a_partial_run_keeps_the_summary_and_the_appendix(tmp_path, monkeypatch):
    toy = suites.Suite("toy", _toy_script(tmp_path, monkeypatch, "toy_kept"), (), ())
    every = suites.SUITES + (toy,)
    md = tmp_path / "benchmarks.md"
    run = {**full_report(), "toy": {"x": 7, "why": "first"}}
    md.write_text(render.markdown(run, {name: ENV for name in run}, md=str(md), suites=every))
    kept, header = render.sections(md.read_text()), render.header_of(md.read_text())
    assert {"summary", "toy", "toy (diagnostics)"} <= set(kept)
    # only the defaults again: the summary and the toy's two sections stay as they were
    again = render.markdown({"defaults": DEFAULTS}, {"defaults": ENV}, md=str(md), kept=kept,
                            header=header, suites=every)
    for key in ("summary", "toy", "toy (diagnostics)"):
        assert render.sections(again)[key] == kept[key]
    assert again.index("## toy (diagnostics)") > again.index(render.APPENDIX_HEADING)
    # the toy again: both its sections are new, the old diagnostics gone
    renewed = render.markdown({"toy": {"x": 9, "why": "second"}}, {"toy": ENV}, md=str(md),
                              kept=kept, header=header, suites=every)
    assert "diagnostic second" in renewed and "diagnostic first" not in renewed
    # a full run writes the summary anew
    faster = full_report()
    faster["speculative"]["settings"][1]["speedup"] = 3.5
    full = render.markdown(faster, {name: ENV for name in faster}, md=str(md), kept=kept,
                           header=header, suites=every)
    assert "| sampling T=1, batch 1 | 3.50x |" in render.sections(full)["summary"]


def test_a_file_laid_out_again_keeps_its_summary(tmp_path):
    """With no JSON at hand, the file keeps every section, the summary included; running it
    twice changes nothing."""
    md, out, readme = tmp_path / "benchmarks.md", tmp_path / "out", tmp_path / "README.md"
    out.mkdir()
    md.write_text(render.markdown(full_report(), {name: ENV for name in full_report()},
                                  md=str(md)))
    readme.write_text("x\n")
    cmd = [sys.executable, os.path.join(SCRIPTS, "report.py"), "--write-only", "--out",
           str(out), "--md", str(md), "--png", str(tmp_path / "r.png"), "--readme", str(readme)]
    before = md.read_text()
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    text = md.read_text()
    assert render.sections(text)["defaults"] == render.sections(before)["defaults"]
    assert render.header_of(text) == render.header_of(before)
    assert render.sections(text)["summary"] == render.sections(before)["summary"]
    assert render.headline(full_report()) in render.sections(text)["summary"]
    assert readme.read_text() == "x\n"
    subprocess.run(cmd, capture_output=True, check=True)
    assert md.read_text() == text


def test_every_suite_runs_a_script_that_exists_and_renders_somewhere():
    assert len(set(suites.names())) == len(suites.SUITES)
    for suite in suites.SUITES:
        assert os.path.exists(os.path.join(SCRIPTS, suite.script)), suite.script
        assert suite.part in (suites.USERS, suites.APPENDIX)
        args = suite.command("python", "/out", quick=True, ct2_threads="1,2")
        assert args[args.index("--json") + 1] == f"/out/{suite.name}.json"
        assert ("--ct2-threads" in args) == suite.ct2_threads
        assert ("--png" in args) == (suite.plot is not None)
    assert set(suites.HEADLINE_NEEDS) <= set(suites.names())

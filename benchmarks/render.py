"""docs/benchmarks.md, the README's figures and the summary plot, from the JSONs the suite's
benchmarks wrote (benchmarks/suites.py declares them; scripts/report.py runs them and calls
this module).

The file's shape: a header (the machine, the versions, the dates), the summary a user reads
first (the features against stock fairseq on the demo pair), one section per benchmark of what
users get, then an appendix of diagnostics: the benchmarks that say where the time goes or what
each part adds, and the diagnostic lines of a benchmark whose script prints them apart
(`print_diagnostics`). The README's first table comes from the model-shapes benchmark.
A rerun of some benchmarks keeps the other sections as the file had them.
"""
import contextlib
import io
import json
import os
import re
import shutil
import statistics

from benchmarks import ROOT
from benchmarks.models import script as script_module
from benchmarks.probes import environment
from benchmarks.suites import APPENDIX, HEADLINE_NEEDS, KEPT, SCRIPTS, SUITES, find

MARKDOWN = os.path.join(ROOT, "docs", "benchmarks.md")
README = os.path.join(ROOT, "README.md")
DRAFT_START, DRAFT_END = "<!-- draft:start -->", "<!-- draft:end -->"
DRAFT_LM_START, DRAFT_LM_END = "<!-- draftlm:start -->", "<!-- draftlm:end -->"
DRAFT_FREE_START, DRAFT_FREE_END = "<!-- draftfree:start -->", "<!-- draftfree:end -->"
SHAPES_START, SHAPES_END = "<!-- shapes:start -->", "<!-- shapes:end -->"


def load(out, suffix=".json", suites=SUITES):
    """{name: the JSON in out/NAME{suffix}} for every benchmark of the suite that wrote one; a
    benchmark that needs a GPU and has none in `out` is read from where its last run is kept."""
    found = {}
    for suite in suites:
        name = suite.name
        path = os.path.join(out, f"{name}{suffix}")
        if not os.path.exists(path) and suite.gpu:
            path = os.path.join(KEPT, f"{name}{suffix}")
        if os.path.exists(path):
            with open(path) as f:
                found[name] = json.load(f)
    return found


def speedups(report):
    """(label, speedup vs stock) for every plugin feature measured."""
    rows = []
    for s in report.get("speculative", {}).get("settings", []):
        rows.append((f"speculative: {s['setting']}, bs {s['batch_size']}", s["speedup"]))
    for s in report.get("bild", {}).get("side_by_side", []):
        rows.append((f"BiLD {s['fallback']}/{s['rollback']}, bs {s['batch_size']}",
                     s["speedup"]))
    for s in report.get("defaults", {}).get("settings", []):
        rows.append((f"defaults: {s['setting']}", s["speedup"]))
    for s in report.get("linear", {}).get("settings", []):
        for variant, key in (("--no-fast-linear", "f_linear_speedup"),
                             ("oneDNN only", "onednn_speedup"),
                             ("small-matrix kernel", "kernel_speedup")):
            rows.append((f"{s['setting']}, bs {s['batch_size']}, {variant}", s[key]))
    for name, s in report.get("pipeline", {}).get("settings", {}).items():
        rows.append((f"pipeline: {name}, wall clock", s["serial_wall_s"] / s["workers_wall_s"]))
    return rows


def print_tables(report):
    engines = report.get("engines")
    if engines:
        script_module("benchmark_engines").print_table(engines)
    print("\n| plugin feature vs stock fairseq | speedup |\n|---|---|")
    for label, x in speedups(report):
        print(f"| {label} | {x:.2f}x |")
    for name, s in report.get("pipeline", {}).get("settings", {}).items():
        print(f"\npipeline {name}: post-processing {s['postprocess_s']:.2f}s, hidden "
              f"{100 * s['hidden']:.0f}%, wall {s['serial_wall_s']:.1f}s -> "
              f"{s['workers_wall_s']:.1f}s, identical output {s['identical_output']}")
    latency = report.get("latency")
    if latency:
        medians = latency["medians"]
        print(f"\nlatency, greedy batch 1, {latency['sentences']} sentences, each engine in "
              f"its own process: " + ", ".join(f"{name} {x:.2f} sentences/s"
                                        for name, x in medians.items())
              + f"; speculative / CTranslate2 {latency['ratio']:.2f}x")


# -- docs/benchmarks.md -----------------------------------------------------------------------
ENV_KEYS = ("gpu", "cpu", "isa", "physical_cores", "logical_cpus", "python", "torch", "fairseq",
            "ctranslate2")


def load_environments(out, suites=SUITES):
    """{name: the environment recorded in NAME.env.json when that benchmark started}."""
    return load(out, ".env.json", suites)


def _fmt(value):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def _scalar(value):
    return value is None or isinstance(value, (bool, int, float, str))


def _flat(row, prefix=""):
    """A row's scalar fields, nested dicts' fields named "outer inner"."""
    out = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, f"{name} "))
        elif _scalar(value):
            out[name] = value
    return out


def _int_keys(data):
    """A copy of JSON data with digit-string keys turned back into ints (JSON makes every key a
    string; the scripts' tables index some dicts by int, e.g. rows per call)."""
    if isinstance(data, dict):
        return {int(k) if isinstance(k, str) and k.isdigit() else k: _int_keys(v)
                for k, v in data.items()}
    if isinstance(data, list):
        return [_int_keys(v) for v in data]
    return data


def generic_tables(data):
    """Any benchmark's JSON: its scalar fields on one line, then one table per list of rows
    (a list of dicts, or a dict of dicts keyed by setting)."""
    if not isinstance(data, dict):
        return "```\n" + json.dumps(data, indent=1) + "\n```"
    parts = []
    scalars = [f"{key.replace('_', ' ')} {_fmt(v)}" for key, v in data.items() if _scalar(v)]
    if scalars:
        parts.append(", ".join(scalars))
    for key, value in data.items():
        rows = value
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            rows = [{"setting": k, **v} for k, v in value.items()]
        if not (isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows)):
            continue
        rows = [_flat(r) for r in rows]
        columns = list(dict.fromkeys(c for r in rows for c in r))
        lines = [f"{key.replace('_', ' ')}:", "",
                 "| " + " | ".join(c.replace("_", " ") for c in columns) + " |",
                 "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def latency_tables(data):
    runs = data["runs"]
    repeats = max(len(v) for v in runs.values())
    tried = data.get("ct2_threads_tried")
    ct2 = f"CTranslate2 threads {data.get('ct2_threads')}"
    if tried:
        by = data["ct2_runs_by_threads"]
        ct2 += (" (the fastest of " + ", ".join(
            f"{t}: {statistics.median(by[str(t)]):.2f} sentences/s" for t in tried) + ")")
    lines = [f"greedy, batch 1, float32, {data['sentences']} test sentences, {ct2}, "
             f"repeats {repeats} (medians)", "",
             "| engine | sentences/s | ms per sentence | runs (sentences/s) |", "|---|---|---|---|"]
    for name, values in runs.items():
        median = data["medians"][name]
        lines.append(f"| {name} | {median:.2f} | {1000 / median:.1f} | "
                     f"{', '.join(f'{x:.2f}' for x in values)} |")
    lines += ["", f"fairseq_fast speculative / CTranslate2: {data['ratio']:.2f}x"]
    return "\n".join(lines)


def pipeline_tables(data):
    n = data["workers"]
    lines = [f"{data['sentences']} sentences, batch {data['batch_size']}, repeats "
             f"{data['repeats']} (medians); P = post-processing timed in-process; hidden = (time "
             f"outside generation, serial - with workers) / P", "",
             f"| setting | P | wall, serial | wall, {n} workers | generation, serial / {n} "
             f"workers | hidden | output |", "|---|---|---|---|---|---|---|"]
    for name, s in data["settings"].items():
        lines.append(f"| {name} | {s['postprocess_s']:.2f} s | {s['serial_wall_s']:.2f} s | "
                     f"{s['workers_wall_s']:.2f} s | {s['serial_generation_s']:.2f} s / "
                     f"{s['workers_generation_s']:.2f} s | {100 * s['hidden']:.0f}% of P | "
                     f"{'identical' if s['identical_output'] else 'DIFFERENT'} |")
    return "\n".join(lines)


# benchmarks whose script prints its tables in main() instead of a print_table(report)
RENDERERS = {"latency": latency_tables, "pipeline": pipeline_tables}


def _script_module(name):
    """The benchmark script's module, or None where it cannot be imported."""
    try:
        return script_module(os.path.splitext(name)[0])
    except ImportError:
        return None


def _printed(show, data):
    """What show(data) prints, tried on the JSON as read and with its digit keys made ints; None
    where neither fits."""
    for attempt in (data, _int_keys(data)):
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                show(attempt)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        return printed.getvalue()
    return None


def diagnostics(script, data):
    """The diagnostic lines the benchmark script prints apart from its tables (its
    print_diagnostics), as markdown; None where it has none."""
    module = _script_module(script)
    show = getattr(module, "print_diagnostics", None) if module else None
    text = _printed(show, data) if show else None
    return _spaced(text) if text and text.strip() else None


def script_tables(script, data):
    """What the benchmark script itself prints for this JSON (its print_table or print_tables),
    or None when it has neither or they do not fit the JSON."""
    module = _script_module(script)
    show = module and (getattr(module, "print_table", None)
                       or getattr(module, "print_tables", None))
    if show is None:
        return None
    return _printed(show, data)


def tables(name, script, data):
    """Markdown for one benchmark's JSON: its own renderer, else its script's print_table,
    else a generic rendering of the JSON's rows."""
    text = None
    if name in RENDERERS:
        try:
            text = RENDERERS[name](data)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            text = None
    if text is None and script:
        text = script_tables(script, data)
    if text is None:
        text = generic_tables(data)
    return _spaced(text)


def _spaced(text):
    """A blank line before and after every table (markdown needs them), none doubled."""
    out = []
    for line in text.strip("\n").splitlines():
        line = line.rstrip()
        row, previous_row = line.startswith("|"), bool(out) and out[-1].startswith("|")
        if out and line and out[-1] and row != previous_row:
            out.append("")
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def _first_docstring_line(script):
    import ast

    try:
        with open(os.path.join(SCRIPTS, script)) as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
    except (OSError, SyntaxError):
        return ""
    first = " ".join(doc.split("\n\n")[0].split())  # the first paragraph, on one line
    first = re.split(r"\.(?:\s|$)", first)[0]         # its first sentence
    return first.split(": ")[0]                        # what comes before any detail


def _parts(text):
    """A benchmarks.md cut before each "## " line and the appendix's heading: [header, section,
    section, ...]."""
    return re.split(r"^(?=## |# Appendix)", text, flags=re.M)


def sections(text):
    """{key: its section ("## key: ..." up to the next one) of a benchmarks.md}: a benchmark's
    name, "NAME (diagnostics)" for its lines in the appendix, or "summary"."""
    found = {}
    for part in _parts(text)[1:]:
        name = re.match(r"## ([\w-]+(?: \(diagnostics\))?)", part)
        if name:
            found[name.group(1)] = part.rstrip("\n")
    return found


def header_of(text):
    """The part of a benchmarks.md before its first section (title, environment table, plot)."""
    parts = _parts(text)
    return parts[0].rstrip("\n") if len(parts) > 1 else None


def header_environment(header):
    """The environment a benchmarks.md header's table names ({ENV_KEYS key: value}, those it
    shows), or None where it has no such table."""
    cpu = re.search(r"^\| CPU \| (.*) \((.*?)\), (?:(\d+) cores, )?(\d+) logical CPUs \|$",
                    header, re.M)
    if not cpu:
        return None
    env = {"gpu": None, "cpu": cpu.group(1), "isa": cpu.group(2),
           "physical_cores": int(cpu.group(3)) if cpu.group(3) else None,
           "logical_cpus": int(cpu.group(4))}
    for key, label in (("torch", "torch"), ("fairseq", "fairseq"),
                       ("ctranslate2", "CTranslate2")):
        row = re.search(rf"^\| {label} \| (.*) \|$", header, re.M)
        if row:
            env[key] = row.group(1)
    return env


def markdown(report, envs, png=None, md=MARKDOWN, plots=None, kept=None, header=None,
             suites=SUITES):
    """The whole of docs/benchmarks.md for the JSONs in `report` ({name: JSON}) and the
    environments recorded when they ran ({name: env}); png: the summary plot, plots: {name:
    its benchmark's plot}, as paths (made relative to the file); kept: {key: its section as the
    file had it} (sections()), for what this run does not renew. header: the file's header as
    it was (header_of), kept as it is when sections are kept (a partial run), so that it keeps
    naming the full run's machine and dates; the new sections say how theirs differ."""
    plots = plots or {}
    known = {SUMMARY} | {key for s in suites for key in (s.name, _diagnostics_key(s.name))}
    kept = {key: text for key, text in (kept or {}).items()
            if key in known and _owner(key) not in report}
    if SUMMARY in kept and headline(report) is not None:
        del kept[SUMMARY]
    names = [s.name for s in suites
             if s.name in report or s.name in kept or _diagnostics_key(s.name) in kept]
    ran = [name for name in names if name in report and not find(name, suites).gpu]
    # the header as it was where sections are kept: a partial run, or one where no CPU
    # benchmark ran (the GPU's kept figures alone, or nothing: the file laid out again)
    only_gpu = not ran and all(find(name, suites).gpu for name in report)
    old = header_environment(header) if header and kept and (ran or only_gpu) else None
    if old is not None:  # a partial run: the header as it was
        return "\n".join([header] + section_lines(report, envs, names, kept, old, md, plots,
                                                   suites, shown_only=True)) + "\n"
    recorded = [envs[name] for name in names if name in envs and name in report]
    if recorded:
        env, note = recorded[0], ""
    else:
        env = environment()
        note = (" (not recorded when the benchmarks ran: taken when this file was written)")
    dates = sorted(e["date"] for e in recorded) or [env["date"]]
    if kept:
        note += " (the benchmarks of this run; the other sections give their own)"
    quick = any(e.get("quick") for e in recorded)
    cores = (f"{env['physical_cores']} cores, " if env.get("physical_cores") else "")
    lines = ["# Benchmarks", "",
             "Written by `scripts/report.py` from the JSON files each benchmark wrote; do not edit "
             "by hand. `python scripts/report.py` reruns the suite and replaces this file whole; "
             "`python scripts/report.py --write-only --out DIR` rewrites it from an existing "
             "run's folder.", "",
             "| | |", "|---|---|",
             f"| CPU | {env['cpu']} ({env['isa']}), {cores}{env['logical_cpus']} logical CPUs |",
             f"| torch | {env['torch']} |", f"| fairseq | {env['fairseq']} |",
             f"| CTranslate2 | {env['ctranslate2']} |",
             f"| date | {dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
             + f"{note} |",
             "| run | " + ("`--quick`: fewer sentences and repeats, a smoke run whose figures are "
                          "noisy" if quick else "full") + " |", "",
             "The demo pair (`user_dir_examples/bible_es_en`: a 256-dim target with 4 encoder "
             "and 6 decoder layers, a draft with one 128-dim decoder layer), float32 on CPU. Each "
             "benchmark alternates the engines it compares over the same sentences and reports "
             "medians; \"identical\" is the share of sentences whose tokens equal stock "
             "fairseq's. The summary comes first, then what each benchmark measured; the "
             "appendix holds the diagnostics: where the time goes and what each part adds."]
    here = os.path.dirname(os.path.abspath(md))
    if png:
        lines += ["", f"![every feature against stock fairseq]({os.path.relpath(png, here)})"]
    return "\n".join(lines + section_lines(report, envs, names, kept, env, md, plots, suites)) \
        + "\n"


SUMMARY = "summary"
APPENDIX_HEADING = "# Appendix: diagnostics"
DOCS_TAIL = "Every table is below."


def _diagnostics_key(name):
    """The key (and the heading's name) of benchmark `name`'s diagnostics in the appendix."""
    return f"{name} (diagnostics)"


def _owner(key):
    """The benchmark a section key belongs to ("scale (diagnostics)" -> "scale")."""
    return key.split(" ", 1)[0]


def summary_section(report, kept):
    """The summary's lines: from this run where it has every benchmark the headline needs, else
    as the file had it; [] where there is none."""
    table = headline(report)
    if table is None:
        return ["", kept[SUMMARY]] if SUMMARY in kept else []
    return ["", "## summary: the plugin against stock fairseq", "",
            "The features users switch on, at the settings people run, from the benchmarks "
            f"below ({', '.join(HEADLINE_NEEDS)}).", "", table]


def section_lines(report, envs, names, kept, env, md, plots, suites=SUITES,
                  shown_only=False):
    """The sections of benchmarks.md (markdown lines): the summary, what users get and the
    appendix, each in the suite's order; kept ones as they were, the others from their JSONs.
    A section whose environment differs from `env` (the header's; with shown_only, only in the
    keys `env` has: those a kept header shows) says how."""
    here = os.path.dirname(os.path.abspath(md))
    body, appendix = [], []
    for name in names:
        suite = find(name, suites)
        where = appendix if suite.part == APPENDIX else body
        key = _diagnostics_key(name)
        if name not in report:
            if name in kept:
                where += ["", kept[name]]
            if key in kept:
                appendix += ["", kept[key]]
            continue
        e = envs.get(name, {})
        title = _first_docstring_line(suite.script).rstrip(".")
        where += ["", f"## {name}: {title}" if title else f"## {name}", ""]
        if e.get("command"):
            where.append(f"`{e['command']}`, started {e['date']}.")
        else:
            where.append(f"`scripts/{suite.script}` (its command line was not recorded).")
        differs = [f"{k} {e[k]}" for k in ENV_KEYS
                   if k in e and (k in env or not shown_only) and e[k] != env.get(k)]
        if differs:
            where.append("Unlike the header: " + ", ".join(differs) + ".")
        where += ["", tables(name, suite.script, report[name])]
        if name in plots:
            where += ["", f"![{suite.plot[1]}]({os.path.relpath(plots[name], here)})"]
        lines = diagnostics(suite.script, report[name])
        if lines:
            appendix += ["", f"## {key}: " + (title or name), "",
                         f"The diagnostic lines of the {name} run above.", "", lines]
    if appendix:
        appendix = ["", APPENDIX_HEADING, "",
                    "What the figures above are made of: where the time goes, what each part of "
                    "the plugin adds, and the measurements behind the bounds."] + appendix
    return summary_section(report, kept) + body + appendix


def write_markdown(report, out, md, png=None, suites=SUITES):
    envs = load_environments(out, suites)
    plots = {}
    for suite in suites:
        if suite.plot is None:
            continue
        drawn = os.path.join(out, suite.plot[0])
        if suite.name in report and os.path.exists(drawn):
            plots[suite.name] = os.path.join(os.path.dirname(os.path.abspath(md)), suite.plot[0])
            if os.path.abspath(drawn) != plots[suite.name]:
                shutil.copyfile(drawn, plots[suite.name])
    kept, header = {}, None
    if os.path.exists(md):
        with open(md) as f:
            old = f.read()
        kept, header = sections(old), header_of(old)
    text = markdown(report, envs, png=png, md=md, plots=plots, kept=kept, header=header,
                    suites=suites)
    os.makedirs(os.path.dirname(os.path.abspath(md)), exist_ok=True)
    with open(md, "w") as f:
        f.write(text)
    print(f"[report] wrote {os.path.relpath(md, ROOT)}", flush=True)
    return envs


# -- the summary and the README's figures ------------------------------------------------------
def _identical(share):
    """The share of sentences whose float32 output equals stock's, as the table shows it."""
    if share is None:
        return "-"
    return "identical" if share == 1 else f"{100 * share:.1f}% identical"


def headline(report):
    """docs/benchmarks.md's summary: the features against stock fairseq on the demo pair
    (markdown), from one run of the suite; None when a benchmark it needs is not in
    `report`."""
    if any(name not in report for name in HEADLINE_NEEDS):
        return None
    rows = []
    defaults = {s["setting"]: s for s in report["defaults"]["settings"]}
    bsz = report["defaults"]["batch_size"]
    for setting in ("beam 5", "beam 5, no-repeat-ngram 3", "greedy"):
        s = defaults[setting]
        if "ngram" in setting:
            rows.append(("default generator (no flag)", f"beam 5, `--no-repeat-ngram-size 3`, "
                         f"batch {bsz}", s["speedup"], "correct blocking (stock's CPU blocker "
                         "bans nothing, fairseq #5206)"))
        else:
            rows.append(("default generator (no flag)", f"{setting}, batch {bsz}", s["speedup"],
                         _identical(s["fp32_identical_share"])))
    for row in report["engines"]["settings"]:
        if row["batch_size"] == 1:
            e = row["engines"]
            rows.append(("default generator (no flag)", f"{row['setting']}, batch 1",
                         e["fairseq_fast default"]["sent_per_s"] / e["stock fairseq"]["sent_per_s"],
                         _identical(e["fairseq_fast default"]["identical"])))
    for s in report["speculative"]["settings"]:
        if s["setting"] in ("greedy", "sampling T=1"):
            rows.append(("`--generator speculative`", f"{s['setting']}, batch {s['batch_size']}",
                         s["speedup"], "the target's distribution" if "sampling" in s["setting"]
                         else _identical(s["fp32_identical_share"])))
    bild = report["bild"]
    sweep = {(r["fallback"], r["rollback"]): r for r in bild["sweep"]}
    for s in bild["side_by_side"]:
        if s["batch_size"] == 1:
            delta = sweep.get((s["fallback"], s["rollback"]), {}).get("bleu_delta")
            rows.append(("`--generator bild`", f"fallback {s['fallback']}, rollback "
                         f"{s['rollback']:g}, batch 1", s["speedup"],
                         "-" if delta is None else f"BLEU {delta:+.2f} (not identical by design)"))
    lines = ["| feature | setting | speed, x stock fairseq | output |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {x:.2f}x | {c} |" for a, b, x, c in rows]
    latency = report["latency"]
    threads = report["defaults"].get("threads")
    ct2 = latency.get("ct2_threads")
    tried = latency.get("ct2_threads_tried") or [ct2]
    ct2 = f"{ct2} thread{'' if ct2 == 1 else 's'}" + (
        f", its fastest of {'/'.join(map(str, tried))}" if len(tried) > 1 else "")
    lines += ["", f"Against CTranslate2 ({ct2}), greedy, batch "
                  f"1, each engine in its own process: speculative `fairseq-generate` runs at "
                  f"{latency['ratio']:.2f}x CTranslate2's sentences/s.{_hub_sentence(report)}",
              "",
              f"Float32 on CPU ({threads} threads), the demo pair in `user_dir_examples/`."
              f"{_scale_sentence(report)}{_gpu_sentence(report)} "
              + DOCS_TAIL]
    return "\n".join(lines)


def _hub_sentence(report):
    """" Through the hub ...": the hub benchmark's largest target, when the run has it."""
    hub = report.get("hub")
    if not hub or not hub.get("targets"):
        return ""
    target = max(hub["targets"], key=lambda t: t["factor"])
    x = {row["engine"]: row["x_stock"] for row in target["engines"]}
    return (f" Through the hub, one sentence per `translate()` call, on the demo target widened "
            f"x{target['factor']} ({target['parameters'] / 1e6:.0f}M parameters): default "
            f"{x['fairseq_fast default']:.2f}x, speculative "
            f"{x['fairseq_fast speculative']:.2f}x stock.")


def _scale_sentence(report):
    """" Speculative decoding over the default generator ...": where it pays on a CPU, from the
    scale benchmark's greedy rows (batch 1 by target size, batch 8 as a range), when the run
    has them."""
    scales = sorted((report.get("scale") or {}).get("scales") or [], key=lambda s: s["factor"])
    sizes, batched = [], []
    for s in scales:
        rows = {(r["setting"], r["batch_size"]): r for r in s["rows"]}
        one, eight = rows.get(("greedy", 1), {}), rows.get(("greedy", 8), {})
        if "speculative" not in one:
            continue
        sizes.append((s["factor"], s["parameters"], one["speculative"]["speedup_vs_default"],
                      one.get("speculative_big", {}).get("speedup_vs_default")))
        batched += [eight[k]["speedup_vs_default"] for k in ("speculative", "speculative_big")
                    if k in eight]
    if not sizes:
        return ""
    text = (" Speculative decoding over the default generator, greedy batch 1, by target size "
            f"(the demo target widened {', '.join(f'x{f}' for f, _, _, _ in sizes)}: "
            f"{', '.join(f'{p / 1e6:.3g}M' for _, p, _, _ in sizes)} parameters): "
            f"{', '.join(f'{x:.2f}x' for _, _, x, _ in sizes)} with the demo draft")
    if all(big is not None for _, _, _, big in sizes):
        text += f", {', '.join(f'{big:.2f}x' for _, _, _, big in sizes)} with a deeper one"
    if batched:
        text += f"; at batch 8, {min(batched):.2f}-{max(batched):.2f}x"
    return text + ". On a CPU it pays where a step is bound by memory, not by overhead."


def _gpu_sentence(report):
    """" On a GPU ...": batch-1 greedy and beam-5 speedups of the last GPU run, the default
    generator with and without CUDA graphs, and why speculative decoding gains less there."""
    gpu = report.get("gpu")
    if not gpu or not gpu.get("cases"):
        return ""
    x = {"default": [], "eager": [], "speculative": [], "beam": []}
    kinds = {"fairseq_fast default": "default", "fairseq_fast default, no CUDA graphs": "eager"}
    busy = {}
    for case in gpu["cases"]:
        for row in case["rows"]:
            stock = row["engines"]["stock fairseq"]["ms_per_token"]
            for e, f in row["engines"].items():
                kind = (("beam" if e == "fairseq_fast default" else None) if row["beam"] > 1
                        else None if row["batch_size"] != 1
                        else "speculative" if "speculative" in e else kinds.get(e))
                if kind:
                    x[kind].append(stock / f["ms_per_token"])
        if case.get("step"):
            busy.setdefault(case["factor"], []).append(case["step"]["lean step"]["kernel_busy_ms"])

    def span(kind):
        return f"{min(x[kind]):.2f}-{max(x[kind]):.2f}x"
    dtypes = " and ".join(dict.fromkeys(c["dtype"] for c in gpu["cases"]))
    sizes = ", ".join(f"x{f}" for f in dict.fromkeys(c["factor"] for c in gpu["cases"]))
    text = (f" On a GPU ({gpu['device']}, {dtypes}, targets {sizes}), greedy batch 1 is "
            f"{span('default')} stock with the default generator, whose decoder calls replay "
            f"CUDA graphs")
    if x["eager"]:
        text += f" ({span('eager')} with them off)"
    text += f", and {span('speculative')} with speculative decoding"
    if x["beam"]:
        text += f"; beam 5 at batch 32 is {span('beam')}"
    if len(busy) > 1:
        small, large = min(busy), max(busy)
        text += (f". A step's GPU time there follows its kernel count more than its size "
                 f"({min(busy[small]):.2f} ms at x{small}, {min(busy[large]):.2f} ms at "
                 f"x{large}), so a draft step costs most of a target step")
    return text + "."


def shapes_headline(report, env):
    """The README's first figures, from the model-shapes run (scripts/benchmark_shapes.py): by
    model and setting, stock's and the plugin's generation time, on the machine `env` names;
    None without that run."""
    data = report.get("shapes")
    if not data or not data.get("shapes"):
        return None
    benchmark_shapes = script_module("benchmark_shapes")

    machine = env.get("cpu") or "a CPU"
    if env.get("isa"):
        machine += f" ({env['isa']})"
    ct2 = benchmark_shapes.ct2_names(data)
    kinds = " / ".join(name.split()[-1] for name in ct2)
    lines = [f"`fairseq-generate` with and without the plugin, generation time as it prints it, "
             f"on {machine} with {data['threads']} threads: random-weight checkpoints with the "
             f"architectures and dictionaries of these models, stored in float16 as released "
             f"(float32 on the CPU)"
             + (f"; CTranslate2 on the same checkpoints, converted by its own converter, in the "
                f"same turns ({kinds})." if ct2 else "."), "",
             "| model | setting | stock ms/token | fairseq_fast ms/token | x stock | "
             + (f"CTranslate2 {kinds} ms/token | " if ct2 else "") + "output |",
             "|---|---|---|---|---|" + ("---|" if ct2 else "") + "---|"]
    for shape in data["shapes"]:
        for row in shape["rows"]:
            stock = row["engines"][benchmark_shapes.STOCK]
            ours = row["engines"][benchmark_shapes.PLUGIN]
            if ours["identical"] is None:
                output = "correct blocking (stock's CPU blocker bans nothing, fairseq #5206)"
            else:
                output = _identical(ours["identical"])
            others = benchmark_shapes.per_engine(row["engines"], ct2,
                                           lambda e: format(e["ms_token"], ".1f"))
            lines.append(f"| {shape['name']} ({shape['parameters'] / 1e6:,.0f}M) | "
                         f"{row['setting']} | {stock['ms_token']:.1f} | {ours['ms_token']:.1f} | "
                         f"{ours['x_stock']:.2f}x | " + (f"{others} | " if ct2 else "")
                         + f"{output} |")
    return "\n".join(lines)


def update_readme(report, envs, readme=README):
    """Rewrite the README's first figures from a full run of the model-shapes benchmark;
    otherwise leave them and say why."""
    env = envs.get("shapes")
    text = shapes_headline(report, env or {})
    if text is None or env is None or env.get("quick"):
        why = ("no shapes run" if text is None else "a --quick run" if env and env.get("quick")
               else "its run was not recorded (no shapes.env.json)")
        print(f"[report] README's first figures left as they are ({why})", flush=True)
        return False
    return _replace_block(readme, SHAPES_START, SHAPES_END, text, "first figures")


def _replace_block(readme, start, end, text, what):
    """Put `text` between the README's `start` and `end` markers; False where it has none. A
    block whose markers stand on lines of their own stays so; one inside a line (a figure in a
    sentence) stays inside it."""
    with open(readme) as f:
        old = f.read()
    pattern = re.escape(start) + r".*?" + re.escape(end)
    found = re.search(pattern, old, re.S)
    if not found:
        print(f"[report] README has no {start} block; {what} not written")
        return False
    gap = "\n" if found.group(0).startswith(start + "\n") else ""
    with open(readme, "w") as f:
        f.write(re.sub(pattern, lambda _: f"{start}{gap}{text}{gap}{end}", old, count=1,
                       flags=re.S))
    print(f"[report] rewrote the README's {what}", flush=True)
    return True


def draft_sentence(report):
    """The README's "Getting a draft" figures: what `fairseq-fast-draft --hours H` made of the
    demo target, against the hand-made drafts (the draft benchmark); None without it."""
    benchmark_draft = script_module("benchmark_draft")

    draft = report.get("draft")
    if not draft or "translation" not in draft:
        return None
    rows = {name: (alpha, speeds) for name, alpha, speeds in
            benchmark_draft.summary_rows(draft, "translation")}
    made = draft.get("made", {})
    alpha, speeds = rows["fairseq-fast-draft"]
    minutes = made.get("wall_seconds") or draft.get("made_seconds")
    targets = sorted({t for t, b in speeds if b == 1}, key=lambda t: int(t[1:]))
    hand = ", ".join(f"{a:.3f}" for name, (a, _) in rows.items() if "hand-made" in name)
    text = (f"On {draft.get('threads', 2)} CPU threads, `fairseq-fast-draft --hours "
            f"{draft['hours']:g}` on the demo target and its training data took "
            + (f"{minutes / 60:.0f} minutes" if minutes else "its time (not recorded)")
            + f"; its draft keeps α {alpha:.3f} (the hand-made drafts': {hand}) and makes "
            f"speculative decoding "
            + ", ".join(f"{speeds[(t, 1)]:.2f}x" for t in targets)
            + " the default generator at batch 1 on the demo target widened "
            + ", ".join(targets))
    for name, (_, wide) in rows.items():
        if name.startswith("fairseq-fast-draft widened "):
            factor = name.rsplit(" ", 1)[1]
            text += (f"; made from the {factor} target itself (its first decoder layers at its "
                     f"width, its encoder shared), {wide[(factor, 1)]:.2f}x")
    return text + " (docs/benchmarks.md's draft section)."


def draft_lm_figures(report):
    """The README's figures for a draft of a language model (the draftlm benchmark), which
    stand inside its sentence; None without them."""
    benchmark_draft = script_module("benchmark_draft")

    data = report.get("draftlm")
    if not data or "lm" not in data:
        return None
    alpha, speeds = benchmark_draft.summary_rows(data, "lm")[0][1:]
    return f"α {alpha:.3f}, {speeds[('x1', 1)]:.2f}x at batch 1"


def draft_free_sentence(report):
    """The README's figures for --draft-method ngram and layers (the draftfree benchmark);
    None without it."""
    data = report.get("draftfree")
    if not data or not data.get("rows"):
        return None
    rows = {(r["setting"], r["batch_size"], r["engine"]): r for r in data["rows"]}
    fmt = lambda setting, batch, engine: (  # noqa: E731
        f"{rows[(setting, batch, engine)]['speed_over_default']:.2f}x"
        if (setting, batch, engine) in rows else "-")

    def widest(prefix):
        """the setting `prefix`F with the largest F, None without one"""
        return max((r["setting"] for r in data["rows"] if r["setting"].startswith(prefix)),
                   key=lambda t: int(t[len(prefix):]), default=None)

    wide, copy_wide = widest("mt x"), widest("copy x")
    model = ("an English denoising model (its output copies most of its input; "
             "`scripts/copy_pair.py`)")
    batches = lambda setting: (  # noqa: E731
        f"{fmt(setting, 1, 'ngram, adaptive')} at batch 1 and "
        f"{fmt(setting, 8, 'ngram, adaptive')} at batch 8")
    copy = f"{batches('copy')} on {model}"
    if copy_wide:  # the model at a real size first
        factor = int(copy_wide[6:])
        copy = (f"{batches(copy_wide)} on {model} widened x{factor} (the same outputs from "
                f"about {factor * factor} times the weights), "
                f"{fmt('copy', 1, 'ngram, adaptive')} and {fmt('copy', 8, 'ngram, adaptive')} "
                f"at its own size")
    text = (f"On {data.get('threads', 2)} CPU threads, greedy, with `--adaptive-draft-len`, over "
            f"the default generator: `ngram` {copy}, "
            f"{fmt('long', 1, 'ngram, adaptive')} on inputs of several hundred tokens, "
            f"{fmt('mt x1', 1, 'ngram, adaptive')} on the demo Spanish→English pair")
    if wide and wide != "mt x1":
        text += f" ({fmt(wide, 1, 'ngram, adaptive')} widened {wide[3:]})"
    text += (f"; `layers` {fmt('copy', 1, 'layers, adaptive')} on the denoiser"
             + (f", {fmt(wide, 1, 'layers, adaptive')} on the demo target widened {wide[3:]}"
                if wide and wide != "mt x1" else ""))
    shares = [rows.get(key, {}).get("plain_share") for key in (("copy", 1, "ngram, adaptive"),
                                                               ("copy", 1, "layers, adaptive"))]
    if all(share is not None for share in shares):
        text += (f". Part of each speed-up is plain greedy steps, which the schedule takes "
                 f"where drafting does not pay: {100 * shares[0]:.0f}% of the `ngram` tokens "
                 f"on the denoiser, {100 * shares[1]:.0f}% of the `layers` ones")
    return text + " (docs/benchmarks.md's draftfree section)."


def update_readme_draft(report, envs, readme=README):
    """Rewrite the README's "Getting a draft" figures from a full run of the draft benchmark
    (and of the draftlm one), and its draft-free figures from a full run of the draftfree
    benchmark."""
    written = False
    for name, sentence, start, end, what in (
            ("draft", draft_sentence, DRAFT_START, DRAFT_END, "draft figures"),
            ("draftlm", draft_lm_figures, DRAFT_LM_START, DRAFT_LM_END,
             "language-model draft figures"),
            ("draftfree", draft_free_sentence, DRAFT_FREE_START, DRAFT_FREE_END,
             "draft-free figures")):
        text = sentence(report)
        if text is None or envs.get(name, {}).get("quick") or name not in envs:
            continue
        written |= _replace_block(readme, start, end, text, what)
    return written


def plot(report, png):
    """The summary plot, from a run that has the engines benchmark (its left panel); else the
    plot is left as it is."""
    if "engines" not in report:
        print(f"[report] {os.path.relpath(png, ROOT)} left as it is (no engines benchmark in "
              f"this run)", flush=True)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5))
    engines = report.get("engines", {}).get("settings", [])
    names = ["stock fairseq", "fairseq_fast default", "fairseq_fast speculative", "CTranslate2"]
    width = 0.2
    for k, engine in enumerate(names):
        xs, ys = [], []
        for j, row in enumerate(engines):
            if engine in row["engines"]:
                xs.append(j + (k - 1.5) * width)
                ys.append(row["engines"][engine]["sent_per_s"])
        ax1.bar(xs, ys, width, label=engine)
    ax1.set_xticks(range(len(engines)))
    ax1.set_xticklabels([f"{r['setting']}\nbatch {r['batch_size']}" for r in engines])
    threads = report.get("engines", {}).get("threads", 2)
    ct2 = report.get("engines", {}).get("ct2_threads", threads)
    ct2 = "/".join(map(str, ct2)) if isinstance(ct2, list) else ct2
    ax1.set_ylabel(f"sentences/s (fp32; torch {threads} threads, CTranslate2 best of {ct2})")
    ax1.set_yscale("log")
    ax1.set_title("demo target: stock fairseq, fairseq_fast, CTranslate2")
    ax1.legend(fontsize=8)
    rows = speedups(report)
    ax2.barh([label for label, _ in rows], [x for _, x in rows], color="tab:green")
    ax2.axvline(1.0, color="black", linewidth=0.8)
    ax2.set_xlabel("speedup vs stock fairseq (same run, alternating, medians)")
    ax2.invert_yaxis()
    ax2.tick_params(axis="y", labelsize=7)
    ax2.set_title("fairseq_fast features vs stock")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=110)


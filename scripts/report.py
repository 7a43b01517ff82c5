#!/usr/bin/env python3
"""The whole benchmark suite, one command: JSON, a plot, docs/benchmarks.md, the README's figures.

    python scripts/report.py [--quick] [--only engines,pipeline,...] [--out work/report]
                             [--ct2-threads 1,2]
    python scripts/report.py --list        # the benchmarks, in the order they run

Runs one benchmark after another (never two at once: they time each other otherwise), each in
its own process, each writing its JSON into --out. benchmarks/suites.py declares them: each
one's script, its arguments for a full and a --quick run, its plot, and whether
docs/benchmarks.md shows it among what users get or in the appendix of diagnostics.

The gpu step runs only where torch sees a CUDA GPU; elsewhere it is skipped with a line. Its JSON
and environment are also copied into docs/gpu/, and a run without them in --out renders the
copies there: the GPU figures come from the last run on a GPU, under its own machine line.

Then it merges what is in --out into report.json, plots docs/report.png, prints the summary
table and writes docs/benchmarks.md (benchmarks/render.py): a header naming the CPU, the torch /
fairseq / CTranslate2 versions and the dates the benchmarks ran (recorded in --out as
NAME.env.json when each one starts, with the commit, which stays out of the docs), the summary,
one section per benchmark, and the appendix. A rerun replaces the file; the sections of
benchmarks with no JSON in --out (an --only run) are kept as the file had them, each with its
own command line and date, and so is the header (the full run's machine; a new section says how
its own differs). Never edit it by hand. When --out holds a full (not --quick) run of every
benchmark the summary needs, the summary is rewritten from the same JSONs. The README's figures
come from full runs too: its first table (between `<!-- shapes:start -->` / `<!-- shapes:end -->`)
from the shapes step, its "Getting a draft" figures (between `<!-- draft:start -->` /
`<!-- draft:end -->`, and `<!-- draftlm:start -->` / `<!-- draftlm:end -->` inside a sentence)
from the draft (draftlm) step, and its draft-free figures from the draftfree step, so the README
only quotes figures this script wrote.

    python scripts/report.py --write-only [--out work/report]   # rewrite the plot, the file
                                                                # and the README's figures only

--write-only with no JSON in --out lays the file out again from its own sections.

--quick uses fewer sentences and repeats (a smoke run; its figures are noisier, and the header
says so). A full run takes hours on a CPU; the draft, draftlm and draftfree steps also train
their models when they are missing (each an hour or two).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import render  # noqa: E402
from benchmarks.probes import environment  # noqa: E402
from benchmarks.suites import KEPT, SUITES, find, names  # noqa: E402


def _runs_here(suite):
    """Whether `suite` can run here (one that needs a GPU needs torch to see one)."""
    if not suite.gpu:
        return True
    import torch

    return torch.cuda.is_available()


def run_suite(chosen, out, quick, ct2_threads=None, suites=SUITES):
    """Run the benchmarks named in `chosen`, in the suite's order, each writing its JSON and
    NAME.env.json into `out`; a GPU benchmark's full run is also kept in docs/gpu/."""
    for suite in suites:
        if suite.name not in chosen:
            continue
        if not _runs_here(suite):
            print(f"[report] {suite.name}: skipped: torch sees no CUDA GPU (the docs keep the "
                  f"last GPU run's figures, {os.path.relpath(KEPT, ROOT)}/)", flush=True)
            continue
        args = suite.command(sys.executable, out, quick, ct2_threads)
        shown = " ".join(os.path.relpath(a, ROOT) if os.path.isabs(a) else a
                         for a in ["python", *args[1:]])
        with open(os.path.join(out, f"{suite.name}.env.json"), "w") as f:
            json.dump({**environment(), "quick": quick, "command": shown}, f, indent=1)
        print(f"[report] {suite.name}: {' '.join(args[1:])}", flush=True)
        subprocess.run(args, check=True)
        if suite.gpu and not quick:  # the environment without the commit (never in docs/)
            os.makedirs(KEPT, exist_ok=True)
            with open(os.path.join(out, suite.name + ".json")) as f:
                data = f.read()
            with open(os.path.join(KEPT, suite.name + ".json"), "w") as f:
                f.write(data)
            with open(os.path.join(out, suite.name + ".env.json")) as f:
                env = {k: v for k, v in json.load(f).items() if k != "commit"}
            with open(os.path.join(KEPT, suite.name + ".env.json"), "w") as f:
                json.dump(env, f, indent=1)


def list_suites():
    for suite in SUITES:
        title = render._first_docstring_line(suite.script)
        print(f"{suite.name:12} {suite.part:9} {suite.script:28} {title}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="fewer sentences and repeats: a smoke run, its figures noisy")
    ap.add_argument("--only", default=",".join(names()),
                    help="the benchmarks to run, comma-separated (default: all; --list)")
    ap.add_argument("--list", action="store_true", help="print the benchmarks and exit")
    ap.add_argument("--no-run", action="store_true",
                    help="run nothing: merge what is in --out, plot, print, write --md")
    ap.add_argument("--write-only", action="store_true",
                    help="run nothing: rewrite --png, --md and the README's figures "
                         "from the JSONs in --out (with none, lay --md out again from its own "
                         "sections)")
    ap.add_argument("--ct2-threads", default=None,
                    help="CTranslate2's intra_threads counts in the engines, latency and scale "
                         "steps, e.g. 1,2 (default: each script's own, 1 and torch's thread "
                         "count). Each step runs CTranslate2 at every count and reports it at "
                         "its fastest")
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "report"))
    ap.add_argument("--png", default=os.path.join(ROOT, "docs", "report.png"))
    ap.add_argument("--md", default=render.MARKDOWN, help="the markdown file of tables to write")
    ap.add_argument("--readme", default=render.README,
                    help="the README whose figures a full run rewrites")
    args = ap.parse_args()
    if args.list:
        list_suites()
        return
    if args.write_only:
        report = render.load(args.out)
        if not report and not os.path.exists(args.md):
            sys.exit(f"report: no benchmark JSON in {args.out} and no {args.md} to lay out")
        if report:
            render.plot(report, args.png)
        envs = render.write_markdown(report, args.out, args.md, args.png)
        render.update_readme(report, envs, args.readme)
        render.update_readme_draft(report, envs, args.readme)
        return
    os.makedirs(args.out, exist_ok=True)
    unknown = [name for name in args.only.split(",") if find(name) is None]
    if unknown:
        sys.exit(f"report: unknown --only {','.join(sorted(unknown))} (--list names them)")
    if not args.no_run:
        run_suite(args.only.split(","), args.out, args.quick, args.ct2_threads)
    report = render.load(args.out)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    render.plot(report, args.png)
    render.print_tables(report)
    envs = render.write_markdown(report, args.out, args.md, args.png)
    render.update_readme(report, envs, args.readme)
    render.update_readme_draft(report, envs, args.readme)


if __name__ == "__main__":
    main()

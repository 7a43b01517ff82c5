#!/usr/bin/env python3
"""The README's flags table, generated from fairseq_fast/options.py's FastGenerationConfig.

    python scripts/flags_table.py            # print the table
    python scripts/flags_table.py --write    # replace the table between the README's markers

One row per dataclass field, in the dataclass's order: the flag as fairseq's argparse spells it
(`--draft-path`), its default, and its help text verbatim. tests/test_docs.py checks that the
README holds exactly this output between `<!-- flags:start -->` and `<!-- flags:end -->`, so
the table and the options cannot disagree.
"""
import argparse
import os
import re
import sys
from dataclasses import MISSING, fields

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
START, END = "<!-- flags:start -->", "<!-- flags:end -->"


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def default_cell(value) -> str:
    if value is None or value is MISSING:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`"


def cell(text: str) -> str:
    """One line of a markdown table cell: whitespace collapsed, pipes escaped."""
    return re.sub(r"\s+", " ", text).strip().replace("|", "\\|")


def rows():
    """(flag, default cell, help) per public field of FastGenerationConfig."""
    sys.path.insert(0, ROOT)
    from fairseq_fast.options import FastGenerationConfig

    out = []
    for f in fields(FastGenerationConfig):
        if f.name.startswith("_"):
            continue
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else None)
        out.append((flag(f.name), default_cell(default), cell(f.metadata.get("help", ""))))
    return out


def table() -> str:
    lines = ["| flag | default | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | {default} | {text} |" for name, default, text in rows()]
    return "\n".join(lines)


def between_markers(text: str):
    """The README's current table (the text between the markers), or None without markers."""
    found = re.search(re.escape(START) + r"\n?(.*?)\n?" + re.escape(END), text, re.S)
    return found.group(1) if found else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true",
                    help=f"replace the table between {START} and {END} in README.md")
    args = ap.parse_args()
    new = table()
    if not args.write:
        print(new)
        return
    with open(README) as f:
        text = f.read()
    if between_markers(text) is None:
        sys.exit(f"flags_table: README.md has no {START} ... {END} block")
    text = re.sub(re.escape(START) + r".*?" + re.escape(END),
                  lambda _: f"{START}\n{new}\n{END}", text, count=1, flags=re.S)
    with open(README, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

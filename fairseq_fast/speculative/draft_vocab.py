"""A frequency-ranked shortlist for the draft's output layer (FR-Spec, Zhao et al. 2025).

A small draft spends most of a decoding step on its output projection (vocabulary x width
weights; 4,008 x 128 of the demo draft's ~0.7 M per step). Scoring only the N most frequent
target tokens shrinks that read N / V-fold. Output does not change: the draft only proposes,
and the target verifies every proposal. Greedy output stays the target's own; sampling stays
exact because q (zero outside the shortlist) is the distribution the draft really sampled
from, and the residual norm(max(0, p - q)) covers every token outside it. What changes is how
often a draft is kept: a target token outside the shortlist is never proposed.

    vocab = shortlist(tgt_dict, 1536, counts_path="counts.en.txt")   # sorted LongTensor | None

Ranking: the counts file (fairseq's dictionary format, `symbol count` per line, as
`fairseq-preprocess --only-source --dict-only` writes for the target side of the training
data), else the target dictionary's own order (fairseq writes dictionaries sorted by count;
with a joined source/target dictionary that order counts the source language too). The
dictionary's special symbols (BOS, pad, EOS, unk) are always in the shortlist.
"""
import io
import os
import re
import weakref
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from fairseq_fast.errors import UserError


def _text(path: str) -> str:
    """The file's text, in UTF-8 as fairseq writes (and reads) dictionaries: the symbols must
    match the target dictionary's, so other encodings are refused, not guessed."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise UserError(f"--draft-vocab-counts {path}: cannot read it "
                        f"({e.strerror or type(e).__name__})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise UserError(f"--draft-vocab-counts {path}: not UTF-8 (byte 0x{raw[e.start]:02x} at "
                        f"offset {e.start}, line {line}); write it in UTF-8, as fairseq writes "
                        f"the dictionary its symbols must match") from None


def _read_counts(path: str, tgt_dict) -> Tensor:
    """Per target-dictionary index, the count the file gives its symbol (0 if absent)."""
    if not os.path.isfile(path):
        raise UserError(f"--draft-vocab-counts {path}: no such file")
    counts = torch.zeros(len(tgt_dict), dtype=torch.long)
    known = 0
    with io.StringIO(_text(path), newline=None) as f:  # lines as a file opened as text
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.endswith(" #fairseq:overwrite"):  # fairseq's own flag for a symbol
                line = line[: -len(" #fairseq:overwrite")]
            if line.strip() == "":
                continue
            parts = line.rsplit(" ", 1)
            if len(parts) != 2 or not re.fullmatch(r"-?[0-9]{1,18}", parts[1]):
                raise UserError(f"--draft-vocab-counts {path}, line {number}: expected "
                                f"'symbol count', got {line.strip()[:40]!r}")
            index = tgt_dict.indices.get(parts[0])
            if index is not None:
                counts[index] = int(parts[1])
                known += 1
    if known == 0:
        raise UserError(f"--draft-vocab-counts {path}: none of its symbols is in the target "
                        f"dictionary")
    return counts


# id(dictionary) -> (a weak reference to it, {(path, mtime, size, dictionary length): counts})
_counts_cache: Dict[int, Tuple[weakref.ref, Dict[tuple, Tensor]]] = {}


def _counts(path: str, tgt_dict) -> Tensor:
    """_read_counts, kept per dictionary and file (as it is on disk: path, modification time,
    size): the hub builds a generator, so a shortlist, per translate() call, and reading a
    counts file costs milliseconds, a sizeable share of a short sentence's decoding."""
    try:
        stat = os.stat(path)
    except OSError:
        return _read_counts(path, tgt_dict)  # the one-line error
    for key in [k for k, (ref, _) in _counts_cache.items() if ref() is None]:
        del _counts_cache[key]  # dictionaries gone
    ref, per_dict = _counts_cache.get(id(tgt_dict), (None, None))
    if ref is None or ref() is not tgt_dict:
        per_dict = {}
        _counts_cache[id(tgt_dict)] = (weakref.ref(tgt_dict), per_dict)
    key = (os.path.abspath(path), stat.st_mtime_ns, stat.st_size, len(tgt_dict))
    if key not in per_dict:
        per_dict[key] = _read_counts(path, tgt_dict)
    return per_dict[key]


def shortlist(tgt_dict, n: int, counts_path: Optional[str] = None) -> Optional[Tensor]:
    """Indices (sorted) of the n target tokens the draft scores, or None for all of them."""
    if n < 0:
        raise UserError(f"--draft-vocab must be >= 0 (got {n})")
    # a counts file is read (and its errors reported) even when n leaves it unused
    counts = None if counts_path is None else _counts(counts_path, tgt_dict)
    size = len(tgt_dict)
    if n == 0 or n >= size:
        return None
    special = tgt_dict.nspecial
    if n <= special:
        raise UserError(f"--draft-vocab {n} leaves no room beside the dictionary's {special} "
                        f"special symbols")
    if counts is None:
        rank = torch.arange(size)  # the dictionary's own (count) order
    else:  # most frequent first; ties (and unseen tokens) in dictionary order
        rank = torch.argsort(-counts, stable=True)
    rank = rank[rank >= special]
    chosen = torch.cat([torch.arange(special), rank[: n - special]])
    return chosen.sort().values

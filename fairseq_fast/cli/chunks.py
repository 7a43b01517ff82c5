"""The work of one generation job, cut into chunks, and the folder that records it.

A chunk is a run of whole batches of fairseq's batch list (the batches `task.get_batch_iterator`
builds, sentences sorted by length), so every sentence is generated in the batch a single
process would put it in, and its output is the same. `plan` closes a chunk once it holds
`chunk_tokens` tokens as fairseq counts them for --max-tokens (rows x longest sentence, padding
included): chunks of equal token cost, whatever the sentences' lengths.

The work folder:

    manifest.json        the job: its settings, the batches' digest, the chunks (written first)
    chunk-000017.txt     the chunk's output lines, byte for byte what fairseq-generate prints
    chunk-000017.json    the chunk's record, written last: its sentences, tokens, seconds, the
                         scorer's statistics and the size of its text; present = chunk done
    *.tmp-R-PID          a chunk that rank R (process PID) is writing, or was when it died

Both files of a chunk are written under temporary names, flushed to disk and renamed into place,
text first: a rank killed at any point leaves either a finished chunk or temporary files, which a
resumed job deletes before it regenerates the chunk. `merge` writes the chunks' text in chunk
order, then the scorer's line from the merged statistics.
"""
import glob
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from fairseq_fast.errors import UserError

MANIFEST = "manifest.json"
VERSION = 1
MAX_CHUNK_TOKENS = 50_000  # the automatic size's upper bound: small enough to lose little work
CHUNKS_PER_RANK = 16  # the automatic size's aim: the last chunks are short next to a share


@dataclass
class Chunk:
    index: int
    first: int  # its first batch (position in fairseq's batch list)
    end: int  # one past its last batch
    sentences: int
    tokens: int  # padded tokens, as --max-tokens counts them


def batch_tokens(batches, num_tokens: Callable) -> np.ndarray:
    """Each batch's padded tokens: rows x its longest sentence (`num_tokens`: the dataset's
    num_tokens_vec, or a per-index fallback)."""
    if not batches:
        return np.zeros(0, dtype=np.int64)
    flat = np.concatenate([np.asarray(b, dtype=np.int64) for b in batches])
    sizes = np.asarray(num_tokens(flat), dtype=np.int64)
    starts = np.cumsum([0] + [len(b) for b in batches[:-1]])
    return np.maximum.reduceat(sizes, starts) * np.array([len(b) for b in batches])


def automatic_chunk_tokens(costs: np.ndarray, ranks: int) -> int:
    """About CHUNKS_PER_RANK chunks per rank, at most MAX_CHUNK_TOKENS each."""
    share = int(costs.sum()) // max(1, CHUNKS_PER_RANK * ranks)
    return max(1, min(MAX_CHUNK_TOKENS, share))


def plan(batches, costs: np.ndarray, chunk_tokens: int) -> List[Chunk]:
    chunks, first, tokens, sentences = [], 0, 0, 0
    for b, batch in enumerate(batches):
        tokens += int(costs[b])
        sentences += len(batch)
        if tokens >= chunk_tokens or b == len(batches) - 1:
            chunks.append(Chunk(len(chunks), first, b + 1, sentences, tokens))
            first, tokens, sentences = b + 1, 0, 0
    return chunks


def queue(chunks: List[Chunk], done=()) -> List[int]:
    """The order the ranks take the chunks not yet done in: the longest sentences first. Batches
    run from the shortest sentences to the longest, and a token of a long sentence costs more
    (attention over more positions, fewer rows per step), so the chunks that end the job, while
    ranks run out of work, are the cheapest."""
    done = set(done)
    return [c.index for c in reversed(chunks) if c.index not in done]


def digest(batches) -> str:
    h = hashlib.sha1()
    for b in batches:
        h.update(np.asarray(b, dtype=np.int64).tobytes())
        h.update(b"|")
    return h.hexdigest()


# -- the folder -------------------------------------------------------------------------------
def _atomic_write(path: str, data: bytes, tag: str) -> None:
    tmp = f"{path}.tmp-{tag}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _sync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class WorkFolder:
    def __init__(self, path: str):
        self.path = path

    def text(self, index: int) -> str:
        return os.path.join(self.path, f"chunk-{index:06d}.txt")

    def record(self, index: int) -> str:
        return os.path.join(self.path, f"chunk-{index:06d}.json")

    @property
    def manifest(self) -> str:
        return os.path.join(self.path, MANIFEST)

    def create(self) -> None:
        try:
            os.makedirs(self.path, exist_ok=True)
            probe = os.path.join(self.path, f".probe-{os.getpid()}")
            with open(probe, "w"):
                pass
            os.remove(probe)
        except OSError as e:
            raise UserError(f"work folder {self.path}: {e.strerror or e}") from None

    def read_manifest(self) -> Optional[dict]:
        try:
            with open(self.manifest) as f:
                return json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise UserError(f"{self.manifest} cannot be read ({e}); remove the folder to start "
                            "again") from None

    def write_manifest(self, manifest: dict) -> None:
        _atomic_write(self.manifest, json.dumps(manifest, indent=1).encode(), f"0-{os.getpid()}")
        _sync_dir(self.path)

    def done(self) -> List[int]:
        out = []
        for path in glob.glob(os.path.join(self.path, "chunk-*.json")):
            name = os.path.basename(path)[len("chunk-"):-len(".json")]
            if name.isdigit() and os.path.exists(self.text(int(name))):
                out.append(int(name))
        return sorted(out)

    def clear_partial(self) -> int:
        """Delete what ranks left half-written (a resumed job regenerates those chunks)."""
        stale = glob.glob(os.path.join(self.path, "*.tmp-*"))
        for path in stale:
            os.remove(path)
        return len(stale)

    def remove(self) -> None:
        """The job's own files, then the folder if that leaves it empty."""
        for pattern in ("chunk-*.txt", "chunk-*.json", "*.tmp-*", "rank*-traceback.txt",
                        MANIFEST):
            for path in glob.glob(os.path.join(self.path, pattern)):
                os.remove(path)
        try:
            os.rmdir(self.path)
        except OSError:
            pass


# -- the scorer's statistics ------------------------------------------------------------------
def _wire_pairs(scored) -> list:
    return [[r if isinstance(r, str) else np.asarray(r).tolist(),
             h if isinstance(h, str) else np.asarray(h).tolist()] for r, h in scored]


def _bleu_fields(scorer) -> Optional[List[str]]:
    """The fields of fairseq's BLEU scorer's counts (sums over sentences), or None for a
    scorer whose result is not a function of per-sentence sums."""
    from fairseq.scoring.bleu import Scorer

    if type(scorer) is not Scorer:
        return None
    return [name for name, _ in scorer.stat._fields_]


class ScoreStats:
    """One chunk's contribution to the scorer: fairseq's BLEU keeps counts that add up over
    sentences, so a chunk keeps its counts; other scorers (sacrebleu, chrF, WER, ...) keep the
    chunk's (reference, hypothesis) pairs, added to one scorer in chunk order at the merge."""

    def __init__(self, new_scorer: Callable):
        self.scorer = new_scorer()
        self.fields = _bleu_fields(self.scorer)
        self.pairs: list = []

    def add(self, scored) -> None:
        if self.fields is None:
            self.pairs.extend(_wire_pairs(scored))
            return
        from fairseq_fast.cli.postprocess import add_to_scorer

        add_to_scorer(self.scorer, scored)

    def state(self) -> dict:
        if self.fields is None:
            return {"pairs": self.pairs}
        return {"bleu": {name: int(getattr(self.scorer.stat, name)) for name in self.fields}}


def add_state(scorer, state: dict) -> None:
    if "bleu" in state:
        for name, value in state["bleu"].items():
            setattr(scorer.stat, name, getattr(scorer.stat, name) + value)
        return
    for ref, hyp in state["pairs"]:
        if isinstance(ref, str):
            scorer.add_string(ref, hyp)
        else:
            scorer.add(torch.tensor(ref, dtype=torch.int32), torch.tensor(hyp, dtype=torch.int32))


# -- recording one rank's chunks -------------------------------------------------------------
class Recorder:
    """Writes the chunks one rank generates, in the order their batches arrive (`on_item`):
    ("batch", chunk, text, scored, stats) appends a batch, ("end", chunk) records the chunk."""

    def __init__(self, folder: WorkFolder, rank: int, new_scorer: Callable):
        self.folder, self.tag, self.new_scorer = folder, f"{rank}-{os.getpid()}", new_scorer
        self.rank = rank
        self.open: Optional[dict] = None
        self.recorded: List[int] = []

    def on_item(self, item) -> None:
        if item[0] == "batch":
            _, chunk, text, scored, stats = item
            self._start(chunk)
            data = text.encode("utf-8")
            self.open["file"].write(data)
            self.open["bytes"] += len(data)
            self.open["score"].add(scored)
            for key in ("sentences", "tokens", "seconds"):
                self.open[key] += stats[key]
            if stats["has_target"] is not None:
                self.open["has_target"] = stats["has_target"]
        else:
            self._start(item[1])
            self._commit()

    def _start(self, chunk: int) -> None:
        if self.open is not None and self.open["chunk"] == chunk:
            return
        assert self.open is None, "a chunk began before the previous one was recorded"
        tmp = f"{self.folder.text(chunk)}.tmp-{self.tag}"
        self.open = {"chunk": chunk, "tmp": tmp, "file": open(tmp, "wb"), "bytes": 0,
                     "score": ScoreStats(self.new_scorer), "sentences": 0, "tokens": 0,
                     "seconds": 0.0, "has_target": None}

    def _commit(self) -> None:
        o, self.open = self.open, None
        f = o["file"]
        f.flush()
        os.fsync(f.fileno())
        f.close()
        os.replace(o["tmp"], self.folder.text(o["chunk"]))
        record = {"chunk": o["chunk"], "rank": self.rank, "sentences": o["sentences"],
                  "tokens": o["tokens"], "seconds": round(o["seconds"], 6),
                  "has_target": o["has_target"], "text_bytes": o["bytes"],
                  "score": o["score"].state(), "time": time.time()}
        _atomic_write(self.folder.record(o["chunk"]), json.dumps(record).encode(), self.tag)
        _sync_dir(self.folder.path)
        self.recorded.append(o["chunk"])


# -- the merge -------------------------------------------------------------------------------
def merge(folder: WorkFolder, chunks: List[Chunk], out, scorer) -> Dict:
    """Write every chunk's text to the binary stream `out`, in chunk order, and add its
    statistics to `scorer`. Returns the totals and whether the last batch had a target (fairseq
    prints the scorer's line then)."""
    totals = {"sentences": 0, "tokens": 0, "has_target": True}  # as fairseq starts
    for chunk in chunks:
        try:
            with open(folder.record(chunk.index)) as f:
                record = json.load(f)
            size = os.path.getsize(folder.text(chunk.index))
        except (OSError, ValueError) as e:
            raise UserError(f"chunk {chunk.index} of {folder.path} is missing or damaged "
                            f"({e}); remove its two files and run again with --resume") from None
        if size != record["text_bytes"]:
            raise UserError(f"{folder.text(chunk.index)} has {size} bytes, its record says "
                            f"{record['text_bytes']}; remove its two files and run again with "
                            "--resume")
        with open(folder.text(chunk.index), "rb") as f:
            shutil.copyfileobj(f, out, 1 << 20)
        add_state(scorer, record["score"])
        totals["sentences"] += record["sentences"]
        totals["tokens"] += record["tokens"]
        if record["has_target"] is not None:
            totals["has_target"] = record["has_target"]
    return totals

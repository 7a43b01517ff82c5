"""Batches to hypotheses for the command-line tools: batch by batch, as fairseq does, or streamed
through the generator with --inflight-batching (generate_stream: finished rows are refilled from
the next batches, and each batch comes back, in order, once all its sentences are done).

fairseq-generate, fairseq-interactive and `python -m fairseq_fast.generate` each keep their own
metadata beside a batch (ids, chunks, constraints); `generated_batches` pairs it with the
batch's hypotheses and generation time.
"""
import collections
import os
import stat
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Tuple

from torch import Tensor

from fairseq_fast.errors import UserError

_END = object()  # what the stream of items gives once it has ended


@dataclass(frozen=True)
class Request:
    """What one batch asks of the generator: fairseq's sample, and what inference_step takes
    beside it."""
    sample: dict
    prefix_tokens: Optional[Tensor] = None
    constraints: Optional[Tensor] = None


def sample_request(sample: dict, prefix_size: int) -> Optional[Request]:
    """A fairseq-generate batch's Request: the first `prefix_size` target tokens forced
    (--prefix-size) and the sample's constraints; None for a sample with nothing to generate
    (no net_input)."""
    if "net_input" not in sample:
        return None
    prefix_tokens = sample["target"][:, :prefix_size] if prefix_size > 0 else None
    return Request(sample, prefix_tokens, sample.get("constraints"))


def inflight_rows(cfg, task, generator) -> int:
    """The sentences --inflight-batching keeps in flight (--batch-size); one line and exit for
    what it does not take."""
    from fairseq.tasks import FairseqTask

    if not hasattr(generator, "generate_stream"):
        raise UserError("--inflight-batching is for --generator speculative or bild, and "
                        "greedy search (--beam 1) on a model the plugin's decoder takes")
    if type(task).inference_step is not FairseqTask.inference_step:
        raise UserError(f"--inflight-batching does not support task {cfg.task._name} yet (it "
                        f"has its own inference step)")
    if not cfg.dataset.batch_size:
        raise UserError("--inflight-batching needs --batch-size: the sentences kept in flight")
    return int(cfg.dataset.batch_size)


@dataclass(frozen=True)
class ChunkBatch:
    """One batch of a fairseq-interactive chunk (--buffer-size lines): the chunk's number and
    first line id, the batch (None for a chunk with nothing to translate), and whether it is
    the chunk's last."""
    seq: int
    first_id: int
    entry: Optional[tuple]
    last: bool


class Chunks:
    """fairseq-interactive's batches, chunk after chunk, as one stream for in-flight batching:
    the sentences of the next chunk join the rows in flight while the last ones of a chunk
    finish. `ready()` (generate_stream's): whether the next batch can be had without waiting
    for input. It can where the chunk at hand has batches left, and always where the input is
    a regular file (reading it never waits). On a terminal or a pipe the next chunk is read
    once the rows in flight have finished: a chunk's answers come out before more input is
    awaited, as without the flag."""

    def __init__(self, buffers: Iterable[list], batches: Callable[[list], Iterable],
                 input_is_file: bool):
        self.buffers, self.batches, self.input_is_file = buffers, batches, input_is_file
        self.left = 0  # batches of the chunk at hand not yet taken

    def __iter__(self) -> Iterator[ChunkBatch]:
        first_id = 0
        for seq, lines in enumerate(self.buffers):
            entries = list(self.batches(lines))
            self.left = len(entries)
            if not entries:
                yield ChunkBatch(seq, first_id, None, True)
            for entry in entries:
                self.left -= 1
                yield ChunkBatch(seq, first_id, entry, self.left == 0)
            first_id += len(lines)

    def ready(self) -> bool:
        return self.left > 0 or self.input_is_file


def input_is_file(path: str) -> bool:
    """Whether fairseq-interactive's --input (`-`: standard input) is a regular file."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode if path == "-" else os.stat(path).st_mode
    except (OSError, ValueError, AttributeError):  # no usable stdin: read as a stream
        return False
    return stat.S_ISREG(mode)


def generated_batches(generator, task, models, items: Iterable,
                      request: Callable[[object], Optional[Request]], rows: int = 0,
                      before_batch: Optional[Callable[[object], None]] = None,
                      ready: Optional[Callable[[], bool]] = None
                      ) -> Iterator[Tuple[object, Optional[list], float]]:
    """(item, hypotheses, seconds) for each of `items`, in their order. `request(item)` is the
    batch's Request, or None where it has nothing to generate (hypotheses None, 0 seconds).

    rows 0: batch by batch through task.inference_step, `before_batch(item)` called just before
    each (to seed it); seconds: the batch's own. rows > 0: streamed through
    generator.generate_stream with up to `rows` sentences in flight (constraints are not
    passed; `ready`: whether the next item can be had without waiting, as generate_stream
    takes it); seconds: those since the batch before it was done, less the time spent taking
    items (loading batches, waiting for input), which batch by batch is not counted either."""
    if not rows:
        for item in items:
            req = request(item)
            if req is None:
                yield item, None, 0.0
                continue
            if before_batch is not None:
                before_batch(item)
            start = time.perf_counter()
            hypos = task.inference_step(generator, models, req.sample,
                                        prefix_tokens=req.prefix_tokens,
                                        constraints=req.constraints)
            yield item, hypos, time.perf_counter() - start
        return
    pulled = collections.deque()  # (item, its sample or None): every item the stream took
    taking = 0.0  # seconds spent taking items, all told

    def stream():
        nonlocal taking
        source = iter(items)
        while True:
            start = time.perf_counter()
            item = next(source, _END)
            req = None if item is _END else request(item)
            taking += time.perf_counter() - start
            if item is _END:
                return
            pulled.append((item, None if req is None else req.sample))
            if req is not None:
                yield req.sample, req.prefix_tokens

    start, taken = time.perf_counter(), taking
    for sample, hypos in generator.generate_stream(stream(), rows, ready=ready):
        seconds = time.perf_counter() - start - (taking - taken)
        while pulled[0][1] is not sample:  # items with nothing to generate, before it
            yield pulled.popleft()[0], None, 0.0
        yield pulled.popleft()[0], hypos, seconds
        start, taken = time.perf_counter(), taking
    while pulled:
        yield pulled.popleft()[0], None, 0.0

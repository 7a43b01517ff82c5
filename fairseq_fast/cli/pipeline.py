"""--postprocess-workers N: post-processing and writing overlap generation.

    main loop --Packed--> N worker processes --text--> writer thread --> output file, scorer
    (generates)           (postprocess.py)             (generation order)

The main loop hands each generated batch over (`put`) and goes on generating; the workers turn
batches into text; the writer emits them in the order they were generated and feeds the scorer.
At most 2N+2 batches are in flight: when the workers fall behind, `put` waits. With N = 0
(fairseq-generate --inflight-batching without --postprocess-workers) the writer thread formats
each batch itself.

Faults end the run within seconds and lose nothing that was generated:
- a worker dies: the writer formats the batches the pool can no longer deliver itself, writes
  everything generated so far, and `problem` says what happened; the main loop stops;
- the output closes (a broken pipe) or fails (a full disk): nothing more is written, the run
  stops at once, and the count of sentences written is exact: the writer writes each batch's
  bytes to the output's descriptor itself (no buffer in between) and counts the sentences whose
  text was written completely;
- Ctrl-C: the caller stops generating and calls `close()`, which writes what was generated.
Workers ignore SIGINT (Ctrl-C reaches the whole process group; the main process decides).
"""
import multiprocessing
import os
import queue
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, List, Optional, Tuple

from fairseq_fast.cli.output import describe, silence

_lines = None  # the formatter, in each worker process


def _start_worker(lines):
    global _lines
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch

    torch.set_num_threads(1)
    _lines = lines


def _ready():
    return True


def _format(packed):
    return _lines(packed)


class Pipeline:
    def __init__(self, workers: int, lines: Callable, output, on_scored: Callable):
        self.lines, self.output, self.on_scored = lines, output, on_scored
        # fork: workers inherit the dictionaries, BPE and tokenizer (some of which cannot be
        # pickled); fork now, before the writer thread exists and while no lock is held
        self.pool = None  # none: the writer thread formats each batch itself
        if workers:
            self.pool = ProcessPoolExecutor(workers,
                                            mp_context=multiprocessing.get_context("fork"),
                                            initializer=_start_worker, initargs=(lines,))
            self.pool.submit(_ready).result()
        self.pending: queue.Queue = queue.Queue(maxsize=2 * workers + 2)
        self.problem: Optional[Tuple[str, int]] = None  # (message, exit status), first fault
        self.handed = 0  # sentences handed over
        self.sentences = 0  # sentences written
        self.output_closed = False
        self.fd = _descriptor(output)  # written directly when it has one (exact counts)
        self.writer = threading.Thread(target=self._write_in_order, name="fairseq_fast-writer",
                                       daemon=True)
        self.writer.start()

    def put(self, packed) -> None:
        """Hand over one generated batch (waits while too many are in flight)."""
        future = None
        if self.problem is None and self.pool is not None:
            try:
                future = self.pool.submit(_format, packed)
            except BrokenProcessPool:
                self._fail("a post-processing worker died", 1)
        self.pending.put((future, packed))
        self.handed += packed.sentences

    def written(self) -> str:
        """'all K sentences' or 'only W of the K sentences' (after close())."""
        if self.sentences == self.handed:
            return f"all {_sentences(self.handed)}"
        return f"only {self.sentences} of the {_sentences(self.handed)}"

    def close(self) -> None:
        """Write everything handed over, then stop the workers."""
        self.pending.put(None)
        self.writer.join()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def kill(self) -> None:
        """Stop the workers now (a second Ctrl-C)."""
        for process in list(getattr(self.pool, "_processes", {}).values()):
            process.kill()

    # -- the writer thread ---------------------------------------------------------------------
    def _write_in_order(self):
        while True:
            item = self.pending.get()
            if item is None:
                return
            if self.output_closed:
                continue
            try:
                self._write(*item)
            except BaseException as e:  # keep draining: the main loop must never block on put
                self.output_closed = True  # what is written stays a prefix of the output
                self._fail(f"writing the output failed: {type(e).__name__}: {e}", 1)

    def _write(self, future, packed):
        chunks, scored = self._text(future, packed)
        complete, error = self._emit(chunks)
        self.sentences += complete
        if error is not None:
            self.output_closed = True
            self._fail(f"{describe(error)} after {_sentences(self.sentences)}", 1)
            silence(self.output)
            return
        self.on_scored(scored)

    def _emit(self, chunks: List[str]):
        """Write one batch's sentences; (how many were written completely, the error that
        stopped the writing or None)."""
        if self.fd is None:
            try:
                self.output.write("".join(chunks))
                self.output.flush()
            except OSError as e:
                return 0, e
            return len(chunks), None
        encoding = getattr(self.output, "encoding", None) or "utf-8"
        errors = getattr(self.output, "errors", None) or "strict"
        data = [c.encode(encoding, errors) for c in chunks]
        view, done, error = memoryview(b"".join(data)), 0, None
        try:
            while done < len(view):
                done += os.write(self.fd, view[done:])
        except OSError as e:
            error = e
        complete, end = 0, 0
        for d in data:
            end += len(d)
            if end > done:
                break
            complete += 1
        return complete, error

    def _text(self, future, packed):
        if future is not None:
            try:
                return future.result()
            except BrokenProcessPool:
                self._fail("a post-processing worker died (killed or crashed)", 1)
        return self.lines(packed)  # no pool, or it is gone: format here, so nothing is lost

    def _fail(self, message, status):
        if self.problem is None:
            self.problem = (message, status)


def _sentences(n):
    return f"{n} sentence" + ("" if n == 1 else "s")


def _descriptor(output) -> Optional[int]:
    """The output's file descriptor, after writing out what its buffer holds; None when it has
    none (an in-memory stream)."""
    try:
        fd = output.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    try:
        output.flush()
    except OSError:
        pass  # the first write fails the same way, and says so
    return fd

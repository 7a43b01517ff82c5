"""fairseq-interactive input that one bad line cannot end (the `interactive_input` override).

fairseq's `buffered_read` decodes its input strictly as UTF-8 (a file; stdin as the locale says),
so one line of other bytes raises UnicodeDecodeError and ends the session, losing the lines
buffered with it and all after it; `make_batches` raises for a line longer than the model's
positions (unless --skip-invalid-size-inputs-valid-test, which drops it with a log line) or
asserts for one longer than --max-tokens. With the plugin loaded:

- `buffered_read` reads the same lines (universal newlines, stripped) with undecodable bytes
  kept as surrogate escapes, and remembers where each buffer starts. Reading stdin, it flushes
  stdout before it waits for the next line: a program that talks to fairseq-interactive through
  pipes gets each buffer's translations before it has to send more (fairseq's prints stay in
  the pipe's buffer until it fills). It waits for stdin so that Ctrl-C ends the wait whichever
  of the process's threads the signal reaches (`_stdin_lines`);
- `make_batches` refuses such a line, and a line too long for the model or for --max-tokens,
  with one line on stderr naming its input line and id (`fairseq_fast: input line 6 (id 5)
  skipped: ...`), and batches the others with fairseq's own make_batches. A refused line gets no
  S-/H- lines; every other line keeps its id.
"""
import codecs
import fileinput
import io
import os
import re
import select
import signal
import sys
import threading
from contextlib import contextmanager

import numpy as np
import torch

PREFIX = "fairseq_fast: "
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # an undecodable byte, as surrogateescape keeps it


class Buffer(list):
    """A buffer of input lines, and the id of its first line (the S-/H- id fairseq gives it)."""

    def __init__(self, lines, first_id):
        super().__init__(lines)
        self.first_id = first_id


def read_lines(original):
    def buffered_read(input, buffer_size):
        buffer, first_id = [], 0
        for src_str in _lines(input):
            buffer.append(src_str.strip())
            if len(buffer) >= buffer_size:
                yield Buffer(buffer, first_id)
                first_id += len(buffer)
                buffer = []
                if input == "-":
                    sys.stdout.flush()  # the answers so far, before waiting for more
        if len(buffer) > 0:
            yield Buffer(buffer, first_id)

    return buffered_read


def _lines(input):
    if input == "-":
        yield from _stdin_lines(sys.stdin.encoding)
        return
    with fileinput.input(files=[input], openhook=fileinput.hook_encoded(
            "utf-8", errors="surrogateescape")) as h:
        yield from h


def _stdin_lines(encoding, fd=0):
    """stdin's lines as fileinput gives them (universal newlines, in `encoding`, undecodable
    bytes kept as surrogate escapes), read so that a signal always ends the wait.

    The kernel hands a signal sent to the process to any one of its threads: torch's OpenMP
    workers and fairseq's data-loader threads take Ctrl-C too. Python runs the handler in the
    main thread, but only once that thread runs again, and a read() the signal did not
    interrupt waits for the next line. So the main thread waits in select() on stdin and on
    the signal module's wakeup fd, which every signal writes to."""
    decoder = io.IncrementalNewlineDecoder(
        codecs.getincrementaldecoder(encoding)(errors="surrogateescape"), translate=True)
    with _signal_pipe() as wake:
        waited = [fd] if wake is None else [fd, wake]
        pending = []  # the line being read
        while True:
            ready, _, _ = select.select(waited, [], [])
            if wake in ready:  # the handlers run before select() is called again
                _drain(wake)
                continue
            data = os.read(fd, 1 << 16)
            *ends, rest = decoder.decode(data, final=not data).split("\n")
            if ends:
                pending.append(ends[0])
                yield "".join(pending) + "\n"
                yield from (line + "\n" for line in ends[1:])
                pending = []
            pending.append(rest)
            if not data:
                break
        if "".join(pending):
            yield "".join(pending)


@contextmanager
def _signal_pipe():
    """The read end of a pipe every signal writes to (the signal module's wakeup fd) while the
    block runs; None outside the main thread, which alone may set it (and run handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    previous = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    try:
        yield wake_r
    finally:
        signal.set_wakeup_fd(previous)
        os.close(wake_r)
        os.close(wake_w)


def _drain(fd):
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def checked_batches(original):
    def make_batches(lines, cfg, task, max_positions, encode_fn):
        first_id = getattr(lines, "first_id", 0)
        encoded = {}

        def encode_once(x):  # tokenizer and BPE run once per line: for the length check here,
            if x not in encoded:  # and again (from this cache) in fairseq's make_batches
                encoded[x] = encode_fn(x)
            return encoded[x]

        keep = []
        for i, line in enumerate(lines):
            reason = _undecodable(line)
            if reason:
                _skipped(first_id + i, reason)
            else:
                keep.append(i)
        keep = _fitting(lines, keep, cfg, task, max_positions, encode_once, first_id)
        if not keep:
            return
        ids = torch.tensor(keep, dtype=torch.long)
        for batch in original([lines[i] for i in keep], cfg, task, max_positions, encode_once):
            yield batch._replace(ids=ids[batch.ids])

    return make_batches


def _undecodable(line):
    found = _ESCAPED_BYTE.search(line)
    if found is None:
        return None
    return (f"not valid UTF-8 (byte 0x{ord(found.group()) - 0xdc00:02x} at character "
            f"{found.start() + 1})")


def _fitting(lines, keep, cfg, task, max_positions, encode_fn, first_id):
    """The lines of `keep` whose source fits the model's positions and --max-tokens."""
    if not keep:
        return keep
    sources = [lines[i].split("\t")[0] if cfg.generation.constraints else lines[i]
               for i in keep]
    tokens, lengths = task.get_interactive_tokens_and_lengths(sources, encode_fn)
    too_long = set()
    if max_positions is not None:
        dataset = task.build_dataset_for_inference(tokens, lengths)
        _, ignored = dataset.filter_indices_by_size(np.arange(len(keep), dtype=np.int64),
                                                    max_positions)
        for j in ignored:
            limit = max_positions[0] if isinstance(max_positions, (tuple, list)) \
                else max_positions
            _skipped(first_id + keep[j], f"{lengths[j]} tokens, more than the model's "
                                         f"{limit} positions")
            too_long.add(int(j))
    max_tokens = cfg.dataset.max_tokens
    for j, n in enumerate(lengths):
        if j not in too_long and max_tokens and n > max_tokens:
            _skipped(first_id + keep[j], f"{n} tokens, more than --max-tokens {max_tokens}")
            too_long.add(j)
    return [i for j, i in enumerate(keep) if j not in too_long]


def _skipped(ident, reason):
    sys.stderr.write(f"{PREFIX}input line {ident + 1} (id {ident}) skipped: {reason}\n")
    sys.stderr.flush()

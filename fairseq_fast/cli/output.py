"""fairseq-generate / fairseq-interactive with --postprocess-workers 0: an output that fails (a
closed pipe, a full disk) ends the run with one line instead of a traceback.

fairseq's own loops print each sentence's lines to the output; a write that fails raises
BrokenPipeError or OSError (ENOSPC) from inside the loop. `guarded(stream)` stands in for the
output while fairseq's loop runs: the first failure points the stream's descriptor at /dev/null
(so that log lines and the interpreter's last flush do not fail again) and raises OutputFailed,
which the plugin's exception hook turns into `fairseq_fast: error: ...` and exit status 1.
Sentences are not counted here: the stream buffers, so what was passed to it is not what reached
the pipe or the disk (the pipeline, --postprocess-workers N, counts exactly; pipeline.py).
"""
import os
import sys
from contextlib import contextmanager

from fairseq_fast.errors import RunError


class OutputFailed(RunError):
    """Writing the output failed; the run stops without finalising (errors.py)."""

    exit_code = 1


def describe(error: BaseException) -> str:
    if isinstance(error, BrokenPipeError):
        return "the output was closed (broken pipe)"
    if isinstance(error, OSError) and error.errno is not None:
        return f"writing the output failed: {os.strerror(error.errno)}"
    return f"writing the output failed: {type(error).__name__}: {error}"


def silence(stream) -> None:
    """Point the stream's descriptor at /dev/null and drop what it buffers, so that later writes
    (log lines, interpreter shutdown's flush) do not raise again (Python docs, 'SIGPIPE')."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class _Guarded:
    """A text stream that turns a failed write or flush into OutputFailed. It passes on whole
    lines, and holds a line's start until its newline comes: print() writes a line's text and
    its newline separately, and a Ctrl-C between the two must not leave half a line in the
    output (flush_lines drops it; flush writes it)."""

    def __init__(self, stream):
        self._stream = stream
        self._partial = ""  # the start of a line whose newline has not come yet

    def _fail(self, error):
        silence(self._stream)
        raise OutputFailed(f"{describe(error)}; stopping") from None

    def write(self, text):
        try:
            end = text.rfind("\n") + 1
            if end:
                self._stream.write(self._partial + text[:end])
                self._partial = text[end:]
            else:
                self._partial += text
            return len(text)
        except OSError as e:
            self._fail(e)

    def flush(self):
        try:
            if self._partial:
                self._stream.write(self._partial)
                self._partial = ""
            return self._stream.flush()
        except OSError as e:
            self._fail(e)

    def flush_lines(self):
        """Flush the whole lines written so far; drop a line left unfinished (by Ctrl-C)."""
        self._partial = ""
        try:
            return self._stream.flush()
        except OSError as e:
            self._fail(e)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guarded(stream):
    return _Guarded(stream)


@contextmanager
def guarded_stdout():
    """sys.stdout guarded while fairseq-interactive's loop prints to it."""
    real = sys.stdout
    sys.stdout = guarded(real)
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = real


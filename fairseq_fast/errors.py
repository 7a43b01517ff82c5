"""User errors: one clear line and a non-zero exit, never a traceback.

Code anywhere in the plugin raises `UserError("...")`. In the command-line tools the exception
travels up through fairseq's own call stack; the hook installed here prints
`fairseq_fast: error: ...` and exits with status 2 (or the error's `exit_code`). Python users
(the hub) get the exception.

An error with `exit_now = True` (a generation run the pipeline stopped midway) skips the
interpreter's finalisation: fairseq's data loader prefetches batches in a daemon thread, and a
daemon thread caught inside a torch op while Python finalises aborts the process with
"terminate called without an active exception" (pytorch#38228), a second line after ours. Such
errors are raised only after everything generated has been written and flushed.
"""
import logging
import os
import sys

EXIT_CODE = 2


class UserError(ValueError):
    """A mistake in what the user asked for (flags, files, models), not a bug."""


def _hook(previous):
    def excepthook(exc_type, exc, tb):
        if issubclass(exc_type, UserError):
            sys.stderr.write(f"fairseq_fast: error: {exc}\n")
            sys.stderr.flush()
            status = getattr(exc, "exit_code", EXIT_CODE)
            if getattr(exc, "exit_now", False):
                _exit_now(status)
            # excepthook's own exit status would be 1
            sys.exit(status)
        previous(exc_type, exc, tb)

    excepthook.fairseq_fast = True
    return excepthook


def _exit_now(status):
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def install_excepthook() -> None:
    if not getattr(sys.excepthook, "fairseq_fast", False):
        sys.excepthook = _hook(sys.excepthook)


def fail(message: str) -> None:
    """Report a user error immediately (used while parsing flags, before fairseq runs)."""
    sys.stderr.write(f"fairseq_fast: error: {message}\n")
    sys.exit(EXIT_CODE)

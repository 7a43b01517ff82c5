"""User errors: one clear line and a non-zero exit, never a traceback.

Code anywhere in the plugin raises `UserError("...")`. In the command-line tools the exception
travels up through fairseq's own call stack; the hook installed here prints
`fairseq_fast: error: ...` and exits with status 2 (or the error's `exit_code`). Python users
(the hub) get the exception. The hook does the same for a FileNotFoundError that reaches it: in
a tool that is a file the command line names and fairseq did not find (a `--gen-subset` with no
data, a language pair with no dictionary), and fairseq's message names it; and for an
ImportError whose message says what to `pip install` (the optional package of a `--tokenizer`
or `--bpe`).

An error with `exit_now = True` (a generation run the pipeline stopped midway) ends the process
without finalising the interpreter, after everything generated has been written and flushed:
fairseq's data loader is still prefetching (a daemon thread, and DataLoader worker processes),
and a daemon thread caught inside a torch op while Python finalises aborts the process
("terminate called without an active exception", pytorch#38228). So the hook first makes the
rest of the process quiet — other threads' exceptions unprinted, torch's SIGCHLD handler
replaced, the child processes (data-loader workers) killed, which a SIGKILL keeps silent, before
an os._exit could cut a transfer from them and make them print — then prints the one line and
calls os._exit.
"""
import logging
import multiprocessing
import os
import signal
import sys
import threading

EXIT_CODE = 2


class UserError(ValueError):
    """A mistake in what the user asked for (flags, files, models), not a bug."""


class RunError(UserError):
    """A user error found while generating (fairseq's data loader is running): the process ends
    without finalising, as `exit_now` says."""

    exit_now = True


def _hook(previous):
    def excepthook(exc_type, exc, tb):
        if issubclass(exc_type, (UserError, FileNotFoundError)) or (
                issubclass(exc_type, ImportError) and "pip install" in str(exc)):
            status = getattr(exc, "exit_code", EXIT_CODE)
            exit_now = getattr(exc, "exit_now", False)
            if exit_now:
                _quiet_the_process()
            sys.stderr.write(f"fairseq_fast: error: {exc}\n")
            sys.stderr.flush()
            if exit_now:
                _exit_now(status)
            # excepthook's own exit status would be 1
            sys.exit(status)
        previous(exc_type, exc, tb)

    excepthook.fairseq_fast = True
    return excepthook


def _quiet_the_process():
    threading.excepthook = lambda args: None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # torch's raises when a worker dies
    children = multiprocessing.active_children()
    for child in children:
        child.kill()
    for child in children:
        child.join(5)


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


def existing_file(flag: str, path: str, kind: str) -> None:
    """The file a flag names exists and is not a folder; `kind`: what it is to be ("a
    checkpoint file"), as the error says it."""
    if not os.path.exists(path):
        raise UserError(f"{flag} {path}: no such file")
    if os.path.isdir(path):
        raise UserError(f"{flag} {path}: is a folder, not {kind}")


def fail(message: str) -> None:
    """Report a user error immediately (used while parsing flags, before fairseq runs)."""
    sys.stderr.write(f"fairseq_fast: error: {message}\n")
    sys.exit(EXIT_CODE)

"""Tool processes that a test starts itself and reads as they write (Ctrl-C, a closed pipe).

A read from a child's pipe waits for as long as the child keeps the pipe open: a child that hangs
would hang the suite. `watchdog(proc)` ends such a child after a deadline, first with SIGABRT (a
child started with PYTHONFAULTHANDLER=1 writes every thread's Python stack to its stderr, which
the failing assertion then shows), then with SIGKILL; the read returns what came, and the test
fails instead of waiting.
"""
import os
import signal
import threading
import time
from contextlib import contextmanager

WATCHDOG_S = 180  # far beyond what any of these runs takes


def ctrl_c_reaches_python():
    """Undo an inherited SIG_IGN for SIGINT (a preexec_fn). A suite started as a background job
    of a non-interactive shell runs with SIGINT ignored, the child inherits that across exec, and
    Python then installs no KeyboardInterrupt handler; a terminal's Ctrl-C reaches a foreground
    run with SIGINT at its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def with_stacks(env):
    """`env` with PYTHONFAULTHANDLER=1: the child's stacks go to its stderr on SIGABRT."""
    return dict(env, PYTHONFAULTHANDLER="1")


@contextmanager
def watchdog(proc, seconds=WATCHDOG_S):
    """Within the block, `proc` (started with start_new_session=True) and its process group are
    ended if still running after `seconds`. Yields an Event that is set once it fired."""
    fired = threading.Event()

    def fire():
        fired.set()
        for signum, pause in ((signal.SIGABRT, 3), (signal.SIGKILL, 0)):
            try:
                os.killpg(proc.pid, signum)
            except ProcessLookupError:
                return
            time.sleep(pause)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()
        timer.join()

"""User errors: one clear line and a non-zero exit, never a traceback.

Code anywhere in the plugin raises `UserError("...")`. In the command-line tools the exception
travels up through fairseq's own call stack; the hook installed here prints
`fairseq_fast: error: ...` and exits with status 2 (or the error's `exit_code`). Python users
(the hub) get the exception.
"""
import sys

EXIT_CODE = 2


class UserError(ValueError):
    """A mistake in what the user asked for (flags, files, models), not a bug."""


def _hook(previous):
    def excepthook(exc_type, exc, tb):
        if issubclass(exc_type, UserError):
            sys.stderr.write(f"fairseq_fast: error: {exc}\n")
            sys.stderr.flush()
            # excepthook's own exit status would be 1
            sys.exit(getattr(exc, "exit_code", EXIT_CODE))
        previous(exc_type, exc, tb)

    excepthook.fairseq_fast = True
    return excepthook


def install_excepthook() -> None:
    if not getattr(sys.excepthook, "fairseq_fast", False):
        sys.excepthook = _hook(sys.excepthook)


def fail(message: str) -> None:
    """Report a user error immediately (used while parsing flags, before fairseq runs)."""
    sys.stderr.write(f"fairseq_fast: error: {message}\n")
    sys.exit(EXIT_CODE)

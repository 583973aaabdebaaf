"""How the ``toolcycle`` command ends: its exit statuses, and the one place that maps errors.

A person at a terminal who made a mistake (a missing file, a bad spec, a model pack not
installed, a flag that does not exist) gets one line saying what is wrong and status 2, never
a traceback; a bug in toolcycle still shows its traceback, because that is what a bug report
needs. Which errors are the user's is decided by type here and nowhere else, so a command
raises a typed error and never prints and exits on its own.
"""

from __future__ import annotations

import sys

from .._safe_text import terminal_safe
from ..batch.inputs import BatchFileError
from ..errors import ConfigurationError, InputError, SpecError
from ..models.local.packs import ModelPackError

#: The command did what was asked (a run that answered, a listing, even an empty one).
OK = 0
#: A run ran and failed (its trace is recorded and printed).
RUN_FAILED = 1
#: The command could not start: a user error (bad flags, file, spec, model pack, store).
USAGE = 2
#: A run paused for approval (``toolcycle run`` without ``--approve``).
PAUSED = 3
#: A run returned an output that is not a success (docs/status.md: a limit forced it, it is
#: partial, or it is a tool's error passed through): printed, but not to be trusted.
NOT_SUCCEEDED = 4
#: Ctrl-C (128 + SIGINT, the shell's convention): what had finished is kept.
INTERRUPTED = 130


class CommandError(Exception):
    """A problem to print as one line (or a few) before exiting with status 2."""


#: Errors that are the user's to fix. ``OSError`` covers files that are missing or
#: unreadable and stores that cannot be reached (``ConnectionError``).
USER_ERRORS: tuple[type[BaseException], ...] = (
    CommandError, ConfigurationError, SpecError, InputError, ModelPackError, BatchFileError,
    OSError,
)


def report_user_error(exc: BaseException) -> int:
    """Print ``error: ...`` (terminal-safe: it may quote a spec or a path) and return 2."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and str(exc.filename) not in text:
        text = f"{text}: {exc.filename}"
    print(terminal_safe(f"error: {text}"), file=sys.stderr)
    return USAGE


def report_interrupt() -> int:
    print("interrupted", file=sys.stderr)
    return INTERRUPTED

"""A status line on stderr while ``toolcycle run`` works, on a terminal only.

A local model can take a minute over a run; without a sign of life the command looks hung.
The line (a spinner, the iteration, what is awaited) is drawn by rich on stderr and is
cleared when the run ends, so stdout keeps the answer alone and nothing is written when stderr
is a file or a pipe.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._safe_text import terminal_safe
from ..events import IterationStart, ModelResponseEvent, ToolCallEvent


class _Progress:
    """Run callbacks that update the status line."""

    def __init__(self, status: Any) -> None:
        self.status = status

    def on_iteration_start(self, event: IterationStart) -> None:
        forced = " (final answer)" if event.forced else ""
        self.status.update(f"iteration {event.iteration}{forced}: waiting for the model…")

    def on_model_response(self, event: ModelResponseEvent) -> None:
        self.status.update(f"iteration {event.iteration}: model answered "
                           f"in {event.duration_ms / 1000:.1f} s")

    def on_tool_call(self, event: ToolCallEvent) -> None:
        name = terminal_safe(event.call.name)
        self.status.update(f"iteration {event.iteration}: running {name}…")


@contextmanager
def progress_on_stderr() -> Iterator[_Progress | None]:
    """The callbacks to pass to the run (``None`` when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting…") as status:
        yield _Progress(status)

"""Seeing what a run does: one switch that logs each model request and tool call, with timings.

Everything goes through the standard :mod:`logging` module, under loggers named
``toolcycle.*``, so an application routes it like any other library's logs:

- ``toolcycle.run``: each run's start and end, and each model request (iteration, model,
  milliseconds, tokens, how many tool calls it asked for);
- ``toolcycle.tools``: each tool call (name, call id, milliseconds, ok or the kind of error);
  at ``DEBUG`` also its arguments, redacted (:mod:`toolcycle.tracing.redaction`) and clipped;
- ``toolcycle.setup``: the set-up steps a person waits for (a model pack assembled, weights
  loaded into memory).

Off by default, as a library's logs should be. The switch is ``TOOLCYCLE_LOG=info`` (or
``debug``) in the environment, read when :mod:`toolcycle` is imported, or ``--log-level`` /
``-v`` on the ``toolcycle`` command line; either puts one handler on stderr. An application
that configures :mod:`logging` itself needs neither: ``logging.getLogger("toolcycle")
.setLevel(logging.INFO)`` is enough. The run's listeners are attached only while the
``toolcycle.run`` or ``toolcycle.tools`` logger is enabled for ``INFO``, so a run with logging
off pays one level check.

Nothing logged holds a model's or a tool's text: arguments are redacted before they are
written, observations and answers are reported by size only (they are in the trace).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from .errors import AgentError
from .events import (
    Callbacks,
    ModelResponseEvent,
    RunFailure,
    RunStart,
    RunSuccess,
    ToolResultEvent,
)

#: The environment variable of the switch: ``debug``, ``info``, ``warning``, ``error`` or ``off``.
ENV_VAR = "TOOLCYCLE_LOG"
#: The logger of set-up steps a person waits for (the CLI shows its ``INFO`` lines always).
SETUP_LOG = "toolcycle.setup"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
          "error": logging.ERROR, "off": logging.CRITICAL + 1}

_RUN = logging.getLogger("toolcycle.run")
_TOOLS = logging.getLogger("toolcycle.tools")
_ROOT = logging.getLogger("toolcycle")
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Arguments logged at DEBUG are clipped to this many characters.
MAX_ARGUMENT_CHARS = 300


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler the switch installs (one, whatever how often it is thrown)."""


def level_of(name: str) -> int:
    """The level a switch value names; ``ValueError`` listing the accepted ones otherwise."""
    level = LEVELS.get(name.strip().lower())
    if level is None:
        raise ValueError(f"unknown log level {name!r}: use one of {', '.join(LEVELS)}")
    return level


def configure(level: int) -> None:
    """Log ``toolcycle.*`` at ``level`` and above to stderr (replacing an earlier switch)."""
    _ROOT.setLevel(level)
    if not any(isinstance(h, _StderrHandler) for h in _ROOT.handlers):
        handler = _StderrHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        _ROOT.addHandler(handler)


def configure_from_env() -> None:
    """Apply ``TOOLCYCLE_LOG`` when it is set (at import of :mod:`toolcycle`).

    A value that names no level is reported as a warning, not an exception: an import must
    not fail over a logging setting.
    """
    value = os.environ.get(ENV_VAR)
    if not value:
        return
    try:
        configure(level_of(value))
    except ValueError as exc:
        logging.getLogger("toolcycle").warning("%s ignored: %s", ENV_VAR, exc)


def show_setup_progress() -> None:
    """Let a person see set-up progress on stderr (the CLI's choice, not the library's),
    unless the switch says ``off``."""
    if _ROOT.level > logging.CRITICAL:
        return
    setup = logging.getLogger(SETUP_LOG)
    if setup.getEffectiveLevel() > logging.INFO:
        setup.setLevel(logging.INFO)
    if not any(isinstance(h, _StderrHandler) for h in setup.handlers) and not any(
        isinstance(h, _StderrHandler) for h in _ROOT.handlers
    ):
        handler = _StderrHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        setup.addHandler(handler)


class RunLog:
    """Run listeners that write the log lines (attached by :func:`run_callbacks`)."""

    def on_run_start(self, event: RunStart) -> None:
        _RUN.info("run %s started: agent %s, model %s", event.run_id, event.agent_name,
                  event.model_name)

    def on_model_response(self, event: ModelResponseEvent) -> None:
        usage = event.usage
        _RUN.info("model request: attempt %d iteration %d, %.0f ms, tokens in/out %d/%d, "
                  "%d tool call(s)", event.attempt, event.iteration, event.duration_ms,
                  usage.input_tokens, usage.output_tokens, len(event.message.tool_calls))

    def on_tool_result(self, event: ToolResultEvent) -> None:
        outcome = (f"error ({event.error_type or 'error'})" if event.result.is_error else "ok")
        _TOOLS.info("tool call %s [%s]: %.0f ms, %s, %d characters", event.call.name,
                    event.call.id, event.duration_ms, outcome, len(event.result.content))
        if _TOOLS.isEnabledFor(logging.DEBUG):
            _TOOLS.debug("tool call %s [%s] arguments: %s", event.call.name, event.call.id,
                         _redacted(event.call.arguments))

    def on_success(self, event: RunSuccess) -> None:
        result = event.result
        _RUN.info("run %s ended: %s, %d request(s), %d tool call(s)", result.run_id,
                  result.termination.reason, result.usage.requests, result.usage.tool_calls)

    def on_failure(self, event: RunFailure) -> None:
        error = event.error
        code = error.code if isinstance(error, AgentError) else type(error).__name__
        _RUN.info("run ended: %s", code)


def _redacted(arguments: Any) -> str:
    from .tracing.redaction import Redactor

    text = Redactor().dumps(arguments)
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[:MAX_ARGUMENT_CHARS] + "..."


_NONE = Callbacks()
_LOGGING = Callbacks.collect(RunLog())[0]


def run_callbacks() -> Callbacks:
    """The listeners to add to a run: the log's while it is enabled, else none (free)."""
    if _RUN.isEnabledFor(logging.INFO) or _TOOLS.isEnabledFor(logging.INFO):
        return _LOGGING
    return _NONE


configure_from_env()

"""Errors: every run failure is an :class:`AgentError` with a stable ``code``.

A run that fails still carries everything it produced: ``error.result`` is the partial
:class:`~toolcycle.result.RunResult` (trace, usage, messages). Configuration problems are found
before anything runs and reported all at once by :class:`ConfigurationError`.

Every exception toolcycle raises derives from :class:`ToolcycleError`; where a builtin base
says what kind of mistake it is, it stays as a second base, so ``except ValueError`` still
catches a bad spec. The tree (the classes not defined here live beside what raises them):

* ToolcycleError
  + ConfigurationError (ValueError)
  |  + SnapshotError — a snapshot that cannot be resumed (changed, damaged, another agent)
  |  + ApprovalMismatch — answers that do not belong to the paused run's pending calls
  + SnapshotConsumed — a snapshot resumed already (at most once, across processes)
  + AgentError — a run failed; ``code``, ``context``, the partial ``result``
  |  + MaxIterationsExceeded, MaxAttemptsExceeded, UsageLimitExceeded, RunTimeout
  |  + Cancelled, InvalidResponse, SubmitBeforeOutput
  |  + ModelError
  |     + RateLimited
  + ValidationFailed — raised by output validators, its message goes to the model
  + SpecError (ValueError) — a spec file that cannot be read, with line and column
  |  + GramError — gram text (``toolcycle.spec.gram_syntax``)
  |     + SignatureError — a tool signature (``toolcycle.spec.signatures``)
  |        + NotExpressible — a schema that no signature can say
  + ProtocolViolation (AssertionError) — a history the provider would reject
  |  (``toolcycle.models.protocol``, raised by the scripted test model)
  + ScriptExhausted (RuntimeError) — a scripted model asked for more replies than it has
  |  (``toolcycle.models.scripted``)
  + ModelPackError (RuntimeError) — a local model pack missing or corrupt
  |  (``toolcycle.models.local.packs``)
  + ReadOnlyViolation (ValueError) — SQL that does more than read (``toolcycle.rag.sql_tools``)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors_base import ConfigurationError as ConfigurationError
from ._errors_base import ToolcycleError as ToolcycleError

if TYPE_CHECKING:
    from .result import RunResult


class SnapshotError(ConfigurationError):
    """A run snapshot that cannot be resumed: changed after it was made, of another version,
    or made by another agent (model, tools or output differ); every mismatch is listed."""

    code = "SNAPSHOT"


class ApprovalMismatch(ConfigurationError):
    """Answers given to resume a paused run that do not belong to it: an :class:`Approval`
    made for another run, another call, or other arguments than the snapshot's pending call,
    or a bare ``True`` for a signed snapshot. Nothing runs; every mismatch is listed."""

    code = "APPROVAL_MISMATCH"


class SnapshotConsumed(ToolcycleError):
    """The snapshot was resumed already (in this process or another, see
    :mod:`toolcycle.stores.ledger`): a paused run continues once, so an approved side effect
    runs at most once. Nothing ran. ``run_id`` is the paused run's; ``consumed_at`` (Unix
    time) and ``consumer`` (``host:pid``) say which resume took it."""

    code = "SNAPSHOT_CONSUMED"

    def __init__(self, run_id: str, pause: int, consumed_at: float, consumer: str) -> None:
        self.run_id, self.pause = run_id, pause
        self.consumed_at, self.consumer = consumed_at, consumer
        super().__init__(f"run {run_id!r} was already resumed from this snapshot (pause "
                         f"{pause}, by {consumer} at Unix time {consumed_at:.3f}): a snapshot "
                         "is resumed at most once")


class AgentError(ToolcycleError):
    """A run that could not produce a result. ``code`` is stable; ``context`` says where."""

    code = "AGENT_ERROR"

    def __init__(
        self,
        message: str,
        *,
        result: RunResult[Any] | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.result = result
        self.context: dict[str, Any] = context

    def __str__(self) -> str:
        where = ", ".join(f"{k}={v!r}" for k, v in self.context.items() if v is not None)
        return f"[{self.code}] {self.message}" + (f" ({where})" if where else "")


class MaxIterationsExceeded(AgentError):
    code = "MAX_ITERATIONS"


class MaxAttemptsExceeded(AgentError):
    code = "MAX_ATTEMPTS"


class UsageLimitExceeded(AgentError):
    """A token or tool-call budget ran out."""

    code = "USAGE_LIMIT"


class RunTimeout(AgentError):
    code = "TIMEOUT"


class GuardrailTripped(AgentError):
    """A guardrail tripped and ended the run (docs/guardrails.md): an input or output
    guardrail, or a tool guardrail whose trip says ``halt=True``. ``context`` holds the
    guardrail's ``guardrail`` (name), ``kind`` and ``reason``."""

    code = "GUARDRAIL_TRIPPED"


class RepeatedCalls(AgentError):
    """The loop guard ended the run: the model called the same tool with the same arguments
    again after that call was refused for returning the same result each time
    (``Limits(max_repeats=...)``)."""

    code = "REPEATED_CALLS"


class ToolsUnavailable(AgentError):
    """A toolset (an MCP server, say) could not list its tools when the run started, and had
    never listed them before: the run ends before its first model request, with its trace
    stored, rather than run with the model unaware of tools it was meant to have."""

    code = "TOOLS_UNAVAILABLE"


class Cancelled(AgentError):
    """The run was cancelled; ``context['phase']`` says where it stood."""

    code = "CANCELLED"


class InvalidResponse(AgentError):
    """The model's reply broke the output protocol (e.g. no output tool call)."""

    code = "INVALID_RESPONSE"


class SubmitBeforeOutput(AgentError):
    code = "SUBMIT_BEFORE_OUTPUT"


class ModelError(AgentError):
    """The provider failed (after retries). ``context`` has the status and its message."""

    code = "MODEL_ERROR"


class RateLimited(ModelError):
    code = "RATE_LIMITED"


class ValidationFailed(ToolcycleError):
    """Raised by an output validator to reject an output; the message goes to the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SpecError(ToolcycleError, ValueError):
    """A spec file that cannot be read: the message says where (line, column, field) and why.

    ``line`` and ``column`` are 1-based (0 when unknown). JSON and gram specs raise it; the gram
    parser raises its subclass :class:`~toolcycle.spec.gram_syntax.GramError`.
    """

    #: How an unnamed text is called in the message when a line is known.
    unnamed = "<spec>"

    def __init__(self, message: str, line: int = 0, column: int = 0, source: str = "") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source = source
        where = f"{source or self.unnamed}:{line}:{column}: " if line else (
            f"{source}: " if source else ""
        )
        super().__init__(where + message)


class ConversationBusy(ToolcycleError):
    """Another run holds the conversation: concurrent runs on one conversation are refused,
    never interleaved (see :mod:`toolcycle.conversation`). Retry once that run has ended."""

    code = "CONVERSATION_BUSY"


class ConversationConflict(ToolcycleError):
    """A run's messages were not appended: the conversation changed since the run loaded it
    (its claim had expired and another run took it). The conversation is left as it was;
    ``result`` holds the run's result when the run itself succeeded."""

    code = "CONVERSATION_CONFLICT"
    result: RunResult[Any] | None = None


class InputError(ToolcycleError, ValueError):
    """A run's ``input=`` does not fit the agent's ``input_type``; every problem is listed."""

    code = "INPUT"

    def __init__(self, problems: list[str], subject: str = "input") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid {subject} ({len(self.problems)} problem(s)):\n{lines}")

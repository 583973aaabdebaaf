"""Record runs into a :class:`~toolcycle.tracing.store.TraceStore` from callbacks alone.

``Agent(trace_store=...)`` is the usual way to record. This recorder is for the other cases: an
agent built elsewhere, a store chosen per call site, or a store that should see only some runs.
Pass ``callbacks=store.recorder()`` and the recorder rebuilds the trace from the events of
:mod:`toolcycle.events`, writing it after every model response and tool result. When the run
ends, the loop's own trace (``result.trace``) replaces the rebuilt one, so the stored record is
exactly what the run returned.

State is kept per run in a context variable, so one recorder may serve concurrent runs.
"""

from __future__ import annotations

import contextvars
import time
from typing import Any

from ..events import (
    AttemptEnd,
    AttemptStart,
    IterationStart,
    ModelResponseEvent,
    RunFailure,
    RunStart,
    RunSuccess,
    ToolResultEvent,
    ValidationFailure,
)
from .store import TraceStore
from .trace import AttemptRecord, Step, ToolCallRecord, Trace

_CURRENT: contextvars.ContextVar[Trace | None] = contextvars.ContextVar(
    "toolcycle_trace_recorder", default=None
)


class TraceRecorder:
    """A callbacks object (``on_*`` methods) that writes each run into ``store`` as it goes."""

    def __init__(self, store: TraceStore) -> None:
        self.store = store

    def _trace(self) -> Trace | None:
        return _CURRENT.get()

    def on_run_start(self, event: RunStart) -> None:
        trace = Trace(
            run_id=event.run_id,
            agent_name=event.agent_name,
            user_prompt=event.user_prompt,
            started_at=time.time(),
        )
        _CURRENT.set(trace)
        self.store.start(trace)

    def on_attempt_start(self, event: AttemptStart) -> None:
        trace = self._trace()
        if trace is not None and not any(a.attempt == event.attempt for a in trace.attempts):
            trace.attempts.append(AttemptRecord(event.attempt))

    def on_iteration_start(self, event: IterationStart) -> None:
        trace = self._trace()
        if trace is not None:
            trace.steps.append(
                Step(event.iteration, event.attempt, started_at=time.time(), forced=event.forced)
            )

    def on_model_response(self, event: ModelResponseEvent) -> None:
        trace = self._trace()
        if trace is None:
            return
        step = _current_step(trace, event.attempt, event.iteration)
        step.thought = event.message.text
        step.thinking = event.message.thinking
        step.usage = event.usage.copy()
        step.model_ms = event.duration_ms
        step.finish_reason = event.message.finish_reason
        trace.usage.add(event.usage)
        if event.message.model_name and not trace.model_name:
            trace.model_name = event.message.model_name
        self.store.record_step(trace)

    def on_tool_result(self, event: ToolResultEvent) -> None:
        trace = self._trace()
        if trace is None:
            return
        step = _current_step(trace, event.attempt, event.iteration)
        result = event.result
        step.tool_calls.append(
            ToolCallRecord(
                call_id=event.call.id,
                name=event.call.name,
                args=event.call.arguments,
                iteration=event.iteration,
                attempt=event.attempt,
                result=None if result.is_error else result.content,
                error=result.content if result.is_error else None,
                duration_ms=event.duration_ms,
            )
        )
        step.tools_ms += event.duration_ms
        self.store.record_step(trace)

    def on_validation_failure(self, event: ValidationFailure) -> None:
        trace = self._trace()
        if trace is not None:
            record = _attempt(trace, event.attempt)
            record.errors.extend(event.errors)
            record.validator = event.validator
            record.code = event.code

    def on_attempt_end(self, event: AttemptEnd) -> None:
        trace = self._trace()
        if trace is not None:
            _attempt(trace, event.attempt).success = event.success

    def on_success(self, event: RunSuccess) -> None:
        self._finish(event.result, "success", None)

    def on_failure(self, event: RunFailure) -> None:
        code = getattr(event.error, "code", type(event.error).__name__)
        status = "cancelled" if code == "CANCELLED" else "failure"
        self._finish(event.result, status, event.error)

    def _finish(self, result: Any, status: str, error: BaseException | None) -> None:
        rebuilt = self._trace()
        final = getattr(result, "trace", None)
        if isinstance(final, Trace):
            if final.status == "running":
                final.status = status
            trace = final
        elif rebuilt is not None:
            trace = rebuilt
            trace.status = status
            trace.ended_at = time.time()
            if error is not None:
                trace.error = {
                    "code": getattr(error, "code", type(error).__name__),
                    "message": str(error),
                }
        else:
            return
        if trace.ended_at is None:
            trace.ended_at = time.time()
        self.store.finish(trace)
        _CURRENT.set(None)


def _current_step(trace: Trace, attempt: int, iteration: int) -> Step:
    """The step of (attempt, iteration), created if the iteration event was not seen."""
    if trace.steps and (trace.steps[-1].attempt, trace.steps[-1].iteration) == (attempt, iteration):
        return trace.steps[-1]
    step = Step(iteration, attempt, started_at=time.time())
    trace.steps.append(step)
    return step


def _attempt(trace: Trace, attempt: int) -> AttemptRecord:
    for record in trace.attempts:
        if record.attempt == attempt:
            return record
    record = AttemptRecord(attempt)
    trace.attempts.append(record)
    return record

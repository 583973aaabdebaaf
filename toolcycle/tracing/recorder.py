"""The one trace builder: a run's events in, its :class:`~toolcycle.tracing.trace.Trace` out.

The run engine emits every event through :class:`TraceBuilder` before the callbacks see it, so
the trace is written in one place and agrees with the events by construction: a step starts
with ``IterationStart``, a tool-call record with ``ToolCallEvent`` (so a run that dies while a
tool runs still shows which call it was) and is completed by ``ToolResultEvent``. With a sink
(a :class:`~toolcycle.tracing.store.TraceStore`), the trace is written as it grows: after each
model response and around each tool call, so a crash keeps everything up to it.

:class:`TraceRecorder` is the same builder behind callbacks, for agents built elsewhere:
``Agent(..., callbacks=store.recorder())``. State is kept per run in a context variable, so
one recorder may serve concurrent runs; when the run ends, the engine's own trace
(``result.trace``) replaces the rebuilt one, so the stored record is what the run returned.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..approval import decision_to_dict
from ..context import SampledRequest
from ..events import (
    AttemptEnd,
    AttemptStart,
    Event,
    GuardrailEvent,
    HandoffEvent,
    IterationStart,
    LoopGuardEvent,
    ModelResponseEvent,
    RunFailure,
    RunPaused,
    RunResumed,
    RunStart,
    RunSuccess,
    ToolCallEvent,
    ToolResultEvent,
    ValidationFailure,
)
from ..messages import TextPart, ThinkingPart, Usage
from ..models.paid import ONE_REQUEST, Paid
from ..status import RunStatus
from .stand_in import StandIn
from .trace import AttemptRecord, Step, ToolCallRecord, Trace


class TraceSink(Protocol):
    """Where traces go while a run happens (:class:`~toolcycle.tracing.store.TraceStore`)."""

    def start(self, trace: Trace) -> None: ...
    def record_step(self, trace: Trace) -> None: ...
    def finish(self, trace: Trace) -> None: ...


#: Reports a failing sink (full disk, locked file) without breaking the run: (what, error).
SinkErrorHandler = Callable[[str, Exception], None]


class TraceBuilder:
    """Applies a run's events to its trace and, if there is a sink, persists it as it grows."""

    __slots__ = ("_now", "_open", "_tools_started", "on_sink_error", "outer", "sink", "trace")

    def __init__(self, trace: Trace, sink: TraceSink | None = None,
                 on_sink_error: SinkErrorHandler | None = None) -> None:
        self.trace = trace
        self.sink = sink
        self.on_sink_error = on_sink_error
        self._open: dict[str, ToolCallRecord] = {}  # call id -> record awaiting its result
        self._tools_started = 0.0
        #: The step being written (the last one started): events of the current iteration
        #: find it without a search; :meth:`_step` finds any other.
        self._now: Step | None = None
        #: A team member's run recorded by a callbacks recorder: the calling run's builder.
        self.outer: TraceBuilder | None = None

    def apply(self, event: Event) -> None:
        """Record ``event`` (events that change nothing in the trace cost one lookup)."""
        handler = TRACE_HANDLERS.get(event.hook)
        if handler is not None:
            handler(self, event)

    @property
    def handlers(self) -> dict[str, Callable[[TraceBuilder, Any], None]]:
        """Hook -> recording method, for the engine's emitter, which calls it before the
        callbacks see the event (:class:`toolcycle.events.Recorder`)."""
        return TRACE_HANDLERS

    # -- lifecycle, called by the engine --------------------------------------------------------

    def start(self) -> None:
        self.trace.started_at = time.time()
        self._persist("start")

    def request_failed(self, duration_ms: float, paid: Paid = ONE_REQUEST) -> None:
        """The model request of the current step raised (or was cancelled): it still counts,
        with what it had paid (:mod:`toolcycle.models.paid`)."""
        if self.trace.steps:
            step = self.trace.steps[-1]
            step.model_ms = duration_ms
            step.usage = paid.usage.copy()
            step.asked_again = paid.replies
        self._persist("record_step")

    def finish(self, status: RunStatus, usage: Usage, output: Any,
               termination: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
        trace = self.trace
        trace.ended_at = time.time()
        trace.status = status
        trace.usage = usage
        trace.output = output
        trace.termination = termination
        trace.error = error
        self._persist("finish")

    def _persist(self, what: str) -> None:
        sink = self.sink
        if sink is None:
            return
        try:
            getattr(sink, what)(self.trace)
        except Exception as exc:
            if self.on_sink_error is None:
                raise
            self.on_sink_error(f"trace_store.{what}", exc)

    # -- events ------------------------------------------------------------------------------

    def _attempt_start(self, event: AttemptStart) -> None:
        attempts = self.trace.attempts
        for record in attempts:  # a resumed run starts its attempt again (a loop, not any():
            if record.attempt == event.attempt:  # a generator per run costs more than it reads)
                return
        attempts.append(AttemptRecord(event.attempt))

    def _iteration_start(self, event: IterationStart) -> None:
        # positional: a keyword costs more than the field it sets, and this runs once per
        # iteration (the field orders are pinned by tests/core/test_trace_usage.py)
        step = self._now = Step(event.iteration, event.attempt, "", "", [],
                                Usage(0, 0, 0, 0, 1), 0.0, 0.0, time.time(), event.forced)
        if event.tool_choice not in (None, "auto"):  # the trace keeps only what was forced
            step.tool_choice = event.tool_choice
        self.trace.steps.append(step)

    def open_record(self, call_id: str) -> ToolCallRecord | None:
        """The record of a call still running (an agent called as a tool hangs its run's
        trace under it: toolcycle.run.team)."""
        return self._open.get(call_id)

    def turn_record(self, call_id: str) -> ToolCallRecord | None:
        """The record of a call of the current step, running or answered: a team member's
        paused run that is closed after its call was answered without it (the run's deadline
        passed first) hangs its closed trace there, in place of the paused one."""
        record = self._open.get(call_id)
        if record is None and self._now is not None:
            record = next((r for r in self._now.tool_calls if r.call_id == call_id), None)
        return record

    def head_start(self, attempt: int, usage: Usage) -> None:
        """Open the step of a head start's turn (toolcycle.run.head_start): iteration 0, no
        model request, ``usage`` its call; its call is recorded into it, on every path."""
        self._step(attempt, 0).usage = usage

    def _step(self, attempt: int, iteration: int) -> Step:
        steps = self.trace.steps
        for step in reversed(steps):  # nearly always the last one
            if step.iteration == iteration and step.attempt == attempt:
                self._now = step
                return step
        step = Step(iteration, attempt, started_at=time.time())  # the start event was missed
        steps.append(step)
        self._now = step
        return step

    def _model_response(self, event: ModelResponseEvent) -> None:
        step = self._now
        if step is None or step.iteration != event.iteration or step.attempt != event.attempt:
            step = self._step(event.attempt, event.iteration)
        message = event.message
        thought = thinking = ""  # message.text and .thinking in one pass (once per reply)
        for part in message.parts:
            if isinstance(part, TextPart):
                thought += part.text
            elif isinstance(part, ThinkingPart):
                thinking += part.text
        step.thought = thought
        step.thinking = thinking
        step.usage = event.usage  # made for this step by the engine, never changed after
        step.model_ms = event.duration_ms
        step.finish_reason = message.finish_reason
        step.model = message.model_name
        if event.repairs:
            step.repairs = tuple(event.repairs)
        if message.asked_again:
            step.asked_again = message.asked_again
        if message.model_name and not self.trace.model_name:
            self.trace.model_name = message.model_name
        if self.sink is not None:
            self._persist("record_step")  # the reply is stored before its tools run

    def _tool_call(self, event: ToolCallEvent) -> None:
        step = self._now
        if step is None or step.iteration != event.iteration or step.attempt != event.attempt:
            step = self._step(event.attempt, event.iteration)
        if not step.tool_calls:
            self._tools_started = time.perf_counter()
        call = event.call
        record = ToolCallRecord(call.id, call.name, call.arguments, event.iteration,
                                event.attempt, None, None, 0.0, event.kind)
        if event.approval is not None:
            record.approval = decision_to_dict(event.approval)
        step.tool_calls.append(record)
        self._open[call.id] = record
        if self.sink is not None:
            self._persist("record_step")  # a crash while the tool runs still shows the call

    def _tool_result(self, event: ToolResultEvent) -> None:
        record = self._open.pop(event.call.id, None)
        step = self._now
        if step is None or step.iteration != event.iteration or step.attempt != event.attempt:
            step = self._step(event.attempt, event.iteration)
        if record is None:  # no call event was seen (a recorder attached mid-run)
            call = event.call
            record = ToolCallRecord(call.id, call.name, call.arguments, event.iteration,
                                    event.attempt)
            step.tool_calls.append(record)
            self._tools_started = self._tools_started or time.perf_counter()
        result = event.result
        if result.is_error:
            record.result, record.error = None, result.content
            record.error_type = event.error_type or "error"
        else:
            record.result, record.error = result.content, None
            record.error_type = None
        if result.media:
            record.media = [part.summary() for part in result.media]
        record.duration_ms = event.duration_ms
        step.tools_ms = (time.perf_counter() - self._tools_started) * 1000.0
        if self.sink is not None:
            self._persist("record_step")

    def sampled(self, call_id: str, request: SampledRequest) -> None:
        """A model request made for the call ``call_id`` while it waited (MCP sampling): a
        step nested under the call, its usage added to the step the call belongs to (the run
        counts it in its total at the same time: :mod:`toolcycle.run.call_scope`)."""
        found = next(((step, r) for step in reversed(self.trace.steps)
                      for r in step.tool_calls if r.call_id == call_id), None)
        if found is None:
            return
        step, record = found
        step.usage = step.usage + request.usage  # a new value: the event's stays as sent
        record.sampling = (*record.sampling, Step(
            record.iteration, record.attempt, thought=request.text, usage=request.usage,
            model_ms=request.duration_ms, started_at=time.time(),
            finish_reason=request.finish_reason, model=request.model))
        if self.sink is not None:
            self._persist("record_step")

    def stood_in(self, call_id: str, what: StandIn) -> None:
        """What a tool acting for the model did in the call ``call_id`` (a routine's
        steps, a fallback's alternative: :mod:`toolcycle.tracing.stand_in`), kept on the
        call's record; a later record of the same call replaces an earlier one."""
        record = self._open.get(call_id) or next(
            (r for step in reversed(self.trace.steps) for r in step.tool_calls
             if r.call_id == call_id), None)
        if record is None:
            return
        record.stand_in = what
        if self.sink is not None:
            self._persist("record_step")

    def _loop_guard(self, event: LoopGuardEvent) -> None:
        counts = self.trace.loop_guard
        counts[event.action] = counts.get(event.action, 0) + 1

    def _guardrail(self, event: GuardrailEvent) -> None:
        self.trace.guardrails.append({
            "kind": event.kind, "name": event.name, "reason": event.reason, "info": event.info,
            "call_id": event.call_id, "halted": event.halted})

    def _handoff(self, event: HandoffEvent) -> None:
        self.trace.handoffs.append({"from": event.from_agent, "to": event.to_agent,
                                    "attempt": event.attempt, "iteration": event.iteration})

    def _paused(self, event: RunPaused) -> None:
        self.trace.pauses.append({
            "attempt": event.attempt, "iteration": event.iteration, "paused_at": time.time(),
            "pending": [request.to_dict() for request in event.pending],
            "resumed_at": None, "answers": {},
        })

    def _resumed(self, event: RunResumed) -> None:
        trace = self.trace
        trace.status, trace.ended_at, trace.termination = "running", None, None
        if trace.pauses:
            trace.pauses[-1]["resumed_at"] = time.time()
            trace.pauses[-1]["answers"] = {
                call_id: decision_to_dict(d) for call_id, d in event.decisions.items()}

    def reopen(self) -> None:
        """A resumed run: calls of the last step still awaiting their result (a held output
        call) are open again, and the step's tool time goes on from where it stopped."""
        if self.trace.steps:
            step = self._now = self.trace.steps[-1]
            for record in step.tool_calls:
                if record.result is None and record.error is None:
                    self._open[record.call_id] = record
            self._tools_started = time.perf_counter() - step.tools_ms / 1000.0

    def _validation_failure(self, event: ValidationFailure) -> None:
        record = self._attempt(event.attempt)
        record.errors.extend(event.errors)
        record.validator = event.validator
        record.code = event.code

    def _attempt_end(self, event: AttemptEnd) -> None:
        record = self._attempt(event.attempt)
        record.success = event.success
        if event.error is not None:
            record.errors.append(event.error)
            record.code = event.code

    def _attempt(self, attempt: int) -> AttemptRecord:
        for record in reversed(self.trace.attempts):
            if record.attempt == attempt:
                return record
        record = AttemptRecord(attempt)
        self.trace.attempts.append(record)
        return record


#: Hook name -> the builder method that records it (the events that change the trace).
TRACE_HANDLERS: dict[str, Callable[[TraceBuilder, Any], None]] = {
    AttemptStart.hook: TraceBuilder._attempt_start,
    IterationStart.hook: TraceBuilder._iteration_start,
    ModelResponseEvent.hook: TraceBuilder._model_response,
    ToolCallEvent.hook: TraceBuilder._tool_call,
    ToolResultEvent.hook: TraceBuilder._tool_result,
    ValidationFailure.hook: TraceBuilder._validation_failure,
    LoopGuardEvent.hook: TraceBuilder._loop_guard,
    GuardrailEvent.hook: TraceBuilder._guardrail,
    HandoffEvent.hook: TraceBuilder._handoff,
    AttemptEnd.hook: TraceBuilder._attempt_end,
    RunPaused.hook: TraceBuilder._paused,
    RunResumed.hook: TraceBuilder._resumed,
}

_CURRENT: contextvars.ContextVar[TraceBuilder | None] = contextvars.ContextVar(
    "toolcycle_trace_recorder", default=None
)


class TraceRecorder:
    """A callbacks object (``on_*`` methods) that writes each run into ``store`` as it goes."""

    def __init__(self, store: TraceSink) -> None:
        self.store = store

    def on_run_start(self, event: RunStart) -> None:
        trace = Trace(run_id=event.run_id, agent_name=event.agent_name,
                      model_name=event.model_name, user_prompt=event.user_prompt)
        builder = TraceBuilder(trace, self.store)
        if event.parent_call_id is not None:  # a team member's run: the caller's goes on after
            builder.outer = _CURRENT.get()
        _CURRENT.set(builder)
        builder.start()

    def _forward(self, event: Event) -> None:
        builder = _CURRENT.get()
        if builder is not None:
            builder.apply(event)

    on_attempt_start = on_iteration_start = on_model_response = _forward
    on_tool_call = on_tool_result = on_validation_failure = on_attempt_end = _forward
    on_loop_guard = on_guardrail = on_handoff = _forward

    def on_pause(self, event: RunPaused) -> None:
        self._finish(event.result, "paused", None)

    def on_resume(self, event: RunResumed) -> None:
        """A resumed run (maybe in another process) goes on from a copy of its trace so far."""
        if event.trace is None:
            return
        builder = TraceBuilder(Trace.from_dict(event.trace.to_dict()), self.store)
        builder.reopen()
        _CURRENT.set(builder)

    def on_success(self, event: RunSuccess) -> None:
        self._finish(event.result, event.status, None)

    def on_failure(self, event: RunFailure) -> None:
        self._finish(event.result, event.status, event.error)

    def _finish(self, result: Any, status: RunStatus, error: BaseException | None) -> None:
        builder = _CURRENT.get()
        final = getattr(result, "trace", None)
        if isinstance(final, Trace):  # the engine's own trace: exactly what the run returned
            if final.status == "running":
                final.status = status
            if final.ended_at is None:
                final.ended_at = time.time()
            self.store.finish(final)
        elif builder is not None:
            usage = Usage()
            for step in builder.trace.steps:
                usage.add(step.usage)
            failure = None if error is None else {
                "code": getattr(error, "code", type(error).__name__), "message": str(error)}
            builder.finish(status, usage, None, None, failure)
        _CURRENT.set(None if builder is None else builder.outer)

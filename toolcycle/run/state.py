"""The mutable state of one run, and the small operations the loop performs on it.

:mod:`toolcycle.run.loop` reads as the story of a run; this module holds its bookkeeping: the
history (append-only), usage, the trace, counters, limits, cancellation and the guarantee that
every open tool call gets a result whatever happens.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..context import CancelToken, RunContext
from ..errors import Cancelled
from ..events import CallbackError, Emitter, Event, ToolResultEvent
from ..limits import Limits
from ..messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult, Usage
from ..models.base import Model, ModelSettings
from ..output import Output
from ..result import RunResult, Termination
from ..tracing.trace import Step, Trace

if TYPE_CHECKING:
    from ..agent import AgentCore


class LimitHit(Exception):
    """Internal: a wall-clock deadline passed while waiting on the model or the tools."""

    def __init__(self, limit: str) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass(slots=True)
class PendingResults:
    """The tool message of the turn that ended an attempt, held back until validation."""

    results: list[ToolResult]
    index: int
    deferred: list[tuple[ToolCall, float]] = field(default_factory=list)  # (call, duration_ms)


@dataclass(slots=True)
class RunState:
    agent: AgentCore
    model: Model
    messages: list[Message]
    limits: Limits
    settings: ModelSettings
    emitter: Emitter
    ctx: RunContext[Any]
    trace: Trace
    run_id: str
    user_prompt: str | None
    streaming: bool = False
    user_token: bool = False
    new_message_index: int = 0
    attempt: int = 0
    iteration: int = 0
    attempt_iterations: int = 0
    phase: str = "starting"
    usage: Usage = field(default_factory=Usage)
    tool_counts: dict[str, int] = field(default_factory=dict)
    executed_calls: int = 0
    open_calls: list[ToolCall] = field(default_factory=list)
    pending: PendingResults | None = None
    last_output: Any = None
    last_preview_args: dict[str, Any] | None = None
    forcing: bool = False
    deadline: float | None = None
    suspended_deadline: float | None = None  # the run's deadline while a forced request runs
    history_chars: int = 0
    tracks_size: bool = False  # only when a token budget is set: keeps the hot path lean
    termination: Termination | None = None

    # -- derived -----------------------------------------------------------------------------

    @property
    def output(self) -> Output[Any]:
        return self.agent.output

    @property
    def cancel_token(self) -> CancelToken:
        return self.ctx.cancel_token

    @property
    def reflecting(self) -> bool:
        """Reflection is on, except for the forced output request at a limit."""
        return self.agent.output.reflect is not None and not self.forcing

    # -- lifecycle ---------------------------------------------------------------------------

    async def begin(self) -> None:
        self.trace.started_at = time.time()
        if self.limits.timeout is not None:
            self.deadline = time.monotonic() + self.limits.timeout
        store = self.agent.trace_store
        if store is not None:
            self._observer_call("trace_store.start", store.start, self.trace)

    async def end(self) -> None:
        store = self.agent.trace_store
        if store is not None:
            self._observer_call("trace_store.finish", store.finish, self.trace)
        playbook = self.agent.playbook
        if playbook is not None:
            self._observer_call("playbook.observe", playbook.observe, self.trace,
                                self.termination)

    def record_step(self) -> None:
        """Persist the trace so far (a crash mid-run keeps what happened up to it)."""
        store = self.agent.trace_store
        if store is not None:
            self._observer_call("trace_store.record_step", store.record_step, self.trace)

    def _observer_call(self, name: str, method: Callable[..., None], *args: Any) -> None:
        """A failing trace store or playbook (full disk, locked file) never breaks the run:
        its error is reported in ``result.callback_errors`` like a failing callback's."""
        try:
            method(*args)
        except Exception as exc:
            self.emitter.errors.append(CallbackError(name, repr(method), exc))

    async def emit(self, event: Event) -> None:
        await self.emitter.emit(event)

    def start_attempt(self) -> None:
        self.attempt += 1
        self.attempt_iterations = 0
        self.ctx.attempt = self.attempt
        self.ctx.attempt_state.clear()
        self.last_preview_args = None
        if self.forcing:  # a forced output ended the last attempt; this one is normal again
            self.forcing = False
            self.deadline = self.suspended_deadline

    def next_iteration(self) -> int:
        self.iteration += 1
        self.attempt_iterations += 1
        self.ctx.iteration = self.iteration
        return self.iteration

    # -- history -----------------------------------------------------------------------------

    def append(self, message: Message, calls: list[ToolCall] | None = None) -> None:
        """Append to the conversation, tracking which calls are still unanswered."""
        self.messages.append(message)
        if message.role == "assistant":
            self.open_calls = calls if calls is not None else message.tool_calls
        elif message.role == "tool":
            self.open_calls = []
        if self.tracks_size:
            self.history_chars += _chars(message)

    def step_done(self, step: Step) -> None:
        """The step's tools have run: persist it with its observations."""
        self.record_step()

    def close_pending(self, text: str, is_error: bool) -> None:
        """Answer the held-back call that ended the attempt, then append its tool message."""
        pending = self.pending
        if pending is None:
            return
        self.pending = None
        held = pending.results[pending.index]
        pending.results[pending.index] = ToolResult(held.call_id, held.name, text, is_error)
        answers = {r.call_id: r for r in pending.results}
        settled = {call.id for call, _ in pending.deferred} | {held.call_id}
        for record in self.trace.steps[-1].tool_calls:
            if record.call_id in settled:  # the held call and any it superseded
                answer = answers[record.call_id]
                record.result, record.error = (
                    (None, answer.content) if answer.is_error else (answer.content, None)
                )
        self.append(Message.tool_results(pending.results))

    async def settle_pending(self, text: str, error: str | None) -> None:
        """:meth:`close_pending`, then report the held calls' final observations.

        ``error``: ``None`` when the output was accepted, else the kind of failure
        (``ToolResultEvent.error_type``) given to the held call.
        """
        pending = self.pending
        self.close_pending(text, error is not None)
        if pending is None:
            return
        answers = {r.call_id: r for r in pending.results}
        for call, duration_ms in pending.deferred:
            answer = answers[call.id]
            await self.emit(ToolResultEvent(
                self.attempt, self.iteration, call, answer, duration_ms,
                error if answer.is_error else None,
            ))

    def answer_open_calls(self, reason: str) -> None:
        """On any early end: give every unanswered call an error result (history stays valid)."""
        if self.pending is not None:
            self.close_pending(reason, True)
        if self.open_calls:
            self.append(Message.tool_results(
                [ToolResult(c.id, c.name, reason, True) for c in self.open_calls]
            ))

    # -- limits ------------------------------------------------------------------------------

    def limit_reached(self) -> str | None:
        """The name of the limit that stops the next request, or ``None``."""
        limits = self.limits
        if limits.max_iterations is not None and self.attempt_iterations >= limits.max_iterations:
            return "max_iterations"
        if limits.max_tool_calls is not None and self.executed_calls >= limits.max_tool_calls:
            return "max_tool_calls"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "timeout"
        if self.tracks_size and self._over_token_budget():
            return "token_budget"
        return None

    def _over_token_budget(self) -> bool:
        limits, usage = self.limits, self.usage
        if limits.max_output_tokens is not None and usage.output_tokens >= limits.max_output_tokens:
            return True
        upcoming = self.history_chars // 4 + self.agent.tools_tokens
        max_input = limits.max_input_tokens
        if max_input is not None and usage.input_tokens + upcoming > max_input:
            return True
        total = limits.max_total_tokens
        return total is not None and usage.total_tokens + upcoming > total

    def limit_detail(self, limit: str) -> str:
        limits = self.limits
        details = {
            "max_iterations": f"max_iterations={limits.max_iterations} reached in attempt "
            f"{self.attempt}",
            "max_tool_calls": f"max_tool_calls={limits.max_tool_calls} reached",
            "timeout": f"timeout={limits.timeout}s reached",
            "token_budget": "token budget reached (input "
            f"{self.usage.input_tokens}/{limits.max_input_tokens}, output "
            f"{self.usage.output_tokens}/{limits.max_output_tokens}, total "
            f"{self.usage.total_tokens}/{limits.max_total_tokens})",
        }
        return details.get(limit, limit)

    def forced_settings(self) -> ModelSettings:
        """Settings of the final request at a limit: no tools, or the output tool forced."""
        self.forcing = True
        # The final answer gets its request even after a timeout; the deadline comes back if
        # a rejected forced output leads to another attempt.
        self.suspended_deadline, self.deadline = self.deadline, None
        if self.output.is_text:
            return replace(self.settings, tool_choice="none")
        assert self.output.tool is not None
        return replace(self.settings, tool_choice=self.output.tool.name)

    # -- cancellation and deadlines ----------------------------------------------------------

    def check_cancelled(self, phase: str) -> None:
        if self.cancel_token.cancelled:
            self.raise_cancelled(phase)

    def raise_cancelled(self, phase: str) -> None:
        self.phase = phase
        self.termination = Termination("cancelled", "raised", self.cancel_token.reason or "")
        raise Cancelled(
            f"run cancelled during {phase}: {self.cancel_token.reason}",
            phase=phase,
            attempt=self.attempt,
            iteration=self.iteration,
        )

    async def guard[T](self, awaitable: Awaitable[T], phase: str) -> T:
        """Await ``awaitable`` but stop it when the cancel token fires or the deadline passes.

        Without a user cancel token or a timeout this is a plain ``await`` (the hot path).
        """
        if not self.user_token and self.deadline is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        waiters: set[asyncio.Future[Any]] = {task}
        token_task = None
        if self.user_token:
            token_task = asyncio.ensure_future(self.cancel_token.wait())
            waiters.add(token_task)
        timeout = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            if token_task is not None:
                token_task.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if self.cancel_token.cancelled:
            self.raise_cancelled(phase)
        raise LimitHit("timeout")

    # -- results -----------------------------------------------------------------------------

    def record_failed_request(self, step: Step, started: float) -> None:
        """A request that raised still counts as a request and gets a step in the trace."""
        step.model_ms = (time.perf_counter() - started) * 1000.0
        step.usage = Usage(requests=1)
        self.usage.add(step.usage)
        self.trace.steps.append(step)

    def partial_output(self) -> Any:
        """What exists when a limit stops the run with ``on_limit="partial"``."""
        if not self.output.is_text:
            return self.last_output
        for message in reversed(self.messages):
            if message.role == "assistant" and message.text:
                return message.text
        return None

    def result(self, output: Any) -> RunResult[Any]:
        termination = self.termination or Termination("error", "raised", "run did not finish")
        return RunResult(
            output=output,
            messages=self.messages,
            new_message_index=self.new_message_index,
            usage=self.usage,
            trace=self.trace,
            termination=termination,
            run_id=self.run_id,
            callback_errors=self.emitter.errors,
        )

    def finish_trace(self, status: str, output: Any, error: Exception | None = None) -> None:
        trace = self.trace
        trace.ended_at = time.time()
        trace.status = status
        trace.usage = self.usage
        trace.output = output
        if self.termination is not None:
            trace.termination = self.termination.to_dict()
        if error is not None:
            code = getattr(error, "code", type(error).__name__)
            trace.error = {"code": code, "message": str(error),
                           "context": _plain(getattr(error, "context", {}))}


def _chars(message: Message) -> int:
    total = 8
    for part in message.parts:
        if isinstance(part, TextPart | ThinkingPart):
            total += len(part.text)
        elif isinstance(part, ToolCall):
            total += len(part.name) + len(part.raw_arguments)
        else:
            total += len(part.content)
    return total


def _plain(context: dict[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, str | int | float | bool | list) or v is None else repr(v)
            for k, v in context.items()}



"""Executing the tool calls of one model response.

Calls run in emission order, because calls in one turn may depend on each other (``cd`` then
``ls``). Consecutive calls to tools declared ``concurrent=True`` run together, and with
``parallel_tools=True`` every call of the turn does. Results always come back in call order.
Nothing a tool does can crash the run: unknown tools, malformed or invalid arguments,
exceptions, timeouts and unserializable results all become ``is_error`` observations.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..context import RunContext
from ..errors import Cancelled
from ..events import ToolCallEvent, ToolResultEvent
from ..messages import ToolCall, ToolResult
from ..output import SUBMIT_TOOL_NAME, OutputSchemaError
from ..tools import Tool, ToolArgumentsError, serialize_result
from ..tracing.trace import Step, ToolCallRecord
from .state import LimitHit, PendingResults
from .threads import TOOL_THREADS

if TYPE_CHECKING:
    from .state import RunState

@dataclass(slots=True)
class CallOutcome:
    """The results of a turn, in call order, and whether a call ended the attempt."""

    results: list[ToolResult] = field(default_factory=list)
    ended_by: str | None = None  # "output" or "submit"
    arguments: dict[str, Any] | None = None
    pending_index: int | None = None
    stopped: str | None = None  # "cancelled" or "timeout": later calls are not executed
    # Attempt-ending calls (output, submit): their observation is known only after validation,
    # so their ``on_tool_result`` waits for :meth:`RunState.settle_pending`.
    deferred: list[tuple[ToolCall, float]] = field(default_factory=list)


async def execute_calls(state: RunState, step: Step, calls: Sequence[ToolCall]) -> CallOutcome:
    """Answer every call of the turn; hold back the answer to an attempt-ending call."""
    outcome = CallOutcome()
    batch: list[tuple[ToolCall, Tool[Any]]] = []
    parallel = state.agent.parallel_tools

    for call in calls:
        tool = state.agent.tools.get(call.name)
        runs_in_batch = tool is not None and call.arguments is not None and (
            parallel or tool.concurrent
        )
        if runs_in_batch and tool is not None and _admit(state, tool) is None:
            batch.append((call, tool))
            continue
        if batch:
            await _run_batch(state, step, batch, outcome)
            batch = []
        await _run_one(state, step, call, tool, outcome)
    if batch:
        await _run_batch(state, step, batch, outcome)

    if outcome.ended_by is not None:
        assert outcome.pending_index is not None
        state.pending = PendingResults(outcome.results, outcome.pending_index, outcome.deferred)
    return outcome


async def _run_one(
    state: RunState, step: Step, call: ToolCall, tool: Tool[Any] | None, outcome: CallOutcome
) -> None:
    """One call outside a concurrent batch: output, submit, errors, or a sequential tool."""
    await state.emit(ToolCallEvent(state.attempt, state.iteration, call))
    started = time.perf_counter()
    kind = "tool"
    refusal: str | None = None
    error: str | None  # the kind of failure, None when the call succeeded
    if outcome.stopped:
        text, error = f"not executed: the run stopped ({outcome.stopped})", "run_stopped"
    elif call.arguments is None:
        text, error = f"Could not parse the arguments of `{call.name}`: {call.parse_error}. " \
            f"Raw arguments: {call.raw_arguments[:500]}", "invalid_arguments"
    elif state.output.tool is not None and call.name == state.output.tool.name:
        kind = "output"
        text, error = await _output_call(state, call, outcome)
    elif state.output.submit_tool is not None and call.name == SUBMIT_TOOL_NAME:
        kind = "submit"
        text, error = "", None
        _end_attempt(outcome, "submit", None)
    elif tool is None:
        kind = "unknown"
        text, error = _unknown_tool(state, call.name), "unknown_tool"
    elif (refusal := _admit(state, tool)) is not None:
        text, error = refusal, "call_limit"
    else:
        text, error = await _run_tool(state, tool, call, outcome)
    await _record(state, step, call, text, error, started, kind, outcome)


#: An observation and, when the call failed, the kind of failure (``ToolResultEvent.error_type``).
Answer = tuple[str, str | None]


async def _output_call(state: RunState, call: ToolCall, outcome: CallOutcome) -> Answer:
    assert call.arguments is not None
    if not state.reflecting:
        _end_attempt(outcome, "output", call.arguments)
        return "", None
    # Reflection: schema errors go straight back; otherwise the handler renders a preview.
    try:
        value = state.output.parse(call.arguments)
    except OutputSchemaError as exc:
        return "Output does not match the schema:\n" + "\n".join(exc.errors), "invalid_arguments"
    state.last_preview_args = call.arguments
    state.last_output = value
    try:
        preview = await state.output.preview(value, state.ctx)
    except Exception as exc:
        return f"The reflection handler failed: {type(exc).__name__}: {exc}", type(exc).__name__
    return (
        f"{preview}\n\nIf this is right, call `{SUBMIT_TOOL_NAME}`; otherwise call "
        f"`{call.name}` again with a corrected output."
    ), None


async def refuse_calls(state: RunState, step: Step, calls: Sequence[ToolCall], reason: str
                       ) -> list[ToolResult]:
    """Answer calls without running them (the model called tools when tools were withdrawn):
    each still fires its events and gets a trace record, so trace, events and usage agree."""
    outcome = CallOutcome()
    for call in calls:
        await state.emit(ToolCallEvent(state.attempt, state.iteration, call))
        await _record(state, step, call, reason, "tools_disabled", time.perf_counter(),
                      "refused", outcome)
    return outcome.results


def _end_attempt(outcome: CallOutcome, by: str, arguments: dict[str, Any] | None) -> None:
    """The last attempt-ending call of a turn wins; an earlier one is marked superseded."""
    if outcome.pending_index is not None:
        held = outcome.results[outcome.pending_index]
        outcome.results[outcome.pending_index] = ToolResult(
            held.call_id, held.name, "Superseded by a later call in the same turn.", False
        )
    outcome.ended_by = by
    if by == "output":
        outcome.arguments = arguments
    outcome.pending_index = len(outcome.results)


async def _run_batch(
    state: RunState, step: Step, batch: list[tuple[ToolCall, Tool[Any]]], outcome: CallOutcome
) -> None:
    """Consecutive concurrency-safe calls: start together, answer in call order."""
    if len(batch) == 1:
        call, tool = batch[0]
        await _run_one(state, step, call, tool, outcome)
        return
    for call, _ in batch:
        await state.emit(ToolCallEvent(state.attempt, state.iteration, call))
    started = time.perf_counter()
    if outcome.stopped:
        answers: list[Answer] = [
            (f"not executed: the run stopped ({outcome.stopped})", "run_stopped")
        ] * len(batch)
    else:
        answers = await asyncio.gather(
            *(_run_tool(state, tool, call, outcome) for call, tool in batch)
        )
    for (call, _), (text, error) in zip(batch, answers, strict=True):
        await _record(state, step, call, text, error, started, "tool", outcome)


async def _run_tool(
    state: RunState, tool: Tool[Any], call: ToolCall, outcome: CallOutcome
) -> Answer:
    """Validate, invoke (with timeout and cancellation), serialize, truncate."""
    assert call.arguments is not None
    try:
        arguments = tool.validate(call.arguments)
    except ToolArgumentsError as exc:
        listed = "\n".join(f"- {p}" for p in exc.problems)
        schema = json.dumps(tool.spec.parameters, separators=(",", ":"))
        return (f"Invalid arguments for `{tool.name}`:\n{listed}\nExpected schema: {schema}",
                "invalid_arguments")
    ctx = _call_context(state, tool, call)
    try:
        value = await state.guard(_invoke(tool, ctx, arguments), "tool_execution")
    except TimeoutError:
        return f"Tool `{tool.name}` timed out after {tool.timeout} s.", "timeout"
    except asyncio.CancelledError:
        if state.cancel_token.cancelled:
            outcome.stopped = "cancelled"
            return "not completed: the run was cancelled", "cancelled"
        raise
    except Exception as exc:
        stop = _stop_kind(exc)
        if stop is not None:
            outcome.stopped = stop
            return f"not completed: the run stopped ({stop})", "run_stopped"
        return f"Tool `{tool.name}` failed: {type(exc).__name__}: {exc}", type(exc).__name__
    text, ok = serialize_result(value)
    return _truncate(text, state.limits.max_observation_chars), (
        None if ok else "unserializable_result")


async def _invoke(tool: Tool[Any], ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
    if tool.is_async:
        call = tool.invoke(ctx, arguments)
        return await (asyncio.wait_for(call, tool.timeout) if tool.timeout else call)
    if tool.inline:
        return tool.invoke(ctx, arguments)
    # Off the event loop, on a reused worker thread (see toolcycle.run.threads).
    future = TOOL_THREADS.run(lambda: tool.invoke(ctx, arguments))
    return await (asyncio.wait_for(future, tool.timeout) if tool.timeout else future)


def _stop_kind(exc: Exception) -> str | None:
    """The run's own cancellation or deadline surfacing through a tool await."""
    if isinstance(exc, Cancelled):
        return "cancelled"
    if isinstance(exc, LimitHit):
        return "timeout"
    return None


def _call_context(state: RunState, tool: Tool[Any], call: ToolCall) -> RunContext[Any]:
    if tool.context_param is None:
        return state.ctx
    base = state.ctx
    return RunContext(
        deps=base.deps, usage=base.usage, cancel_token=base.cancel_token, run_id=base.run_id,
        agent_name=base.agent_name, iteration=base.iteration, attempt=base.attempt,
        run_state=base.run_state, attempt_state=base.attempt_state,
        tool_call_id=call.id, tool_name=call.name,
    )


def _admit(state: RunState, tool: Tool[Any]) -> str | None:
    """Count the call against the per-tool and per-run budgets; say why if it is refused."""
    used = state.tool_counts.get(tool.name, 0)
    if tool.max_calls is not None and used >= tool.max_calls:
        return (f"`{tool.name}` may be called at most {tool.max_calls} time(s) per run; "
                "it was not called. Use what you have.")
    limit = state.limits.max_tool_calls
    if limit is not None and state.executed_calls >= limit:
        return f"The run's tool-call limit ({limit}) is reached; `{tool.name}` was not called."
    state.tool_counts[tool.name] = used + 1
    state.executed_calls += 1
    return None


def _unknown_tool(state: RunState, name: str) -> str:
    available = ", ".join(d.name for d in state.settings.tools) or "(none)"
    return f"Unknown tool `{name}`. Available tools: {available}."


def _truncate(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}\n[... truncated: {cut} of {len(text)} characters cut]"


async def _record(
    state: RunState,
    step: Step,
    call: ToolCall,
    text: str,
    error: str | None,
    started: float,
    kind: str,
    outcome: CallOutcome,
) -> None:
    is_error = error is not None
    result = ToolResult(call.id, call.name, text, is_error)
    outcome.results.append(result)
    duration_ms = (time.perf_counter() - started) * 1000.0
    step.tool_calls.append(ToolCallRecord(
        call.id, call.name, call.arguments, state.iteration, state.attempt,
        None if is_error else text, text if is_error else None, duration_ms, kind,
    ))
    if outcome.pending_index == len(outcome.results) - 1:
        outcome.deferred.append((call, duration_ms))  # answered after validation
        return
    await state.emit(
        ToolResultEvent(state.attempt, state.iteration, call, result, duration_ms, error)
    )

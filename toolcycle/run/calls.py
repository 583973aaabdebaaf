"""Executing the tool calls of one model response: one :class:`Turn`.

Calls run in emission order, because calls in one turn may depend on each other (``cd`` then
``ls``). Consecutive calls to tools declared ``concurrent=True`` run together, and with
``parallel_tools=True`` every call of the turn does. Results always go back in call order.
Nothing a tool does can crash the run: unknown tools, malformed or invalid arguments,
exceptions (``CancelledError`` raised by the tool itself included), timeouts and
unserializable results all become ``is_error`` observations.

Every answer is kept in the turn the moment it exists, so a run that stops mid-turn (a cancel,
a deadline, a crash) answers only the calls that did not finish: :func:`stop_turn`. The call
that ends the attempt (the output tool, or ``submit``) is not answered here: it becomes the
run's :class:`~toolcycle.output.HeldAnswer`, written once the output is judged.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Sequence
from typing import Any

from .._observation import Observation, holds_media, observe_media
from ..approval import Approve, Defer
from ..context import RunContext
from ..events import DONE, Event, ToolCallEvent, ToolResultEvent
from ..messages import Message, ToolCall, names_an_answer, nearest_tool_name
from ..output import SUBMIT_TOOL_NAME, Answer, HeldAnswer, answer_result
from ..tools import Tool, ToolArgumentsError, ToolDefinition, serialize_result
from ..tracing.trace import TOOL_FAILED
from .approvals import PauseRun, decide_turn
from .call_scope import admit, call_context
from .guards import guarded_call
from .producers import required_of
from .recovery import advice
from .scope import CancelledByToken, LimitHit
from .state import RunState, Turn
from .team import (
    HandoffTool,
    MemberFailed,
    MemberPaused,
    MemberTool,
    close_members,
    pause_for_members,
    run_member,
    start_handoff,
)
from .threads import TOOL_THREADS
from .unasked_conversion import UNASKED_CONVERSION, unasked_conversion
from .unreadable_arguments import unreadable_advice
from .unsourced_call import UNSOURCED, unsourced_call

# -- one turn ----------------------------------------------------------------------------------


async def execute_turn(state: RunState, turn: Turn) -> None:
    """Answer every call of the turn, except an attempt-ending one (``state.held``)."""
    core = state.setup.core
    tools = core.tools
    parallel = core.parallel_tools
    batch: list[tuple[ToolCall, Tool[Any]]] = []
    token = state.ctx.cancel_token
    decisions = turn.decisions
    if core.gated and decisions is None:  # tool approval: every call decided before any runs
        decisions = turn.decisions = await decide_turn(state, turn)
    resuming = turn.resuming  # a resumed team's paused members (None nearly always)
    calls = turn.calls if not (turn.resume_from or turn.answers) else [
        c for c in turn.calls[turn.resume_from:] if c.id not in turn.answers]  # (resumed)
    for call in calls:
        if token.cancelled:  # a tool cancelled the run (its own token is not watched then)
            raise CancelledByToken  # (a resumed team's paused members are closed as it ends)
        if decisions is not None and call.id in decisions:
            decision = decisions[call.id]
            if not isinstance(decision, Approve):
                if batch:
                    await _run_batch(state, turn, batch)
                    batch = []
                if isinstance(decision, Defer):  # this call and the rest wait for a person
                    if token.cancelled:  # by a call of the batch just run: cancelled, not paused
                        raise CancelledByToken
                    turn.resume_from = turn.calls.index(call)
                    raise PauseRun
                await _settle(state, turn, call, "tool", (decision.reason, "denied"))
                continue
        # A repaired name is no tool's, even if a tool happens to be called like the placeholder.
        tool = None if call.original_name is not None else tools.get(call.name)
        if (tool is not None and call.arguments is not None and (parallel or tool.concurrent)
                and not turn.stopped):
            refusal = None if resuming and call.id in resuming else _refusal(state, tool, call)
            if refusal is None:
                batch.append((call, tool))
                continue
            if batch:
                await _run_batch(state, turn, batch)
                batch = []
            await _settle(state, turn, call, "tool", refusal)
            continue
        if batch:
            await _run_batch(state, turn, batch)
            batch = []
        await _run_one(state, turn, call, tool)
    if batch:
        await _run_batch(state, turn, batch)
    # a paused member whose call was answered without it: closed
    if turn.resuming and (interrupted := await close_members(
            state, "its call was answered without it")):
        raise interrupted


async def _run_one(state: RunState, turn: Turn, call: ToolCall, tool: Tool[Any] | None) -> None:
    """One call outside a concurrent batch: output, submit, errors, or a sequential tool."""
    output = state.output
    if output.tool is not None and call.name == output.tool.name and call.arguments is not None:
        if turn.stopped:
            await _settle(state, turn, call, "output", _not_executed(turn.stopped))
            return
        await _announce(state, turn, call, "output")
        if state.reflecting:
            await _preview(state, turn, call)
        else:
            await _hold(state, turn, call, call.arguments)
        return
    if output.submit_tool is not None and call.name == SUBMIT_TOOL_NAME:
        if turn.stopped:
            await _settle(state, turn, call, "submit", _not_executed(turn.stopped))
        else:
            await _announce(state, turn, call, "submit")
            await _hold(state, turn, call, state.last_preview_args)
        return
    kind = "tool" if tool is not None else "output" if output.tool is not None and (
        call.name == output.tool.name) else "unknown"
    if turn.stopped:
        await _settle(state, turn, call, kind, _not_executed(turn.stopped))
    elif call.arguments is None and kind != "unknown":  # an unknown tool's are not the point
        await _settle(state, turn, call, kind, (
            f"Could not parse the arguments of `{call.name}`: {call.parse_error}. "
            f"Raw arguments: {call.raw_arguments[:500]}"
            + unreadable_advice(call.name, call.raw_arguments, state.setup.settings.tools),
            "invalid_arguments"))
    elif tool is None:
        await _settle(state, turn, call, kind, (_unknown_tool(state, call), "unknown_tool"))
    else:
        resumed = turn.resuming is not None and call.id in turn.resuming  # announced, admitted
        if not resumed:
            await _announce(state, turn, call, kind)
        answer: Answer
        if not resumed and (refusal := _refusal(state, tool, call)) is not None:
            answer = refusal
        else:
            try:
                answer = await state.interrupts.guard(_run_tool(state, tool, call))
            except LimitHit:
                turn.stopped = "timeout"
                answer = _TIMED_OUT
            except MemberPaused as paused:  # the call stays open; the run pauses
                pause_for_members(turn, {call.id: paused.result})
                raise PauseRun from None
        await _answer(state, turn, call, answer)


async def _run_batch(state: RunState, turn: Turn, batch: list[tuple[ToolCall, Tool[Any]]]
                     ) -> None:
    """Consecutive concurrency-safe calls (already admitted): start together, answer in order.
    Members that pause keep their calls open, and the run pauses once the others answered."""
    resuming, paused = turn.resuming or {}, dict[str, Any]()
    for call, _ in batch:
        if call.id not in resuming:
            await _announce(state, turn, call, "tool")

    async def run(call: ToolCall, tool: Tool[Any]) -> None:
        try:
            _store(turn, call, await _run_tool(state, tool, call))
        except MemberPaused as member:
            paused[call.id] = member.result

    async def run_all() -> None:  # a coroutine: nothing starts if the guard refuses at once
        await asyncio.gather(*(run(call, tool) for call, tool in batch))

    try:
        await state.interrupts.guard(run_all())
    except LimitHit:
        turn.stopped = "timeout"
        for call, _ in batch:
            if call.id not in turn.answers and call.id not in paused:
                _store(turn, call, _TIMED_OUT)
    await _report(state, turn)
    if paused:
        pause_for_members(turn, paused)
        raise PauseRun


async def _preview(state: RunState, turn: Turn, call: ToolCall) -> None:
    """Reflection: the output call is answered with a preview of the output."""
    assert call.arguments is not None
    try:
        answer, value = await state.interrupts.guard(
            state.output.preview_answer(call, state.ctx))
    except LimitHit:
        turn.stopped = "timeout"
        answer, value = _TIMED_OUT, None
    if value is not None:
        state.last_preview_args = call.arguments
        state.last_output = value
    await _answer(state, turn, call, answer)


async def _hold(state: RunState, turn: Turn, call: ToolCall, arguments: dict[str, Any] | None
                ) -> None:
    """The call ends the attempt; the last such call of a turn wins.

    The new call is held before the superseded one's answer is reported: a cancel inside
    that report's callback must find the answer it already shows, not overwrite it."""
    previous = state.held
    state.held = HeldAnswer(call, arguments, turn.started[call.id])
    if previous is not None:
        await _answer(state, turn, previous.call,
                      ("Superseded by a later call in the same turn.", None))


# -- answering ---------------------------------------------------------------------------------


def _announce(state: RunState, turn: Turn, call: ToolCall, kind: str) -> Awaitable[None]:
    return state.emit(_announcement(turn, call, kind, decided=True))


def _announcement(turn: Turn, call: ToolCall, kind: str, decided: bool = False
                  ) -> ToolCallEvent:
    """The call's event; ``decided`` carries the person's decision (a call the run answers
    as it stops was never decided on in this run, even if it was deferred)."""
    turn.started[call.id] = time.perf_counter()
    decisions = turn.decisions
    return ToolCallEvent(turn.attempt, turn.iteration, call, kind,
                         None if decisions is None or not decided else decisions.get(call.id))


async def _settle(state: RunState, turn: Turn, call: ToolCall, kind: str, answer: Answer
                  ) -> None:
    """A call answered without running (denied, refused, unparseable, unknown, or the turn
    stopped): its answer is kept before its events go out, so a cancel inside a callback of
    either event ends the run with this answer, not a made-up "not completed"."""
    announcement = _announcement(turn, call, kind, decided=True)
    _store(turn, call, answer)
    await state.emit(announcement)
    await _report(state, turn)


def _store(turn: Turn, call: ToolCall, answer: Answer) -> None:
    turn.answers[call.id] = (answer_result(call, answer), answer[1], time.perf_counter())


def _answer(state: RunState, turn: Turn, call: ToolCall, answer: Answer) -> Awaitable[None]:
    error = answer[1]  # _store(turn, call, answer), inline: this is once per call
    result = answer_result(call, answer)
    finished = time.perf_counter()
    call_id = call.id
    turn.answers[call_id] = (result, error, finished)
    if len(turn.calls) == 1:  # the common turn: its one answer is the one to report
        turn.reported.add(call_id)  # _result_event(turn, call), inline
        duration = (finished - turn.started.get(call_id, finished)) * 1000.0
        return state.emit(ToolResultEvent(turn.attempt, turn.iteration, call, result, duration,
                                          error))
    return _report(state, turn)


def _report(state: RunState, turn: Turn) -> Awaitable[None]:
    """Send the answers not yet reported as events, in call order.

    Plain, not ``async``: the usual case is one answer, whose event's awaitable comes back
    as is (a coroutine per answer less on the hot path)."""
    answers, reported = turn.answers, turn.reported
    due = [c for c in turn.calls if c.id in answers and c.id not in reported]
    if not due:
        return DONE
    if len(due) == 1:
        return state.emit(_result_event(turn, due[0]))
    return _report_each(state, turn, due)


async def _report_each(state: RunState, turn: Turn, due: list[ToolCall]) -> None:
    for call in due:
        if call.id not in turn.reported:
            await state.emit(_result_event(turn, call))


def _result_event(turn: Turn, call: ToolCall) -> ToolResultEvent:
    turn.reported.add(call.id)
    result, error, finished = turn.answers[call.id]
    duration = (finished - turn.started.get(call.id, finished)) * 1000.0
    return ToolResultEvent(turn.attempt, turn.iteration, call, result, duration, error)


async def answer_held(state: RunState, answer: Answer) -> None:
    """Write the held answer (accepted, rejected, or stopped) and close its turn."""
    held, turn = state.held, state.turn
    assert held is not None and turn is not None
    state.held = None
    await _answer(state, turn, held.call, answer)
    close_turn(state, turn)


def close_turn(state: RunState, turn: Turn) -> None:
    answers = turn.answers
    state.append(Message("tool", [answers[c.id][0] for c in turn.calls]))
    state.turn = None


def stop_turn(state: RunState, why: str, error_type: str) -> list[Event]:
    """The run stops with the turn open: keep the answers that exist, answer the rest.

    Synchronous, so that a second cancellation cannot leave the history or the trace half
    written: the answers are appended and recorded here, and the events are returned for the
    caller to deliver to the callbacks.
    """
    turn = state.turn
    if turn is None:
        return []
    events: list[Event] = []
    if state.held is not None:
        held, state.held = state.held, None
        _store(turn, held.call, HeldAnswer.stopped(why, error_type))
    for call in turn.calls:
        if call.id not in turn.answers:
            if call.id in turn.started:
                _store(turn, call, (f"not completed: {why} while it ran", error_type))
            else:
                events.append(_announcement(turn, call, "tool"))
                _store(turn, call, (f"not executed: {why}", error_type))
        if call.id not in turn.reported:
            events.append(_result_event(turn, call))
    for event in events:
        state.trace.apply(event)
    close_turn(state, turn)
    return events


async def refuse_calls(state: RunState, turn: Turn, reason: str) -> None:
    """Answer calls without running them (the model called tools when they were withdrawn):
    each still fires its events and gets a trace record, so trace, events and usage agree."""
    for call in turn.calls:
        await _settle(state, turn, call, "refused", (reason, "tools_disabled"))
    close_turn(state, turn)


#: How the loop opens and ends its refusal of a call's arguments (words for the model: what
#: learns from traces reads ``ToolCallRecord.error_type == "invalid_arguments"`` instead).
REFUSAL_HEADER = "Invalid arguments for `{name}`:"
REFUSAL_SCHEMA = "Expected schema:"

#: The answer to a call that was running when the run's deadline passed.
_TIMED_OUT: Answer = ("not completed: the run's timeout was reached while it ran", "run_stopped")


def _refusal(state: RunState, tool: Tool[Any], call: ToolCall) -> Answer | None:
    """Why a call is answered without running: measures from no source while the model is
    still looking them up (:mod:`.unsourced_call`), a conversion of a figure the request
    does not ask about (:mod:`.unasked_conversion`), or a budget spent
    (:func:`.call_scope.admit`, which counts the call where it runs)."""
    unsourced = unsourced_call(state, tool.spec.parameters, call)
    if unsourced is not None:
        return unsourced, UNSOURCED
    if (unasked := unasked_conversion(state, call, tool.spec.description)) is not None:
        return unasked, UNASKED_CONVERSION
    refusal = admit(state, tool, call.name)
    return None if refusal is None else (refusal, "call_limit")


def _not_executed(stopped: str) -> Answer:
    return f"not executed: the run stopped ({stopped})", "run_stopped"


# -- one tool ----------------------------------------------------------------------------------


def _run_tool(state: RunState, tool: Tool[Any], call: ToolCall) -> Awaitable[Answer]:
    """The call, through the loop guard and the tool guardrails when the run has them
    (:mod:`.guards`); plain otherwise (no coroutine more on the hot path)."""
    if state.repeats is None and state.setup.core.guardrails is None:
        return _invoke(state, tool, call)
    turn = state.turn  # a paused member's call goes on: checked and counted when it started
    resumed = turn is not None and turn.resuming is not None and call.id in turn.resuming
    return guarded_call(state, tool, call, _invoke, lambda: call_context(state, tool, call),
                        resumed)


async def _invoke(state: RunState, tool: Tool[Any], call: ToolCall) -> Answer:
    """Validate, invoke (with the tool's timeout), serialize, truncate."""
    assert call.arguments is not None
    try:
        arguments = tool.validate(call.arguments)
    except ToolArgumentsError as exc:
        listed = "\n".join(f"- {p}" for p in exc.problems)
        schema = json.dumps(tool.spec.parameters, separators=(",", ":"))
        return (f"{REFUSAL_HEADER.format(name=tool.name)}\n{listed}\n{REFUSAL_SCHEMA} {schema}"
                f"{advice(state, tool, call.arguments, call.id, True)}", "invalid_arguments")
    ctx = state.ctx if tool.context_param is None else call_context(state, tool, call)
    try:
        if isinstance(tool, MemberTool):  # another agent, run inside this run
            value = await run_member(state, tool, call, arguments)
        elif isinstance(tool, HandoffTool):  # hands the run over once the turn is answered
            value = start_handoff(state, tool)
        elif tool.is_async:
            pending = tool.invoke(ctx, arguments)
            value = await (asyncio.wait_for(pending, tool.timeout) if tool.timeout else pending)
        elif tool.inline:
            value = tool.invoke(ctx, arguments)
        else:
            value = await on_thread(tool, ctx, arguments)
    except TimeoutError as exc:
        if tool.timeout is None or str(exc):  # the tool's own (a client's deadline): its words
            return f"Tool `{tool.name}` timed out: {exc or 'TimeoutError'}", "timeout"
        return f"Tool `{tool.name}` timed out after {tool.timeout} s.", "timeout"
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the run is being cancelled or timed out: not the tool's doing
        return f"Tool `{tool.name}` failed: CancelledError (raised by the tool)", "CancelledError"
    except MemberFailed as failed:
        return failed.text, failed.code
    except MemberPaused:
        raise
    except Exception as exc:
        return (f"{TOOL_FAILED.format(name=tool.name, kind=type(exc).__name__)}{exc}"
                f"{advice(state, tool, call.arguments, call.id, False, str(exc))}",
                type(exc).__name__)
    if holds_media(value):  # an image or a document for the model to see
        observed, ok = observe_media(value)
        limit = state.limits.max_observation_chars
        if limit is not None and len(observed.text) > limit:
            observed = Observation(_truncate(observed.text, limit), observed.media)
        return observed, None if ok else "unserializable_result"
    text, ok = serialize_result(value)
    limit = state.limits.max_observation_chars
    if limit is not None and len(text) > limit:
        text = _truncate(text, limit)
    return text, None if ok else "unserializable_result"


async def on_thread(tool: Tool[Any], ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
    """A sync tool off the event loop, on a reused worker thread (see toolcycle.run.threads)."""
    job = TOOL_THREADS.start(lambda: tool.invoke(ctx, arguments))
    try:
        return await (asyncio.wait_for(job.future, tool.timeout) if tool.timeout else job.future)
    except BaseException:
        job.give_up()  # timed out or cancelled: the thread runs on, its result is dropped
        raise


def _unknown_tool(state: RunState, call: ToolCall) -> str:
    available = ", ".join(d.name for d in state.setup.settings.tools) or "(none)"
    if call.original_name is not None:  # repaired before it entered the history
        return (f"`{call.original_name[:200]}` is not a tool name (names are letters, digits, "
                f"_ and -). Available tools: {available}.")
    if _NO_ACTION.fullmatch(call.name) or names_an_answer(call.name):
        # "Action: None" (Qwen2.5-Coder-1.5B, ReAct, with the answer already in an observation):
        # told only that its arguments did not parse, it wrote the same to the iteration limit;
        # answer({"answer": ...}) (the same model, JSON): told "Unknown tool", the same
        return (f"`{call.name}` is not a tool: if you have the answer, give it as your final "
                f"answer. Available tools: {available}.")
    meant = nearest_tool_name(call.name, [d.name for d in state.setup.settings.tools])
    if meant is not None:
        return (f"Unknown tool `{call.name}`: did you mean `{meant}`? "
                f"Available tools: {available}.")
    taker = _taking(call.arguments, state.setup.settings.tools)
    if taker is not None:
        return (f"Unknown tool `{call.name}`: `{taker}` is the tool that takes "
                f"{', '.join(call.arguments or ())}; did you mean it? "
                f"Available tools: {available}.")
    return f"Unknown tool `{call.name}`. Available tools: {available}."


def _taking(arguments: dict[str, Any] | None, tools: Sequence[ToolDefinition]) -> str | None:
    """The one offered tool whose parameters are the arguments of a call to a name no tool
    has (every argument one of its properties, every property it requires given), or None.

    Why: a small model blends names ("stay_day_stats" for ``house_day_stats`` beside
    ``stay_card``), too far from any one tool for the name alone to say which it meant,
    while the arguments it wrote are the parameters of exactly one. Told only "Unknown
    tool" and the list, Qwen2.5-Coder-1.5B wrote the same call to the iteration limit."""
    if not arguments:
        return None
    fits = [d.name for d in tools
            if isinstance(props := d.parameters.get("properties"), dict)
            and set(arguments) <= set(props)
            and set(required_of(d.parameters)) <= set(arguments)]
    return fits[0] if len(fits) == 1 else None


#: Tool names a model writes when it means no tool at all.
_NO_ACTION = re.compile(r"(?i)none|null|nil|n/?a|no[ _-]?(?:action|tool)s?|nothing|-+")


def _truncate(text: str, limit: int) -> str:
    cut = len(text) - limit
    return f"{text[:limit]}\n[... truncated: {cut} of {len(text)} characters cut]"



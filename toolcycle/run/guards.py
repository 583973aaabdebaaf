"""Running an agent's guardrails (:mod:`toolcycle.guardrails`) at their points in the run.

A guardrail is awaited like a tool: async ones through the run's interrupts, sync ones on a
worker thread (:mod:`.threads`), so a cancel or the deadline stops the run while one checks.
One that raises trips: a check that cannot say "fine" is no pass. Every trip is emitted as a
:class:`~toolcycle.events.GuardrailEvent`, which the trace records (``trace.guardrails``).

- input: :func:`check_input` before the first request, or :func:`start_beside` (a task
  started with the run) and :func:`await_beside` once the first reply is in, before anything
  of it is acted on;
- output: :func:`check_output`, after validation;
- tools: :func:`check_arguments` and :func:`check_result`, around each call, with the loop
  guard (``Limits.max_repeats``) between them: :func:`guarded_call`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .._observation import Observation
from ..context import RunContext
from ..errors import GuardrailTripped, RunTimeout
from ..events import GuardrailEvent, LoopGuardEvent
from ..guardrails import Guardrail, Trip
from ..messages import ToolCall, ToolResult
from ..output import Answer, answer_result
from ..tools import Tool
from .scope import CancelledByToken, LimitHit
from .state import RunState
from .threads import TOOL_THREADS


async def _verdict(guardrail: Guardrail, ctx: RunContext[Any], value: Any,
                   run: RunState | None) -> Trip | None:
    """What the guardrail says; awaited through the run's interrupts when ``run`` is given
    (a beside check runs in a task of its own, which the run cancels instead)."""
    function = guardrail.function
    try:
        if guardrail.is_async:
            pending = function(ctx, value)
            outcome = await (run.interrupts.guard(pending) if run is not None else pending)
        else:
            job = TOOL_THREADS.start(lambda: function(ctx, value))
            try:
                outcome = await (run.interrupts.guard(job.future) if run is not None
                                 else job.future)
            except BaseException:
                job.give_up()
                raise
            if inspect.isawaitable(outcome):  # a sync function that returned a coroutine
                outcome = await (run.interrupts.guard(outcome) if run is not None else outcome)
    except (CancelledByToken, LimitHit):
        raise  # the run's own cancel or deadline
    except Exception as exc:
        return Trip(f"the guardrail raised {type(exc).__name__}: {exc}"[:2000])
    if outcome is None or outcome is False or outcome == "":
        return None
    if isinstance(outcome, Trip):
        return outcome
    if isinstance(outcome, str):
        return Trip(outcome)
    if outcome is True:
        return Trip("tripped")
    return Trip(f"the guardrail returned {type(outcome).__name__}, not None, a reason or a "
                "Trip")


async def _tripped(state: RunState, guardrail: Guardrail, trip: Trip,
                   call: ToolCall | None = None) -> None:
    halts = guardrail.kind in ("input", "output") or trip.halt
    await state.emit(GuardrailEvent(guardrail.kind, guardrail.name, trip.reason, dict(trip.info),
                                    None if call is None else call.id, halts))


def _error(guardrail: Guardrail, trip: Trip) -> GuardrailTripped:
    return GuardrailTripped(
        f"{guardrail.kind} guardrail {guardrail.name!r} tripped: {trip.reason}",
        guardrail=guardrail.name, kind=guardrail.kind, reason=trip.reason)


def input_value(state: RunState) -> Any:
    """What input guardrails check: the typed input, or the user prompt."""
    setup = state.setup
    if setup.task_input is not None:
        return setup.task_input
    if setup.user_prompt is not None:
        return setup.user_prompt
    last = state.messages[-1] if state.messages else None
    return last.text if last is not None else ""


async def check_input(state: RunState, guardrails: tuple[Guardrail, ...]) -> None:
    """Input guardrails before the first request: a trip ends the run (raises). The deadline
    passing meanwhile ends it with ``RunTimeout`` whatever ``on_limit`` says: a final request
    would send the model an input no guardrail passed."""
    value = input_value(state)
    for guardrail in guardrails:
        try:
            trip = await _verdict(guardrail, state.ctx, value, state)
        except LimitHit:
            raise RunTimeout(f"{state.limits.describe('timeout', state)} while the input "
                             f"guardrail {guardrail.name!r} checked", limit="timeout") from None
        if trip is not None:
            await _tripped(state, guardrail, trip)
            raise _error(guardrail, trip)


def start_beside(state: RunState, guardrails: tuple[Guardrail, ...]
                 ) -> asyncio.Task[tuple[Guardrail, Trip] | None]:
    """Input guardrails beside the first request: they run in a task of their own, started
    now; :func:`await_beside` collects them before the first reply is acted on."""
    value = input_value(state)

    async def run_all() -> tuple[Guardrail, Trip] | None:
        for guardrail in guardrails:
            trip = await _verdict(guardrail, state.ctx, value, None)
            if trip is not None:
                return guardrail, trip
        return None

    return asyncio.ensure_future(run_all())


async def await_beside(state: RunState) -> None:
    """The first reply is in: wait for the beside guardrails (through the run's interrupts);
    a trip ends the run before any of the reply's calls runs."""
    task = state.input_check
    assert task is not None
    # shielded: a deadline passing meanwhile leaves the check running, for the limit's
    # answer to wait on (loop._at_limit); a cancel ends the run, which stops it (stop_beside)
    found = await state.interrupts.guard(asyncio.shield(task))
    state.input_check = None
    if found is not None:
        guardrail, trip = found
        await _tripped(state, guardrail, trip)
        raise _error(guardrail, trip)


def stop_beside(state: RunState) -> None:
    """The run ended before its first reply: the beside check is not needed any more."""
    task, state.input_check = state.input_check, None
    if task is not None and not task.done():
        task.cancel()


async def check_output(state: RunState, guardrails: tuple[Guardrail, ...], output: Any
                       ) -> None:
    """Output guardrails on the validated output: a trip ends the run (raises).

    The deadline passing while one checks ends the run with :class:`RunTimeout`, as for an
    input guardrail: the output cannot be returned unchecked, and a final answer asked for
    instead would wait on the same check with no deadline left (``on_limit="final_answer"``
    suspends it for that answer), which is how a guardrail that never returned held a run
    with a 0.05 s timeout for the guardrail's own 30 s."""
    for guardrail in guardrails:
        try:
            trip = await _verdict(guardrail, state.ctx, output, state)
        except LimitHit:
            raise RunTimeout(f"{state.limits.describe('timeout', state)} while the output "
                             f"guardrail {guardrail.name!r} checked", limit="timeout") from None
        if trip is not None:
            await _tripped(state, guardrail, trip)
            raise _error(guardrail, trip)


def _applies(guardrail: Guardrail, name: str) -> bool:
    return guardrail.tools is None or name in guardrail.tools


async def check_arguments(state: RunState, guardrails: tuple[Guardrail, ...], call: ToolCall,
                          ctx: RunContext[Any]) -> str | None:
    """Tool guardrails on a call's arguments: why the call is blocked, or ``None``. A trip
    with ``halt=True`` ends the run (raises)."""
    return await _check_call(state, guardrails, call, call, ctx, "Blocked")


async def check_result(state: RunState, guardrails: tuple[Guardrail, ...], call: ToolCall,
                       result: ToolResult, ctx: RunContext[Any]) -> str | None:
    """Tool guardrails on a call's result: why the result is withheld, or ``None``."""
    return await _check_call(state, guardrails, call, result, ctx, "Withheld")


async def _check_call(state: RunState, guardrails: tuple[Guardrail, ...], call: ToolCall,
                      value: Any, ctx: RunContext[Any], verb: str) -> str | None:
    for guardrail in guardrails:
        if not _applies(guardrail, call.name):
            continue
        trip = await _verdict(guardrail, ctx, value, state)
        if trip is not None:
            await _tripped(state, guardrail, trip, call)
            if trip.halt:
                raise _error(guardrail, trip)
            return f"{verb} by guardrail {guardrail.name!r}: {trip.reason}"
    return None


async def guarded_call(state: RunState, tool: Tool[Any], call: ToolCall,
                       invoke: Callable[[RunState, Tool[Any], ToolCall], Awaitable[Answer]],
                       context: Callable[[], RunContext[Any]], resumed: bool = False
                       ) -> Answer:
    """A call through its guards: the arguments guardrails (a trip blocks it), the loop guard
    (a call that keeps returning the same result is nudged, refused, then ends the run), the
    call itself (``invoke``), and the result guardrails (a trip withholds the result). A
    ``resumed`` call (a team member's, going on after a pause) passed the first two when it
    started: only its result is checked."""
    guards = state.setup.core.guardrails
    ctx = context() if guards is not None else state.ctx
    if guards is not None and guards.arguments and not resumed:
        blocked = await check_arguments(state, guards.arguments, call, ctx)
        if blocked is not None:
            return blocked, "guardrail"
    answer = await (invoke(state, tool, call) if resumed
                    else _repeat_guarded(state, tool, call, invoke))
    if guards is not None and guards.results:
        withheld = await check_result(state, guards.results, call, answer_result(call, answer),
                                      ctx)
        if withheld is not None:
            return withheld, "guardrail"  # its media withheld with it
    return answer


async def _repeat_guarded(state: RunState, tool: Tool[Any], call: ToolCall,
                          invoke: Callable[[RunState, Tool[Any], ToolCall], Awaitable[Answer]]
                          ) -> Answer:
    """The loop guard (``Limits.max_repeats``) around one call: a call that returned the same
    result too often is refused, and refused again ends the run (``state.stuck``)."""
    guard = state.repeats
    if guard is None or call.arguments is None:
        return await invoke(state, tool, call)
    key = guard.key(call.name, call.arguments)
    verdict = guard.before(key)
    if verdict is not None:
        if verdict == "stop":
            state.stuck = f"`{call.name}` with {call.raw_arguments[:200]}"
        await state.emit(LoopGuardEvent(state.attempt, state.iteration, call, verdict,
                                        guard.limit))
        return guard.refusal(call.name, verdict == "stop"), "repeated_call"
    said, error = await invoke(state, tool, call)
    text = said if isinstance(said, str) else said.text  # media are named in the text
    repeats = guard.after(key, text, error is not None)
    if repeats == guard.limit:
        await state.emit(LoopGuardEvent(state.attempt, state.iteration, call, "nudge", repeats))
        note = guard.nudge(call.name, repeats)
        state.loop_notes[call.id] = note
        text += note
        said = text if isinstance(said, str) else Observation(text, said.media)
    return said, error

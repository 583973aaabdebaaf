"""The attempt/iteration loop: the one module that sequences a run, meant to be read top to bottom.

    run      -> attempts (until an output validates, or attempts run out)
    attempt  -> iterations (until the model gives an output, or a limit is hit)
    iteration = one model request + the execution of every tool call it asked for

Invariants kept on every path (success, tool failure, limit, cancellation, crash):
- every tool call id gets exactly one result, in call order, in the message right after it;
  results that exist when a run stops are kept, only unfinished calls are answered so;
- the trace has one step per model request (a failed or cancelled one included), and one
  before the first for a head start (:mod:`.head_start`), a record per tool call from the
  moment it starts, and usage is the sum over the steps;
- ``termination`` says why the run ended, and the trace is finished, on every way out.

The conversation is only ever appended to; nothing here re-walks it, so an iteration late in a
long run costs the same as an early one. Tool calls are executed by :mod:`.calls`; limits are
checked by :class:`~toolcycle.limits.Limits`; the held answer to the output call belongs to
:mod:`toolcycle.output`; awaited work is interrupted by :mod:`.scope`. How an attempt may end
(the typed endings its steps return) and what each makes of the run are in :mod:`.endings`;
a team member's run (an agent called as a tool) is this same loop, bounded by the team
(:mod:`.team`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from ..errors import (
    AgentError,
    Cancelled,
    ModelError,
    ToolsUnavailable,
)
from ..events import (
    AttemptEnd,
    AttemptStart,
    CallbackError,
    Event,
    FinalResult,
    IterationStart,
    ModelResponseEvent,
    RunFailure,
    RunStart,
    RunSuccess,
    TextDeltaEvent,
    ValidationFailure,
)
from ..limits import LIMIT_ERRORS, LimitName
from ..messages import Message, Usage
from ..models.base import ModelResponse, ModelSettings, TextDelta
from ..models.paid import paid_before
from ..models.repair import repair_reply
from ..output import SUBMIT_TOOL_NAME, HeldAnswer, OutputSchemaError, ValidationProblem
from ..output_repair import repair_output_reply, text_as_output
from ..result import RunResult, Termination
from ..status import RunStatus
from . import modes
from .approvals import PauseRun, claim_pause, pause
from .asked import check as asked_check
from .asked import run_status
from .calls import answer_held, close_turn, execute_turn, refuse_calls, stop_turn
from .compaction import compact, request_messages, start_compaction, take_paid
from .costs import priced
from .endings import (
    Answered,
    AttemptEnding,
    Forced,
    OutputGiven,
    ProtocolSlip,
    StoppedAt,
    attempts_exhausted,
    reason_of,
    termination_of,
)
from .grounding import check as grounding_check
from .guards import await_beside, check_input, check_output, start_beside, stop_beside
from .head_start import make_head_start
from .outcome import result_of
from .scope import CancelledByToken, LimitHit
from .state import RunState, Turn
from .team import close_members, describe_limit, hand_off, team_limit
from .toolsets import note_toolset_problems, refresh_tools, request_settings

# -- the run -------------------------------------------------------------------------------------


async def run(state: RunState) -> RunResult[Any]:
    """Execute one run; return its result or raise an ``AgentError`` carrying the partial one."""
    setup, resumed = state.setup, state.resumed
    await claim_pause(state)  # a resumed run: the snapshot is consumed here, or refused
    state.interrupts.open(state.timeout_left)
    if resumed is None:
        state.trace.start()
    note_toolset_problems(setup.core, state.trace.trace)
    try:
        await state.emit(resumed or RunStart(
            setup.run_id, setup.core.name, setup.user_prompt, setup.model.name,
            setup.model.system, *(setup.parent_call or (None, None))))
        if setup.core.tools_unavailable is not None:
            raise ToolsUnavailable(setup.core.tools_unavailable, phase="toolsets")
        guards = setup.core.guardrails
        if guards is not None and resumed is None:  # (a resumed run's input was checked)
            state.phase = "input_guardrails"
            if guards.before:
                await check_input(state, guards.before)
            if guards.beside:
                state.input_check = start_beside(state, guards.beside)
        output = await _run_attempts(state)
    except PauseRun:  # a call waits for a person's approval: toolcycle.run.approvals
        state.result = await pause(state, _fail)
        return state.result
    except AgentError as error:
        await _fail(state, error)
        raise
    except CancelledByToken:
        cancelled = Cancelled(
            f"run cancelled during {state.phase}: {state.ctx.cancel_token.reason}",
            phase=state.phase, attempt=state.attempt, iteration=state.iteration)
        await _fail(state, cancelled)
        raise cancelled from None
    except asyncio.CancelledError:
        # The caller cancelled the run's task: keep the history well-formed and the trace
        # saved, then let the cancellation propagate as asyncio expects.
        await _fail(state, Cancelled("the run's task was cancelled", phase=state.phase))
        raise
    except Exception as exc:  # a bug or a broken adapter: still keep everything we have
        crash = AgentError(f"{type(exc).__name__}: {exc}", phase=state.phase)
        await _fail(state, crash, Termination("error", "raised", str(crash)))
        raise crash from exc
    finally:
        state.interrupts.close()
        if state.input_check is not None:
            stop_beside(state)
    result = state.result = result_of(state, output)  # returned is not succeeded: docs/status.md
    _finish(state, run_status(state, result.termination.action, output), output, None)
    await _deliver(state, [FinalResult(output), RunSuccess(result, result.status)])
    return result


async def _fail(state: RunState, error: AgentError, termination: Termination | None = None
                ) -> None:
    """Answer what is still open, finish the trace, attach the partial result to the error.

    Paused members of a resumed turn are closed first (their runs end cancelled); then the
    books are closed synchronously (history, trace, store, playbook), so that a second
    cancellation cannot leave them half written; then the callbacks are told.
    """
    cancelled = isinstance(error, Cancelled)  # (a cancel while members close: raised at the end)
    interrupted = await close_members(state, f"the calling run ended ({error.code}: "
                                             f"{error.message})")
    if state.termination is None:
        state.termination = termination or Termination(
            reason_of(error), "raised", error.message, error.context.get("limit"))
    events = stop_turn(state, f"the run ended ({error.code})",
                       "cancelled" if cancelled else "run_stopped")
    if state.attempt and state.attempt not in state.closed_attempts:
        state.closed_attempts.add(state.attempt)  # every attempt that starts, ends
        end = AttemptEnd(state.attempt, False, error.message, error.code)
        state.trace.apply(end)
        events.append(end)
    error.result = state.result = result_of(state, None)
    _finish(state, "cancelled" if cancelled else "failure", None, error)
    events.append(RunFailure(error, error.result, error.result.status))
    await _deliver(state, events, interrupted)


async def _deliver(state: RunState, events: list[Event],
                   interrupted: asyncio.CancelledError | None = None) -> None:
    """Tell the callbacks about the run's last events, all of them even when the caller
    cancels meanwhile (the cancellation is raised once they are told): ``on_failure`` and
    ``on_success`` are how a caller that cancelled gets the result. A cancel that lands while
    ``on_success`` is told leaves the caller with no result, so the run ends cancelled: trace,
    termination and ``on_failure`` say so (r2-16). One that lands while ``on_failure`` is told
    about a failure leaves the caller with ``CancelledError``, not the error: the stored trace
    says cancelled too, and keeps the failure it had as its error (as it does when the caller
    cancelled before the callbacks were told: ``interrupted``)."""
    for event in events:
        try:
            await state.emitter.notify(event)  # recorded into the trace already
        except asyncio.CancelledError as exc:
            interrupted = exc
    if interrupted is not None:
        ending = events[-1]
        if isinstance(ending, RunSuccess):
            _end_cancelled(state, "the run's task was cancelled while on_success was told")
            await _fail(state, Cancelled("the run's task was cancelled while on_success was "
                                         "told", phase="callbacks"))
        elif (isinstance(ending, RunFailure) and isinstance(ending.error, AgentError)
              and not isinstance(ending.error, Cancelled)):
            _end_cancelled(state, "the run's task was cancelled while on_failure was told of "
                                  f"{ending.error.code}")
            _finish(state, "cancelled", None, ending.error)
        raise interrupted


def _end_cancelled(state: RunState, detail: str) -> None:
    """Rewrite the run's termination as cancelled *in place*: the result the callbacks were
    given holds the same object, so it, the error's result and the stored trace all agree."""
    cancelled = Termination("cancelled", "raised", detail)
    if state.termination is None:
        state.termination = cancelled
        return
    state.termination.reason, state.termination.action = cancelled.reason, cancelled.action
    state.termination.detail, state.termination.limit = cancelled.detail, None


def _finish(state: RunState, status: RunStatus, output: Any, error: AgentError | None) -> None:
    """Finish and store the trace, and let the playbook learn from it (never raises)."""
    termination = state.termination
    failure = None if error is None else {
        "code": error.code, "message": str(error),
        "context": {k: v if isinstance(v, str | int | float | bool | list) or v is None
                    else repr(v) for k, v in error.context.items()},
    }
    observed = state.trace.trace.ended_at is not None  # (a success cancelled in on_success)
    state.trace.finish(status, state.usage, output,
                       None if termination is None else termination.to_dict(), failure)
    playbook = state.setup.core.playbook
    if playbook is not None and not observed:
        try:
            playbook.observe(state.trace.trace, termination)
        except Exception as exc:  # a failing playbook never breaks the run
            state.emitter.errors.append(CallbackError("playbook.observe", repr(playbook), exc))


# -- attempts ------------------------------------------------------------------------------------


async def _run_attempts(state: RunState) -> Any:
    max_attempts = state.limits.max_attempts or 1
    modes.start_modes(state)
    start_compaction(state)
    while True:
        if state.turn is None:  # else a resumed run: its paused attempt goes on
            state.start_attempt()
            modes.enter_mode(state)
            if state.forcing:  # a forced output ended the last attempt; this one is normal
                state.forcing = False
                state.interrupts.resume_deadline()
            await state.emit(AttemptStart(state.attempt))
        ending = await _run_iterations(state)
        while True:
            if isinstance(ending, StoppedAt):
                return await _stop_at(state, ending.limit)
            try:
                output, problem = await _judge(state, ending)
                break
            except LimitHit:  # the deadline passed while the output was being judged
                if state.held is not None:
                    await answer_held(state, HeldAnswer.stopped(
                        "the run's timeout was reached while it was judged", "run_stopped"))
                ending = await _at_limit(state, "timeout")

        if problem is None:
            if state.held is not None:
                await answer_held(state, HeldAnswer.accepted())
            await _end_attempt(state, True)
            state.termination = termination_of(ending, state)
            return output

        # Rejected: answer the output call with the errors, tell the model, retry.
        if state.held is not None:
            await answer_held(state, HeldAnswer.rejected(problem.errors))
        await state.emit(
            ValidationFailure(state.attempt, problem.errors, problem.validator, problem.code)
        )
        await _end_attempt(state, False)
        forced = ending.forced if not isinstance(ending, StoppedAt) else None
        # max_iterations bounds one attempt, so a rejected forced output may still retry;
        # after a run-wide limit (timeout, budgets) there is nothing left to retry with.
        run_limit = forced.limit if forced and forced.limit != "max_iterations" else None
        if state.attempt >= max_attempts or run_limit is not None:
            raise attempts_exhausted(state, problem, run_limit)
        errors = modes.fall_back(state, problem)  # no output in this mode's form: the next mode
        state.append(Message.user(state.output.error_prompt(errors, state.attempt)))


async def _end_attempt(state: RunState, success: bool) -> None:
    state.closed_attempts.add(state.attempt)
    await state.emit(AttemptEnd(state.attempt, success))


async def _stop_at(state: RunState, limit: LimitName) -> Any:
    """``on_limit="partial"``: close the attempt and return what exists, flagged."""
    if state.held is not None:
        await answer_held(state, HeldAnswer.stopped("the run stopped at a limit", "run_stopped"))
    await _end_attempt(state, False)
    state.termination = Termination(limit, "partial", describe_limit(state, limit), limit)
    if not state.output.is_text:
        return state.last_output
    return next((m.text for m in reversed(state.messages) if m.role == "assistant" and m.text),
                None)


async def _judge(state: RunState, ending: AttemptEnding) -> tuple[Any, ValidationProblem | None]:
    """Schema first, then the custom validators in order; the first failure wins."""
    match ending:
        case ProtocolSlip(problem=problem):
            return None, problem
        case Answered(text=text):
            output: Any = text
            claimed: str | dict[str, Any] = text
        case OutputGiven(arguments=arguments):
            claimed = arguments
            try:
                output = state.output.parse(arguments)
            except OutputSchemaError as exc:
                return None, ValidationProblem(exc.errors, "schema")
            state.last_output = output
        case StoppedAt():
            raise AssertionError("a stopped attempt is not judged")
    state.phase = "validation"
    rejection: ValidationProblem | None = await state.interrupts.guard(
        state.output.validate(output, state.ctx))
    if rejection is None:  # Agent(grounding=...): on for local models
        rejection = grounding_check(state, claimed) or asked_check(state, claimed)
    guards = state.setup.core.guardrails
    if rejection is None and guards is not None and guards.output:
        state.phase = "output_guardrails"
        await check_output(state, guards.output, output)  # a trip ends the run
    return output, rejection


# -- iterations ----------------------------------------------------------------------------------


async def _run_iterations(state: RunState) -> AttemptEnding:
    if state.turn is not None:  # a resumed run finishes its paused turn first
        ending = await _execute(state)
        if ending is not None:
            return ending
    if state.input_check is not None and state.setup.core.head_start is not None:
        await await_beside(state)  # the head start's call runs only once the input passed
    await make_head_start(state)  # (a run's first call, where its tool selection makes one)
    while True:
        limit = state.limits.reached(state)
        if limit is None and state.ancestors:  # a team member: the team's limits bound it
            limit = team_limit(state)
        if limit is not None:
            if state.ctx.cancel_token.cancelled:  # a cancel wins over a limit reached with it
                state.phase = "before_model_request"
                raise CancelledByToken
            return await _at_limit(state, limit)  # (_request checks the token otherwise)
        try:
            if state.refresh_tools is not None:
                await refresh_tools(state)
            _, reply = await _request(state, modes.mode_settings(state, request_settings(state)))
            if state.input_check is not None:  # input guardrails beside the first request
                await await_beside(state)
        except LimitHit:
            return await _at_limit(state, "timeout")
        except ModelError as error:  # a refused response format is a mode the model fails
            return modes.format_refused(state, error)  # (any other failure is raised)
        if state.turn is None:  # no tool calls
            if not reply.text.strip():  # an empty reply is no answer: the attempt retries
                return ProtocolSlip(state.output.empty_reply())
            if state.output.is_text:
                return Answered(reply.text)
            if modes.current_mode(state) != "tool":  # native or prompted: the text is the output
                ending = await modes.text_answer(state, reply.text)  # (None: previewed)
                if ending is not None:
                    return ending
                continue
            if (given := text_as_output(state.output, reply.text)) is not None:
                return OutputGiven(given)  # the answer as text: repaired (output_repair)
            return ProtocolSlip(state.output.no_output_call())
        ending = await _execute(state)
        if ending is not None:
            return ending


async def _execute(state: RunState, forced: Forced | None = None
                   ) -> OutputGiven | ProtocolSlip | None:
    """Run the calls of the open turn; say how the attempt ended if a call ended it."""
    turn = state.turn
    assert turn is not None
    state.phase = "tool_execution"
    await execute_turn(state, turn)
    state.phase = "between_iterations"
    held = state.held
    if held is None:
        close_turn(state, turn)
        if state.handoff is not None:  # another agent goes on with the conversation
            await hand_off(state)
        return None
    if held.arguments is None:  # submit before any output was previewed
        assert held.call.name == SUBMIT_TOOL_NAME
        return ProtocolSlip(state.output.submit_before_output(), forced)
    return OutputGiven(held.arguments, forced)


async def _request(state: RunState, settings: ModelSettings, forced: bool = False
                   ) -> tuple[Message, Message]:
    """One model request: emit, call (streaming when asked), repair, append, emit. Returns
    the reply as it entered the history, and as the model wrote it."""
    if state.ctx.cancel_token.cancelled:  # no request after a cancel, a forced one included
        state.phase = "before_model_request"
        raise CancelledByToken
    iteration = state.next_iteration()
    started = time.perf_counter()
    try:
        await state.emit(IterationStart(state.attempt, iteration, forced, settings.tool_choice))
        state.phase = "model_request"
        await compact(state)  # the older turns, when the history nears the model's window
        request = (_stream_model(state, settings, iteration) if state.setup.streaming
                   else state.setup.model.request(request_messages(state), settings))
        message = await state.interrupts.guard(request)
    except BaseException as exc:  # it still counts (with what it was served), keeps its step
        state.spend(priced(state, (paid := paid_before(exc)).usage.copy(), None))
        state.trace.request_failed((time.perf_counter() - started) * 1000.0, paid)
        if isinstance(exc, Exception) and not isinstance(
                exc, AgentError | LimitHit | CancelledByToken):
            raise ModelError(f"model request failed: {type(exc).__name__}: {exc}",
                             phase="model_request", attempt=state.attempt,
                             iteration=state.iteration) from exc
        raise
    duration_ms = (time.perf_counter() - started) * 1000.0
    reply = message
    message, repairs = repair_reply(reply, state.call_ids)
    if not state.output.is_text and modes.current_mode(state) == "tool":
        message = repair_output_reply(message, state.output, repairs)  # a string, not an object
    calls = message.tool_calls
    for call in calls:
        state.call_ids.add(call.id)
    reported = message.usage if message.usage is not None else Usage()
    usage = priced(state, Usage(  # positional, once per iteration (field order pinned by a test)
        reported.input_tokens, reported.output_tokens, reported.cache_read_tokens,
        reported.cache_write_tokens,
        # an adapter may make several requests for one reply (a re-ask, a paused turn)
        max(reported.requests, 1), len(calls), reported.reasoning_tokens,
    ), message.model_name)  # priced by the model that wrote it
    usage.add(take_paid(state))  # the summaries compaction wrote for this request
    state.spend(usage)
    state.append(message)
    if calls:  # open from now on: a run that stops before they run still answers them
        state.turn = Turn(state.attempt, iteration, calls)
    await state.emit(ModelResponseEvent(state.attempt, iteration, message, usage, duration_ms,
                                        repairs))
    return message, reply


async def _stream_model(state: RunState, settings: ModelSettings, iteration: int) -> Message:
    final: Message | None = None
    async for item in state.setup.model.stream(request_messages(state), settings):
        if isinstance(item, TextDelta):
            await state.emit(TextDeltaEvent(iteration, item.text))
        elif isinstance(item, ModelResponse):
            final = item.message
    if final is None:
        raise ModelError("the model's stream ended without a final response", phase="model_request")
    return final


# -- limits --------------------------------------------------------------------------------------


async def _at_limit(state: RunState, limit: LimitName) -> AttemptEnding:
    """A limit was hit: raise, return what exists, or ask once more for a final answer."""
    on_limit = state.limits.on_limit
    if on_limit == "error":
        raise LIMIT_ERRORS[limit](describe_limit(state, limit), limit=limit,
                                  attempt=state.attempt, iteration=state.iteration)
    if state.input_check is not None:  # no output from an input the guardrails did not pass
        state.interrupts.suspend_deadline()
        await await_beside(state)
    if on_limit == "partial":
        return StoppedAt(limit)

    # on_limit == "final_answer": one more request, tools withdrawn (or the output tool forced);
    # it gets its answer even after the timeout.
    state.forcing = True
    state.interrupts.suspend_deadline()
    output = state.output
    in_text = modes.current_mode(state) != "tool"  # free text, native or prompted: tools withdrawn
    choice = "none" if in_text or output.tool is None else output.tool.name
    try:
        message, reply = await _request(state, modes.mode_settings(
            state, replace(state.setup.settings, tool_choice=choice)), forced=True)
    except ModelError as error:  # the limit led here: the error and the termination name it
        raise state.limits.led_to(error, limit, state) from error.__cause__
    calls = message.tool_calls
    if in_text:
        if calls:  # the model ignored tool_choice="none": answer the calls, keep its text
            assert state.turn is not None
            await refuse_calls(state, state.turn, "Tools are disabled now: answer directly.")
        if not output.is_text:
            return modes.text_output(state, reply.text, Forced(limit, len(calls)))
        return Answered(reply.text, Forced(limit, len(calls)))
    ending = await _execute(state, Forced(limit)) if calls else None
    if ending is None and not calls and (given := text_as_output(output, reply.text)):
        return OutputGiven(given, Forced(limit))
    if ending is None:
        return ProtocolSlip(output.no_output_call(), Forced(limit))
    return ending


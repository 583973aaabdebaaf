"""The attempt/iteration loop: the heart of toolcycle, meant to be read top to bottom.

    run      -> attempts (until an output validates, or attempts run out)
    attempt  -> iterations (until the model gives an output, or a limit is hit)
    iteration = one model request + the execution of every tool call it asked for

Invariants kept on every path (success, tool failure, limit, cancellation, crash):
- every tool call id gets exactly one result, in call order, in the message right after it;
- the trace has one step per model request, and usage is the sum over the steps;
- ``termination`` says why the run ended.

The conversation is only ever appended to; nothing here re-walks it, so an iteration late in a
long run costs the same as an early one. Tool execution lives in :mod:`toolcycle.run.calls`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..errors import (
    AgentError,
    Cancelled,
    InvalidResponse,
    MaxAttemptsExceeded,
    MaxIterationsExceeded,
    ModelError,
    RunTimeout,
    SubmitBeforeOutput,
    UsageLimitExceeded,
)
from ..events import (
    AttemptEnd,
    AttemptStart,
    FinalResult,
    IterationStart,
    ModelResponseEvent,
    RunFailure,
    RunStart,
    RunSuccess,
    TextDeltaEvent,
    ValidationFailure,
)
from ..messages import Message, ToolCall, Usage
from ..models.base import ModelResponse, ModelSettings, TextDelta
from ..output import OutputSchemaError, ValidationProblem
from ..result import RunResult, Termination, TerminationReason
from ..tracing.trace import AttemptRecord, Step
from .calls import CallOutcome, execute_calls, refuse_calls
from .state import LimitHit, RunState

_LIMIT_ERRORS: dict[str, type[AgentError]] = {
    "max_iterations": MaxIterationsExceeded,
    "max_tool_calls": UsageLimitExceeded,
    "token_budget": UsageLimitExceeded,
    "timeout": RunTimeout,
}


@dataclass(slots=True)
class AttemptOutcome:
    """What an attempt produced before validation.

    ``kind``: ``"text"`` (free-text answer), ``"output"`` (the output tool's arguments),
    ``"slip"`` (a protocol slip that costs the attempt), ``"partial"`` (a limit with
    ``on_limit="partial"``). When the attempt ended on the output tool or ``submit``, the tool
    message of that turn is held in ``state.pending`` and answered after validation.
    """

    kind: str
    text: str = ""
    arguments: dict[str, Any] | None = None
    slip: ValidationProblem | None = None
    limit: str | None = None
    forced: bool = False
    ignored_calls: int = 0  # tool calls the forced final request made anyway (refused)


async def run_loop(state: RunState) -> RunResult[Any]:
    """Execute one run; return its result or raise an ``AgentError`` carrying the partial one."""
    await state.begin()
    await state.emit(
        RunStart(state.run_id, state.agent.name, state.user_prompt, state.model.name,
                 state.model.system)
    )
    try:
        output = await _run_attempts(state)
    except AgentError as error:
        await _fail(state, error)
        raise
    except asyncio.CancelledError:
        # Plain task cancellation: keep the history well-formed and the trace saved, then let
        # the cancellation propagate as asyncio expects.
        cancelled = Cancelled("the run's task was cancelled", phase=state.phase)
        await _fail(state, cancelled, Termination("cancelled", "raised", str(cancelled)))
        raise
    except Exception as exc:  # a bug or a broken adapter: still keep everything we have
        crash = AgentError(f"{type(exc).__name__}: {exc}", phase=state.phase)
        await _fail(state, crash, Termination("error", "raised", str(crash)))
        raise crash from exc
    result = state.result(output)
    state.finish_trace("success", output)
    await state.emit(FinalResult(output))
    await state.emit(RunSuccess(result))
    result.callback_errors = state.emitter.errors
    await state.end()
    return result


async def _fail(state: RunState, error: AgentError, termination: Termination | None = None) -> None:
    """Close open calls, record the failure, attach the partial result to the error."""
    unanswered = f"not executed: the run ended ({error.code})"
    await state.settle_pending(unanswered, "run_stopped")
    state.answer_open_calls(unanswered)
    attempts = state.trace.attempts
    if state.attempt and not (attempts and attempts[-1].attempt == state.attempt):
        # The run failed inside an attempt: close it, so every start has its end.
        attempts.append(AttemptRecord(state.attempt, False, [error.message], None, error.code))
        await state.emit(AttemptEnd(state.attempt, False))
    if state.termination is None:
        limit = error.context.get("limit")
        reason: TerminationReason = (
            "cancelled" if isinstance(error, Cancelled) else _reason_of(error)
        )
        state.termination = termination or Termination(reason, "raised", error.message, limit)
    error.result = state.result(None)
    status = "cancelled" if isinstance(error, Cancelled) else "failure"
    state.finish_trace(status, None, error)
    await state.emit(RunFailure(error, error.result))
    error.result.callback_errors = state.emitter.errors
    await state.end()


def _reason_of(error: AgentError) -> TerminationReason:
    if isinstance(error, ModelError):
        return "model_error"
    if isinstance(error, MaxAttemptsExceeded | InvalidResponse | SubmitBeforeOutput):
        return "max_attempts"
    limit = error.context.get("limit")
    return limit if limit in _LIMIT_ERRORS else "error"


# -- attempts ------------------------------------------------------------------------------


async def _run_attempts(state: RunState) -> Any:
    max_attempts = state.limits.max_attempts or 1
    while True:
        state.start_attempt()
        await state.emit(AttemptStart(state.attempt))
        outcome = await _run_iterations(state)

        if outcome.kind == "partial":
            await state.settle_pending("not validated: the run stopped at a limit", "run_stopped")
            state.trace.attempts.append(AttemptRecord(state.attempt, False))
            await state.emit(AttemptEnd(state.attempt, False))
            limit = outcome.limit or "max_iterations"
            state.termination = Termination(
                limit, "partial", state.limit_detail(limit), limit  # type: ignore[arg-type]
            )
            return state.partial_output()

        output, problem = await _validate(state, outcome)
        if problem is None:
            await state.settle_pending("Output accepted.", None)
            state.trace.attempts.append(AttemptRecord(state.attempt, True))
            await state.emit(AttemptEnd(state.attempt, True))
            action = "final_answer" if outcome.forced else "answered"
            reason = outcome.limit if outcome.forced and outcome.limit else "completed"
            detail = _forced_detail(outcome) if outcome.forced else ""
            state.termination = Termination(reason, action, detail, outcome.limit)  # type: ignore[arg-type]
            return output

        # The attempt failed: answer the output call with the errors, tell the model, retry.
        await state.settle_pending("Rejected:\n" + "\n".join(problem.errors), "output_rejected")
        state.trace.attempts.append(
            AttemptRecord(state.attempt, False, problem.errors, problem.validator, problem.code)
        )
        await state.emit(
            ValidationFailure(state.attempt, problem.errors, problem.validator, problem.code)
        )
        await state.emit(AttemptEnd(state.attempt, False))
        # max_iterations bounds one attempt, so a rejected forced output may still retry;
        # after a run-wide limit (timeout, budgets) there is nothing left to retry with.
        run_limit = outcome.forced and outcome.limit != "max_iterations"
        if state.attempt >= max_attempts or run_limit:
            raise _attempts_exhausted(state, problem, outcome.limit if run_limit else None)
        state.append(Message.user(state.output.error_prompt(problem.errors, state.attempt)))


def _forced_detail(outcome: AttemptOutcome) -> str:
    if outcome.ignored_calls:
        return (f"{outcome.limit} reached; the final request called {outcome.ignored_calls} "
                "tool(s) instead of answering: refused, and the answer is its text only")
    return f"{outcome.limit} reached; answered without tools"


async def _validate(
    state: RunState, outcome: AttemptOutcome
) -> tuple[Any, ValidationProblem | None]:
    """Schema first, then the custom validators in order; the first failure wins."""
    if outcome.kind == "slip":
        assert outcome.slip is not None
        return None, outcome.slip
    if outcome.kind == "text":
        output: Any = outcome.text
    else:
        assert outcome.arguments is not None
        try:
            output = state.output.parse(outcome.arguments)
        except OutputSchemaError as exc:
            return None, ValidationProblem(exc.errors, "schema")
    state.last_output = output
    problem = await state.output.validate(output, state.ctx)
    return output, problem


def _attempts_exhausted(
    state: RunState, problem: ValidationProblem, limit: str | None = None
) -> AgentError:
    rejected = f"{problem.validator}: {'; '.join(problem.errors)}"
    if limit is not None:  # a run-wide limit stopped the run; its forced output was rejected
        return _LIMIT_ERRORS[limit](
            f"{state.limit_detail(limit)}; the output forced at the limit was rejected by "
            f"{rejected}",
            limit=limit, attempt=state.attempt, validator=problem.validator,
            errors=problem.errors,
        )
    errors = {"INVALID_RESPONSE": InvalidResponse, "SUBMIT_BEFORE_OUTPUT": SubmitBeforeOutput}
    cls = errors.get(problem.code, MaxAttemptsExceeded)
    return cls(
        f"no valid output after {state.attempt} attempt(s); last rejected by {rejected}",
        attempt=state.attempt,
        validator=problem.validator,
        errors=problem.errors,
    )


# -- iterations ----------------------------------------------------------------------------


async def _run_iterations(state: RunState) -> AttemptOutcome:
    while True:
        limit = state.limit_reached()
        if limit is not None:
            return await _at_limit(state, limit)
        state.check_cancelled("before_model_request")

        try:
            message, calls, step = await _request(state, state.settings)
        except LimitHit as hit:
            return await _at_limit(state, hit.limit)
        if not calls:
            if state.output.is_text:
                return AttemptOutcome("text", text=message.text)
            return AttemptOutcome("slip", slip=_no_output_call(state))

        outcome = await _execute(state, step, calls)
        if outcome is not None:
            return outcome


async def _execute(state: RunState, step: Step, calls: list[ToolCall]) -> AttemptOutcome | None:
    """Run the calls of one response; return an outcome if the attempt ended in this turn."""
    state.phase = "tool_execution"
    started = time.perf_counter()
    outcome: CallOutcome = await execute_calls(state, step, calls)
    step.tools_ms = (time.perf_counter() - started) * 1000.0
    state.phase = "between_iterations"
    if outcome.stopped == "cancelled":
        if state.pending is not None:
            await state.settle_pending("not validated: the run was cancelled", "cancelled")
        else:
            state.append(Message.tool_results(outcome.results))
        state.step_done(step)
        state.raise_cancelled("tool_execution")
    if outcome.ended_by is None:
        state.append(Message.tool_results(outcome.results))
        state.step_done(step)
        return None  # a stopped (timed-out) turn is caught by the limit check that follows
    state.step_done(step)
    if outcome.ended_by == "submit" and state.last_preview_args is None:
        problem = ValidationProblem(
            ["submit was called before any output: call the output tool "
             f"`{state.output.name}` first, then submit"],
            "submit",
            "SUBMIT_BEFORE_OUTPUT",
        )
        return AttemptOutcome("slip", slip=problem)
    arguments = outcome.arguments if outcome.ended_by == "output" else state.last_preview_args
    return AttemptOutcome("output", arguments=arguments)


def _no_output_call(state: RunState) -> ValidationProblem:
    names = [state.output.name] + (["submit"] if state.output.submit_tool else [])
    return ValidationProblem(
        [f"you answered without calling a tool; give your output by calling "
         f"`{'` then `'.join(names)}`"],
        "protocol",
        "INVALID_RESPONSE",
    )


async def _request(
    state: RunState, settings: ModelSettings, forced: bool = False
) -> tuple[Message, list[ToolCall], Step]:
    """One model request: emit, call (streaming when asked), record the step, append."""
    iteration = state.next_iteration()
    await state.emit(IterationStart(state.attempt, iteration, forced))
    step = Step(iteration, state.attempt, started_at=time.time(), forced=forced)
    state.phase = "model_request"
    started = time.perf_counter()
    try:
        message = await state.guard(_call_model(state, settings, iteration), "model_request")
    except (AgentError, LimitHit):
        state.record_failed_request(step, started)
        raise
    except Exception as exc:
        state.record_failed_request(step, started)
        raise _model_error(exc, state) from exc
    step.model_ms = (time.perf_counter() - started) * 1000.0
    usage = message.usage if message.usage is not None else Usage()
    calls = message.tool_calls
    step.usage = Usage(
        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
        usage.cache_write_tokens,
        # an adapter may make several requests for one reply (a re-ask, a paused turn)
        requests=max(usage.requests, 1), tool_calls=len(calls),
    )
    step.thought = message.text
    step.thinking = message.thinking
    step.finish_reason = message.finish_reason
    state.usage.add(step.usage)
    state.trace.steps.append(step)
    state.record_step()  # the reply is stored before its tools run (a crash keeps it)
    state.append(message, calls)
    await state.emit(
        ModelResponseEvent(state.attempt, iteration, message, step.usage, step.model_ms)
    )
    return message, calls, step


async def _call_model(state: RunState, settings: ModelSettings, iteration: int) -> Message:
    if not state.streaming:
        return await state.model.request(state.messages, settings)
    final: Message | None = None
    async for item in state.model.stream(state.messages, settings):
        if isinstance(item, TextDelta):
            await state.emit(TextDeltaEvent(iteration, item.text))
        elif isinstance(item, ModelResponse):
            final = item.message
    if final is None:
        raise ModelError("the model's stream ended without a final response", phase="model_request")
    return final


def _model_error(exc: Exception, state: RunState) -> AgentError:
    return ModelError(
        f"model request failed: {type(exc).__name__}: {exc}",
        phase="model_request",
        attempt=state.attempt,
        iteration=state.iteration,
    )


# -- limits --------------------------------------------------------------------------------


async def _at_limit(state: RunState, limit: str) -> AttemptOutcome:
    """A limit was hit: raise, return what exists, or ask once more for a final answer."""
    on_limit = state.limits.on_limit
    detail = state.limit_detail(limit)
    if on_limit == "error":
        raise _LIMIT_ERRORS[limit](detail, limit=limit, attempt=state.attempt,
                                   iteration=state.iteration)
    if on_limit == "partial":
        return AttemptOutcome("partial", limit=limit)

    # on_limit == "final_answer": one more request, tools disabled (or the output tool forced).
    settings = state.forced_settings()
    message, calls, step = await _request(state, settings, forced=True)
    if state.output.is_text:
        if calls:  # the model ignored tool_choice="none": answer the calls, keep its text
            reason = "Tools are disabled now: answer directly."
            state.append(Message.tool_results(await refuse_calls(state, step, calls, reason)))
            state.step_done(step)
        return AttemptOutcome("text", text=message.text, limit=limit, forced=True,
                              ignored_calls=len(calls))
    outcome = await _execute(state, step, calls) if calls else None
    if outcome is None or outcome.kind != "output":
        problem = outcome.slip if outcome is not None and outcome.slip else _no_output_call(state)
        return AttemptOutcome("slip", slip=problem, limit=limit, forced=True)
    outcome.forced = True
    outcome.limit = limit
    return outcome

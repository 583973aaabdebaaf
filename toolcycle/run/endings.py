"""How an attempt ends, and what that makes of the run: the typed endings the loop's steps
return (:data:`AttemptEnding`), the run's :class:`~toolcycle.result.Termination` for an
ending, and the error for a run that ran out of attempts. Kept beside :mod:`.loop`, which
sequences the run, so that the loop reads as the sequence alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import (
    AgentError,
    Cancelled,
    GuardrailTripped,
    InvalidResponse,
    MaxAttemptsExceeded,
    ModelError,
    SubmitBeforeOutput,
)
from ..limits import LIMIT_ERRORS, LimitName
from ..output import ValidationProblem
from ..result import Termination, TerminationReason
from .state import RunState
from .team import describe_limit, team_note


@dataclass(frozen=True, slots=True)
class Forced:
    """The attempt's output came from the final request at a limit."""

    limit: LimitName
    refused_calls: int = 0  # tool calls that request made anyway (refused)


@dataclass(frozen=True, slots=True)
class Answered:
    """Free text: a reply without tool calls."""

    text: str
    forced: Forced | None = None


@dataclass(frozen=True, slots=True)
class OutputGiven:
    """The output tool (or ``submit`` after a preview) gave the output; ``state.held`` waits."""

    arguments: dict[str, Any]
    forced: Forced | None = None


@dataclass(frozen=True, slots=True)
class ProtocolSlip:
    """A reply that breaks the output protocol: no output call, or ``submit`` first."""

    problem: ValidationProblem
    forced: Forced | None = None


@dataclass(frozen=True, slots=True)
class StoppedAt:
    """A limit with ``on_limit="partial"``: return what exists."""

    limit: LimitName


AttemptEnding = Answered | OutputGiven | ProtocolSlip | StoppedAt



def reason_of(error: AgentError) -> TerminationReason:
    if isinstance(error, Cancelled):
        return "cancelled"
    if isinstance(error, ModelError):
        return "model_error"
    if isinstance(error, GuardrailTripped):
        return "guardrail"
    if isinstance(error, MaxAttemptsExceeded | InvalidResponse | SubmitBeforeOutput):
        return "max_attempts"
    limit = error.context.get("limit")
    return limit if limit in LIMIT_ERRORS else "error"


def termination_of(ending: AttemptEnding, state: RunState) -> Termination:
    forced = None if isinstance(ending, StoppedAt) else ending.forced
    if forced is None:
        return Termination("completed", "answered")
    team = team_note(state, forced.limit)
    if forced.limit == "repeated_calls":  # the guard's own words say which call
        team = f" ({describe_limit(state, forced.limit)})"
    if forced.refused_calls:
        detail = (f"{forced.limit} reached{team}; the final request called "
                  f"{forced.refused_calls} tool(s) instead of answering: refused, and the "
                  "answer is its text only")
    else:
        detail = f"{forced.limit} reached{team}; answered without tools"
    return Termination(forced.limit, "final_answer", detail, forced.limit)


def attempts_exhausted(
    state: RunState, problem: ValidationProblem, limit: LimitName | None
) -> AgentError:
    rejected = f"{problem.validator}: {'; '.join(problem.errors)}"
    if limit is not None:  # a run-wide limit stopped the run; its forced output was rejected
        return LIMIT_ERRORS[limit](
            f"{describe_limit(state, limit)}; the output forced at the limit was "
            f"rejected by {rejected}",
            limit=limit, attempt=state.attempt, validator=problem.validator,
            errors=problem.errors,
        )
    errors = {"INVALID_RESPONSE": InvalidResponse, "SUBMIT_BEFORE_OUTPUT": SubmitBeforeOutput}
    cls = errors.get(problem.code, MaxAttemptsExceeded)
    return cls(
        f"no valid output after {state.attempt} attempt(s); last rejected by {rejected}",
        attempt=state.attempt, validator=problem.validator, errors=problem.errors,
    )

"""Limits on a run and how they combine: system default < agent < run.

Every field left as ``None`` inherits from the level below. Values are validated (a bad value
is a :class:`~toolcycle.errors.ConfigurationError` listing every problem) and clamped to the
documented caps in :data:`CAPS` (with a warning), so a typo cannot start a 10-million-iteration
run.

Each limit also owns what happens when it is reached: :meth:`Limits.reached` names the first
limit a run has hit (a :data:`LimitName`), :meth:`Limits.describe` says it in words, and
:data:`LIMIT_ERRORS` gives the error raised with ``on_limit="error"``. The engine only asks;
adding a limit means a field, a cap, a line in each of those and, if it counts something new,
a counter on the run's state.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from typing import Any, Literal, Protocol

from .errors import (
    AgentError,
    ConfigurationError,
    MaxIterationsExceeded,
    RepeatedCalls,
    RunTimeout,
    UsageLimitExceeded,
)
from .messages import Usage
from .pricing import Money, money
from .result import LimitName as LimitName  # re-exported: the limits by name

OnLimit = Literal["final_answer", "partial", "error"]


#: What ``on_limit="error"`` raises for each limit.
LIMIT_ERRORS: dict[LimitName, type[AgentError]] = {
    "max_iterations": MaxIterationsExceeded,
    "max_tool_calls": UsageLimitExceeded,
    "token_budget": UsageLimitExceeded,
    "timeout": RunTimeout,
    "repeated_calls": RepeatedCalls,
    "max_cost": UsageLimitExceeded,
}


class RunCounts(Protocol):
    """What a run has used so far: the figures the limits are checked against."""

    @property
    def attempt(self) -> int: ...
    @property
    def attempt_iterations(self) -> int: ...
    @property
    def executed_calls(self) -> int: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def deadline(self) -> float | None: ...
    @property
    def upcoming_input_tokens(self) -> int: ...
    @property
    def counts_tokens(self) -> bool:
        """Whether these limits set a token budget (:attr:`Limits.counts_tokens`), kept by the
        run as a plain field: it is read before every model request."""
        ...
    @property
    def stuck(self) -> str | None:
        """The call the loop guard refused and the model made again (:class:`RepeatGuard`)."""
        ...
ON_LIMIT_CHOICES: tuple[OnLimit, ...] = ("final_answer", "partial", "error")


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on a run. ``None`` means "inherit from the level below".

    - ``max_iterations``: model requests per attempt (default 10, cap 1000).
    - ``max_attempts``: structured-output attempts per run (default 3, cap 20).
    - ``max_tool_calls``: tool calls per run (cap 100000).
    - ``max_input_tokens`` / ``max_output_tokens`` / ``max_total_tokens``: token budgets per run.
    - ``timeout``: wall-clock seconds per run (cap 86400).
    - ``on_limit``: what happens at a limit: ``"final_answer"`` (one more request without tools,
      or with the output tool forced), ``"partial"`` (return what exists, flagged) or
      ``"error"`` (raise).
    - ``max_observation_chars``: observations longer than this are truncated with a marker.
    - ``max_repeats``: the loop guard (:class:`RepeatGuard`, default 3, ``0`` turns it off):
      how many times in a row one call (a tool and the same arguments) may return the same
      result. The call that reaches it gets a nudge in its observation, the next identical
      call is refused, and one more ends the run like a limit (``"repeated_calls"``).
    - ``max_context_tokens``: the tokens one request may hold (default: the model's context
      window where its adapter knows it). Nearing it, the older turns are compacted (tool
      results cut to stubs, then summarised; :mod:`toolcycle.run.compaction`): a budget kept,
      not a limit reached, so the run goes on.
    - ``max_cost``: USD the run may spend (a number or a decimal string, kept as a
      :class:`~decimal.Decimal`), checked after every model response against ``usage.cost``,
      which adds up every agent of a team (docs/limits.md, "Cost"). Every model the run may
      use needs a known price (:mod:`toolcycle.pricing`): the agent refuses one without at
      construction, and a run whose cost became unknown stops here too. With
      ``on_limit="final_answer"`` the answer at the limit is one more request, so the run may
      end a little over: ``"partial"`` is the hard ceiling.
    """

    max_iterations: int | None = None
    max_attempts: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    timeout: float | None = None
    on_limit: OnLimit | None = None
    max_observation_chars: int | None = None
    max_repeats: int | None = None
    max_context_tokens: int | None = None
    max_cost: Money | None = None

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ConfigurationError(problems, subject="limits")
        if self.max_cost is not None and not isinstance(self.max_cost, Decimal):
            object.__setattr__(self, "max_cost", money(self.max_cost, "max_cost", []))
        clamped = {}
        for name, cap in CAPS.items():
            value = getattr(self, name)
            if value is not None and value > cap:
                warnings.warn(
                    f"limit {name}={value} exceeds its cap {cap}; clamped to {cap}",
                    stacklevel=3,
                )
                clamped[name] = cap
        for name, value in clamped.items():
            object.__setattr__(self, name, value)

    @property
    def cost_budget(self) -> Decimal | None:
        """``max_cost`` as the exact decimal it is kept as (given as a float, ``0.1`` is
        ``Decimal("0.1")``)."""
        budget = self.max_cost
        return budget if budget is None or isinstance(budget, Decimal) else money(budget, "", [])

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON value (``max_cost`` as its exact decimal string), for specs
        and snapshots; ``Limits(**data)`` reads it back."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        if data["max_cost"] is not None:
            data["max_cost"] = str(data["max_cost"])
        return data

    def problems(self) -> list[str]:
        """Every invalid value, so that one error can list them all."""
        found: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "on_limit":
                if value not in ON_LIMIT_CHOICES:
                    found.append(f"on_limit must be one of {ON_LIMIT_CHOICES}, got {value!r}")
                continue
            if f.name == "timeout":
                # NaN passed "<= 0" and then meant no deadline at all; inf is no deadline too.
                if (isinstance(value, bool) or not isinstance(value, int | float)
                        or not math.isfinite(value) or value <= 0):
                    found.append(f"timeout must be a finite number of seconds > 0, got {value!r}")
                continue
            if f.name == "max_cost":
                before = len(found)
                if money(value, "max_cost", found) == 0 and len(found) == before:
                    found.append(f"max_cost must be > 0 USD, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                found.append(f"{f.name} must be an integer, got {value!r}")
            elif f.name == "max_repeats" and value == 0:  # the loop guard turned off
                continue
            elif value < 1:
                found.append(f"{f.name} must be >= 1, got {value}")
        return found

    @property
    def counts_tokens(self) -> bool:
        """Whether a token budget is set (only then does the run estimate its history size)."""
        return (self.max_input_tokens is not None or self.max_output_tokens is not None
                or self.max_total_tokens is not None)

    def reached(self, run: RunCounts) -> LimitName | None:
        """The first limit that stops the run's next model request, or ``None``."""
        if run.stuck is not None:
            return "repeated_calls"
        if self.max_iterations is not None and run.attempt_iterations >= self.max_iterations:
            return "max_iterations"
        if self.max_tool_calls is not None and run.executed_calls >= self.max_tool_calls:
            return "max_tool_calls"
        if run.deadline is not None and time.monotonic() >= run.deadline:
            return "timeout"
        if run.counts_tokens and self._over_token_budget(run):
            return "token_budget"
        budget = self.cost_budget
        if budget is not None and (run.usage.cost is None or run.usage.cost >= budget):
            return "max_cost"
        return None

    def _over_token_budget(self, run: RunCounts) -> bool:
        usage = run.usage
        if self.max_output_tokens is not None and usage.output_tokens >= self.max_output_tokens:
            return True
        upcoming = run.upcoming_input_tokens
        max_input = self.max_input_tokens
        if max_input is not None and usage.input_tokens + upcoming > max_input:
            return True
        total = self.max_total_tokens
        return total is not None and usage.total_tokens + upcoming > total

    def describe(self, limit: LimitName, run: RunCounts) -> str:
        """The limit in words, with the figures that reached it."""
        match limit:
            case "max_iterations":
                return f"max_iterations={self.max_iterations} reached in attempt {run.attempt}"
            case "max_tool_calls":
                return f"max_tool_calls={self.max_tool_calls} reached"
            case "timeout":
                return f"timeout={self.timeout}s reached"
            case "repeated_calls":
                return (f"the loop guard ended the run: {run.stuck} returned the same result "
                        f"{self.max_repeats} times, was refused, and was called again")
            case "token_budget":
                usage = run.usage
                return (f"token budget reached (input {usage.input_tokens}/"
                        f"{self.max_input_tokens}, output {usage.output_tokens}/"
                        f"{self.max_output_tokens}, total {usage.total_tokens}/"
                        f"{self.max_total_tokens})")
            case "max_cost":
                cost = run.usage.cost
                if cost is None:
                    return (f"max_cost=${self.cost_budget} cannot be kept: a model whose price is "
                            "unknown answered, so the run's cost is unknown")
                return f"max_cost=${self.cost_budget} reached (spent ${cost:f})"

    def led_to[E: AgentError](self, error: E, limit: LimitName, run: RunCounts) -> E:
        """``error`` (the final request at ``limit`` failed) with the limit named in its
        message and context, so the run's termination says which limit led to it."""
        error.message = f"{self.describe(limit, run)}; the final request failed: {error.message}"
        error.context["limit"] = limit
        return error

    def refuse_call(self, run: RunCounts) -> str | None:
        """Why one more tool call is refused by the run-wide ``max_tool_calls``, or ``None``."""
        if self.max_tool_calls is not None and run.executed_calls >= self.max_tool_calls:
            return f"The run's tool-call limit ({self.max_tool_calls}) is reached"
        return None

    def over(self, base: Limits) -> Limits:
        """These limits layered over ``base``: every field set here wins."""
        updates = {f.name: getattr(self, f.name) for f in fields(self)}
        return replace(base, **{k: v for k, v in updates.items() if v is not None})


#: The documented caps; larger values are clamped with a warning.
CAPS: dict[str, int | float] = {
    "max_iterations": 1000,
    "max_attempts": 20,
    "max_tool_calls": 100_000,
    "timeout": 86_400.0,
    "max_observation_chars": 10_000_000,
    "max_repeats": 1000,
    "max_context_tokens": 100_000_000,
}

#: The system defaults, the lowest level of precedence.
DEFAULT_LIMITS = Limits(
    max_iterations=10,
    max_attempts=3,
    on_limit="final_answer",
    max_observation_chars=20_000,
    max_repeats=3,
)


def resolve_limits(*levels: Limits | None) -> Limits:
    """Combine levels from lowest to highest precedence over :data:`DEFAULT_LIMITS`."""
    resolved = DEFAULT_LIMITS
    for level in levels:
        if level is not None:
            resolved = level.over(resolved)
    return resolved


class RepeatGuard:
    """The loop guard of one run (``Limits.max_repeats``): calls that repeat without progress.

    Why: a model that gets the same answer to the same call often calls it again, and again,
    until the iteration budget is spent (langgraph#6731, deepagents#6441). Progress is judged by
    the result: a call whose arguments are the same as an earlier call's (compared in a
    canonical JSON form) but whose result differs (polling that sees a change, a lookup that
    finds something new) starts its count again, so legitimate repetition never trips it.
    """

    __slots__ = ("_refused", "_seen", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._seen: dict[str, tuple[int, int]] = {}  # call key -> (result's hash, same results)
        self._refused: set[str] = set()

    @staticmethod
    def key(name: str, arguments: dict[str, Any]) -> str:
        """The tool and its arguments in a canonical form (key order does not matter)."""
        return name + json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)

    def before(self, key: str) -> Literal["refuse", "stop"] | None:
        """``None``: run the call; ``"refuse"``: answer it with :meth:`refusal` instead;
        ``"stop"``: it was refused before and made again: refuse it, and the run ends."""
        seen = self._seen.get(key)
        if seen is None or seen[1] < self.limit:
            return None
        if key in self._refused:
            return "stop"
        self._refused.add(key)
        return "refuse"

    def after(self, key: str, text: str, is_error: bool) -> int:
        """Count the call's result; returns how many times in a row it was the same."""
        fingerprint = hash((text, is_error))
        seen = self._seen.get(key)
        count = seen[1] + 1 if seen is not None and seen[0] == fingerprint else 1
        self._seen[key] = (fingerprint, count)
        if count == 1:
            self._refused.discard(key)
        return count

    def nudge(self, name: str, count: int) -> str:
        return (f"\n[loop guard] `{name}` returned this same result {count} times for these "
                "same arguments. Use the result you have, or change the arguments or the tool: "
                "a further identical call will be refused.")

    def refusal(self, name: str, stop: bool) -> str:
        then = ("the run ends now." if stop else
                "calling it again with these arguments ends the run.")
        return (f"[loop guard] Refused: `{name}` returned the same result {self.limit} times "
                f"for these same arguments, so it was not called again. Use the result you "
                f"have or change approach; {then}")

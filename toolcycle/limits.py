"""Limits on a run and how they combine: system default < agent < run.

Every field left as ``None`` inherits from the level below. Values are validated (a bad value
is a :class:`~toolcycle.errors.ConfigurationError` listing every problem) and clamped to the
documented caps in :data:`CAPS` (with a warning), so a typo cannot start a 10-million-iteration
run.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace
from typing import Literal

from .errors import ConfigurationError

OnLimit = Literal["final_answer", "partial", "error"]
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

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ConfigurationError(problems, subject="limits")
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
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    found.append(f"timeout must be a number of seconds > 0, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                found.append(f"{f.name} must be an integer, got {value!r}")
            elif value < 1:
                found.append(f"{f.name} must be >= 1, got {value}")
        return found

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
}

#: The system defaults, the lowest level of precedence.
DEFAULT_LIMITS = Limits(
    max_iterations=10,
    max_attempts=3,
    on_limit="final_answer",
    max_observation_chars=20_000,
)


def resolve_limits(*levels: Limits | None) -> Limits:
    """Combine levels from lowest to highest precedence over :data:`DEFAULT_LIMITS`."""
    resolved = DEFAULT_LIMITS
    for level in levels:
        if level is not None:
            resolved = level.over(resolved)
    return resolved

"""Guardrails: checks that run beside the agent and may stop it (docs/guardrails.md).

A guardrail is a function of the run's context and a value that returns ``None`` (pass) or
the reason it trips (a string, or a :class:`Trip` with details). It may be sync or async; the
run races it against cancellation and the timeout like everything else it awaits, and a
guardrail that raises trips (it fails closed: a check that cannot say "fine" is no pass).

- :func:`input_guardrail`: on the run's input (the user prompt, or the typed ``input=``),
  before the first model request, or ``beside=True`` concurrently with it (faster; the first
  request's tokens are spent even when it trips). A trip ends the run with
  :class:`~toolcycle.errors.GuardrailTripped` and nothing else runs: no tool, no second request.
- :func:`output_guardrail`: on the output, after it passed validation. A trip ends the run
  with ``GuardrailTripped``.
- :func:`tool_guardrail`: on a call's arguments before it runs (``on="arguments"``) or on its
  result after (``on="result"``), for every tool or the ones named in ``tools=``. A trip blocks
  the call (not run) or withholds its result: the model is told why, as an error observation,
  and the run goes on; ``Trip(..., halt=True)`` ends the run instead.

Every trip is recorded in the trace (``trace.guardrails``) and sent as a
:class:`~toolcycle.events.GuardrailEvent` (``on_guardrail``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from .context import RunContext

GuardrailKind = Literal["input", "output", "tool_arguments", "tool_result"]
GuardrailFunction = Callable[[RunContext[Any], Any], Any]
"""``(ctx, value) -> None | str | Trip`` (or an awaitable of one)."""

__all__ = [
    "Guardrail",
    "GuardrailFunction",
    "GuardrailKind",
    "Trip",
    "input_guardrail",
    "output_guardrail",
    "tool_guardrail",
]


@dataclass(frozen=True, slots=True)
class Trip:
    """A guardrail's verdict that it trips: why, optional details for the trace, and (tool
    guardrails only) whether the whole run ends rather than the one call."""

    reason: str
    info: dict[str, Any] = field(default_factory=dict)
    halt: bool = False


@dataclass(frozen=True, slots=True)
class Guardrail:
    """One guardrail: its function, what it checks, and where (see the module docstring)."""

    function: GuardrailFunction
    kind: GuardrailKind
    name: str
    #: Tool guardrails: the tools they check (``None``: every tool).
    tools: frozenset[str] | None = None
    #: Input guardrails: run beside the first model request instead of before it.
    beside: bool = False
    is_async: bool = False

    def problems(self) -> list[str]:
        found = []
        if not callable(self.function):
            found.append(f"guardrail {self.name!r}: its function is not callable")
        else:
            try:
                inspect.signature(self.function).bind(None, None)
            except TypeError:
                found.append(f"guardrail {self.name!r} must take (ctx, value)")
            except ValueError:  # no signature to read (a builtin): the run will tell
                pass
        if self.kind not in ("input", "output", "tool_arguments", "tool_result"):
            found.append(f"guardrail {self.name!r}: unknown kind {self.kind!r}")
        if self.beside and self.kind != "input":
            found.append(f"guardrail {self.name!r}: only input guardrails run beside")
        return found


def _make(function: GuardrailFunction, kind: GuardrailKind, name: str | None,
          tools: Iterable[str] | None = None, beside: bool = False) -> Guardrail:
    return Guardrail(function, kind, str(name or getattr(function, "__name__", "guardrail")),
                     None if tools is None else frozenset(tools), beside,
                     inspect.iscoroutinefunction(function))


@overload
def input_guardrail(function: GuardrailFunction, /) -> Guardrail: ...
@overload
def input_guardrail(*, name: str | None = None, beside: bool = False
                    ) -> Callable[[GuardrailFunction], Guardrail]: ...
def input_guardrail(function: GuardrailFunction | None = None, /, *, name: str | None = None,
                    beside: bool = False) -> Guardrail | Callable[[GuardrailFunction],
                                                                   Guardrail]:
    """A guardrail on the run's input: ``@input_guardrail`` or ``@input_guardrail(beside=True)``.
    Its value is the user prompt (a string), or the typed input for an agent with
    ``input_type``."""
    if function is not None:
        return _make(function, "input", name, beside=beside)
    return lambda f: _make(f, "input", name, beside=beside)


@overload
def output_guardrail(function: GuardrailFunction, /) -> Guardrail: ...
@overload
def output_guardrail(*, name: str | None = None) -> Callable[[GuardrailFunction], Guardrail]:
    ...
def output_guardrail(function: GuardrailFunction | None = None, /, *, name: str | None = None
                     ) -> Guardrail | Callable[[GuardrailFunction], Guardrail]:
    """A guardrail on the run's validated output (``result.output``'s value)."""
    if function is not None:
        return _make(function, "output", name)
    return lambda f: _make(f, "output", name)


def tool_guardrail(*, on: Literal["arguments", "result"] = "arguments",
                   tools: Sequence[str] | None = None, name: str | None = None
                   ) -> Callable[[GuardrailFunction], Guardrail]:
    """A guardrail on tool calls: ``@tool_guardrail(on="arguments", tools=["refund"])``. Its
    value is a :class:`~toolcycle.messages.ToolCall` (``on="arguments"``: ``.name``,
    ``.arguments``) or, ``on="result"``, the call's :class:`~toolcycle.messages.ToolResult`
    (``.content``, ``.is_error``, ``.media``: images or documents the tool returned; the
    call's name is ``ctx.tool_name``). A result it withholds is withheld with its media."""
    kind: GuardrailKind = "tool_arguments" if on == "arguments" else "tool_result"
    return lambda f: _make(f, kind, name, tools)


@dataclass(frozen=True, slots=True)
class Guardrails:
    """An agent's guardrails by kind, sorted once at construction (what the engine reads)."""

    before: tuple[Guardrail, ...] = ()  # input, before the first request
    beside: tuple[Guardrail, ...] = ()  # input, beside it
    output: tuple[Guardrail, ...] = ()
    arguments: tuple[Guardrail, ...] = ()
    results: tuple[Guardrail, ...] = ()

    @classmethod
    def collect(cls, items: object) -> tuple[Guardrails | None, list[str]]:
        """``Agent(guardrails=...)``: the guardrails by kind (``None`` for none), and every
        problem found."""
        if not isinstance(items, list | tuple):
            return None, ["guardrails must be a list of guardrails (@input_guardrail, "
                          "@output_guardrail, @tool_guardrail)"]
        problems: list[str] = []
        for item in items:
            if not isinstance(item, Guardrail):
                problems.append(f"guardrails: {type(item).__name__} is not a guardrail (make "
                                "one with @input_guardrail, @output_guardrail or @tool_guardrail)")
            else:
                problems.extend(item.problems())
        if problems or not items:
            return None, problems
        by = {kind: tuple(g for g in items if g.kind == kind) for kind in
              ("input", "output", "tool_arguments", "tool_result")}
        return cls(tuple(g for g in by["input"] if not g.beside),
                   tuple(g for g in by["input"] if g.beside), by["output"],
                   by["tool_arguments"], by["tool_result"]), []

"""The tool trajectory evaluator: did the agent call the tools the case expects?

Four ways to compare the run's tool calls with the case's ``expected_tools``:

- ``"exact"``: the same calls, in the same order, nothing else;
- ``"in_order"``: the expected calls appear in that order, other calls may come between;
- ``"any_order"``: every expected call was made, in any order (others allowed);
- ``"subset"``: every call made is one of the expected ones (not all need be made): the agent
  did nothing it should not have.

``args=True`` compares arguments too: an expected call's ``args`` must each equal the
actual call's argument of that name (arguments it does not list may be anything; an expected
call with no ``args`` matches any). ``args=False`` compares tool names only. Only calls of
helper tools count: the output tool and ``submit`` are how a run ends, not its trajectory.

The score's value is the share of expected calls matched (for ``subset``, of calls made), so a
report shows how close a failing trajectory came.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..errors import ConfigurationError
from ..tracing.trace import ToolCallRecord
from .dataset import Case, ExpectedCall
from .evaluators import Evaluator, Observed, Score

TrajectoryMode = Literal["exact", "in_order", "any_order", "subset"]
MODES: tuple[TrajectoryMode, ...] = ("exact", "in_order", "any_order", "subset")


class ToolTrajectory(Evaluator):
    """Compares the run's tool calls with ``expected`` (default: the case's ``expected_tools``)."""

    reads_output_only = False

    def __init__(self, mode: TrajectoryMode = "in_order", *, args: bool = True,
                 expected: Sequence[ExpectedCall | str] | None = None,
                 name: str = "trajectory") -> None:
        if mode not in MODES:
            raise ConfigurationError([f"mode must be one of {', '.join(MODES)}, got {mode!r}"],
                                     subject="ToolTrajectory")
        self.mode = mode
        self.args = args
        self.expected = None if expected is None else tuple(
            ExpectedCall(e) if isinstance(e, str) else e for e in expected)
        self.name = name

    def check(self, case: Case, run: Observed) -> Score | None:
        expected = self.expected if self.expected is not None else case.expected_tools
        if expected is None:
            return None
        made = [c for c in run.tool_calls if c.kind == "tool"]
        matched, ok = _compare(self.mode, expected, made, self.args)
        total = len(made) if self.mode == "subset" else len(expected)
        value = matched / total if total else 1.0
        names = " > ".join(c.name for c in made) or "no tool calls"
        want = " > ".join(e.name for e in expected) or "no tool calls"
        verdict = "matches" if ok else "does not match"
        return self.score(value, ok, f"{names} {verdict} {want} ({self.mode}, "
                                     f"{'with' if self.args else 'names only, no'} arguments)")


def _compare(mode: TrajectoryMode, expected: Sequence[ExpectedCall],
             made: Sequence[ToolCallRecord], with_args: bool) -> tuple[int, bool]:
    """(how many matched, whether the mode's condition holds)."""
    def fits(want: ExpectedCall, call: ToolCallRecord) -> bool:
        return want.name == call.name and (not with_args or _args_fit(want.args, call.args))

    if mode == "exact":
        matched = sum(1 for want, call in zip(expected, made, strict=False) if fits(want, call))
        return matched, matched == len(expected) == len(made)
    if mode == "in_order":
        position = 0
        for call in made:
            if position < len(expected) and fits(expected[position], call):
                position += 1
        return position, position == len(expected)
    if mode == "any_order":
        unused = list(made)
        matched = 0
        for want in expected:
            hit = next((c for c in unused if fits(want, c)), None)
            if hit is not None:
                unused.remove(hit)
                matched += 1
        return matched, matched == len(expected)
    inside = sum(1 for call in made if any(fits(want, call) for want in expected))
    return inside, inside == len(made)


def _args_fit(expected: Mapping[str, Any] | None, actual: Mapping[str, Any] | None) -> bool:
    if expected is None:
        return True
    given = actual or {}
    return all(key in given and given[key] == value for key, value in expected.items())

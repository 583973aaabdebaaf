"""The first-hour suite's vocabulary: an agent a newcomer writes, its questions, their grading.

Issue 68 asks whether the local 1.5B answers *first-hour agents* right: the kind a person
writes from README.md and docs/local-model.md in an hour (2-4 plain Python tools over a small
in-memory table, an instruction line, maybe a pydantic output), asked questions whose answer
needs a chain of calls (look an id up by name, ask for its details, convert or add up). A
question is graded by the figure or name the tools produce, nothing else: the grader does not
read the trace, so a right figure the model happened to compute itself counts, and a wrong one
reported with ``status == "success"`` is the failure the issue names (the run says it is right
when it is not).

Each agent becomes one :class:`toolcycle.evals.Dataset` (its questions as cases) and one
:class:`toolcycle.evals.Experiment`; ``bench/first_hour/run.py`` runs them and reports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from toolcycle import Agent, Limits, Tool
from toolcycle.evals import Case, Dataset, Function, Observed, Score

#: Relative tolerance for figures: the tools round to 2 decimals, a model may round further.
REL_TOL = 0.006
#: Absolute tolerance for figures (a cent, a hundredth of a unit).
ABS_TOL = 0.011

_IDENTIFIER = re.compile(r"\b[A-Za-z]+[-_]?\d[\w-]*")  # S-12, KX7, LIS2 are ids, not figures
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Question:
    """One question and the answer the tools give.

    ``expected``: a figure (graded within :data:`REL_TOL`/:data:`ABS_TOL`) or a name (graded
    as words in the answer, case-insensitive). ``field``: for an agent with a structured
    output, the output field that must hold it (``None``: anywhere in the answer).
    ``chain``: the tool calls a right answer needs, in order (documentation, not graded).
    """

    name: str
    text: str
    expected: float | str
    chain: tuple[str, ...] = ()
    field: str | None = None


@dataclass(frozen=True)
class FirstHourAgent:
    """An agent as a newcomer writes it, with its three questions."""

    name: str
    domain: str
    instructions: str
    tools: Sequence[Callable[..., Any] | Tool[Any]]
    questions: Sequence[Question]
    output: type[BaseModel] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def build(self, model: Any, *, grounding: bool | None = None,
              limits: Limits | None = None, model_settings: Any = None) -> Agent[Any, Any]:
        """The agent as the docs teach it: a model string, instructions, the tools.
        ``grounding=None`` leaves the library's default (on for local models)."""
        kwargs: dict[str, Any] = {"name": self.name}
        if grounding is not None:
            kwargs["grounding"] = grounding
        if self.output is not None:
            kwargs["output"] = self.output
        if limits is not None:
            kwargs["limits"] = limits
        if model_settings is not None:
            kwargs["model_settings"] = model_settings
        return Agent(model, self.instructions, list(self.tools), **kwargs)

    def dataset(self) -> Dataset:
        """The questions as eval cases (``metadata.field`` names the graded output field)."""
        return Dataset.of(
            [{"name": q.name, "inputs": q.text, "expected_output": q.expected,
              "metadata": {"kind": self.domain, "field": q.field, "chain": list(q.chain)}}
             for q in self.questions], name=self.name)


def numbers_in(text: str) -> list[float]:
    """The figures written in ``text`` (``1,250.5`` is one figure; ids like ``S-12`` are
    not figures)."""
    cleaned = _IDENTIFIER.sub(" ", text)
    found = []
    for match in _NUMBER.findall(cleaned):
        try:
            found.append(float(match.replace(",", "")))
        except ValueError:
            continue
    return found


def figure_matches(expected: float, value: float) -> bool:
    return math.isclose(value, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def grade(expected: float | str, answer: Any, field_name: str | None = None) -> tuple[bool, str]:
    """Whether ``answer`` (text, or a pydantic model / dict for a structured output) holds the
    expected figure or name, and why."""
    value = answer
    if field_name is not None:
        data = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
        if not isinstance(data, dict) or field_name not in data:
            return False, f"no field {field_name!r} in the output {str(answer)[:120]!r}"
        value = data[field_name]
    if isinstance(value, BaseModel):
        value = value.model_dump_json()
    if isinstance(expected, str):
        text = value if isinstance(value, str) else str(value)
        ok = _words(expected) in _words(text)
        return ok, f"{'found' if ok else 'missing'} {expected!r} in {text[:160]!r}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        figures = [float(value)]
    else:
        figures = numbers_in(value if isinstance(value, str) else str(value))
    ok = any(figure_matches(float(expected), f) for f in figures)
    return ok, f"{'found' if ok else 'missing'} {expected:g} among {figures[:8]}"


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def _right(case: Case, run: Observed) -> Score:
    expected = case.expected_output
    assert isinstance(expected, str | int | float)
    ok, reason = grade(expected, run.output, case.metadata.get("field"))
    return Score("right", 1.0 if ok else 0.0, ok, reason)


#: The suite's one evaluator: the answer holds the tools' figure or name.
RIGHT = Function(_right, name="right")

"""Evaluators: each looks at one run of one case and returns a typed :class:`Score`.

A score is a value between 0 and 1, whether it passes, and the reason in words (what was
expected, what came): a report that says "failed" without why sends the user to the traces
for every row. Evaluators are async because the LLM judge is; the others just return.

Here: :class:`Equals`, :class:`Contains`, :class:`Regex`, :class:`Numeric`,
:class:`MatchesSchema` (a JSON Schema or a pydantic model) and :class:`Function` (any plain
Python function). The tool trajectory is in :mod:`.trajectory`, the LLM judge in :mod:`.judge`.
Bad configuration raises :class:`~toolcycle.errors.ConfigurationError` at construction.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ..tracing.trace import ToolCallRecord, Trace
from .dataset import Case


@dataclass(frozen=True, slots=True)
class Score:
    """What one evaluator made of one run: ``value`` in [0, 1], ``passed`` and why."""

    evaluator: str
    value: float
    passed: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"evaluator": self.evaluator, "value": self.value, "passed": self.passed,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Observed:
    """What a run of a case produced, as the evaluators see it.

    ``succeeded``: ``result.succeeded`` (``status == "success"``, docs/status.md);
    a failed run has its partial output and trace here, and ``error`` says why it failed.
    """

    output: Any
    tool_calls: tuple[ToolCallRecord, ...] = ()
    succeeded: bool = True
    error: str | None = None
    trace: Trace | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """The output as text: strings as they are, anything else as JSON."""
        if isinstance(self.output, str):
            return self.output
        return json.dumps(plain(self.output), ensure_ascii=False, default=str)


def plain(value: Any) -> Any:
    """Typed outputs (pydantic models) as JSON data, so they compare with dataset values."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


class Evaluator:
    """The base of every evaluator: a ``name`` (the report's column) and :meth:`evaluate`.

    Evaluators that need no I/O implement :meth:`check` (synchronous) and get
    :meth:`evaluate` for free; the LLM judge implements :meth:`evaluate` alone. The playbook's
    learning grades runs synchronously from inside the run, so only evaluators with a
    ``check`` that read the output alone (``reads_output_only``) can grade learning runs.

    ``None`` instead of a score means *not applicable*: the case lacks what the evaluator
    compares with (no expected output, no expected tools). It is left out of that evaluator's
    figures rather than counted as a failure, so a dataset can mix kinds of case.
    """

    name: str = "evaluator"
    #: whether :meth:`check` needs nothing but the run's output (not its tool calls)
    reads_output_only: bool = True

    def check(self, case: Case, run: Observed) -> Score | None:
        raise NotImplementedError(f"{type(self).__name__} has no synchronous check")

    async def evaluate(self, case: Case, run: Observed) -> Score | None:
        return self.check(case, run)

    def evaluate_sync(self, case: Case, run: Observed) -> Score | None:
        """:meth:`evaluate` from synchronous code (not from inside a running event loop)."""
        return asyncio.run(self.evaluate(case, run))

    @property
    def synchronous(self) -> bool:
        """Whether :meth:`check` is implemented (the learning grader needs it)."""
        return type(self).check is not Evaluator.check

    def score(self, value: float, passed: bool, reason: str) -> Score:
        return Score(self.name, float(value), passed, reason)


_UNSET: Any = object()


def _expected(given: Any, case: Case) -> Any:
    return case.expected_output if given is _UNSET else given


def _short(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(plain(value), ensure_ascii=False,
                                                          default=str)
    return repr(text[:limit] + "…" if len(text) > limit else text)


class Equals(Evaluator):
    """The output equals the expected value (the case's ``expected_output`` unless given);
    pydantic outputs compare as their JSON data."""

    def __init__(self, expected: Any = _UNSET, *, name: str = "equals") -> None:
        self.expected = expected
        self.name = name

    def check(self, case: Case, run: Observed) -> Score | None:
        expected = _expected(self.expected, case)
        if self.expected is _UNSET and expected is None:
            return None
        ok = plain(run.output) == expected
        return self.score(ok, ok, "equal" if ok else
                          f"expected {_short(expected)}, got {_short(run.output)}")


class Contains(Evaluator):
    """The expected text appears in the output (case-insensitive unless asked); of a list of
    expected texts, any one."""

    def __init__(self, expected: Any = _UNSET, *, case_sensitive: bool = False,
                 name: str = "contains") -> None:
        self.expected = expected
        self.case_sensitive = case_sensitive
        self.name = name

    def check(self, case: Case, run: Observed) -> Score | None:
        expected = _expected(self.expected, case)
        if expected is None:
            return None
        answers = expected if isinstance(expected, list) else [expected]
        text = run.text if self.case_sensitive else run.text.lower()
        for answer in answers:
            needle = str(answer) if self.case_sensitive else str(answer).lower()
            if needle in text:
                return self.score(1, True, f"found {_short(answer)}")
        return self.score(0, False, f"none of {_short(answers)} in {_short(run.text)}")


class Regex(Evaluator):
    """The output (as text) matches ``pattern`` somewhere (``re.search``)."""

    def __init__(self, pattern: str, *, flags: int = 0, name: str = "regex") -> None:
        try:
            self.pattern = re.compile(pattern, flags)
        except re.error as exc:
            raise ConfigurationError([f"pattern {pattern!r}: {exc}"], subject="Regex") from exc
        self.name = name

    def check(self, case: Case, run: Observed) -> Score | None:
        found = self.pattern.search(run.text)
        if found:
            return self.score(1, True, f"matched {_short(found.group(0))}")
        return self.score(0, False, f"/{self.pattern.pattern}/ not in {_short(run.text)}")


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


class Numeric(Evaluator):
    """A number within tolerance of the expected one: the output itself when it is a number,
    else any number written in its text (thousands separators ignored)."""

    def __init__(self, expected: float | None = None, *, abs_tol: float = 0.0,
                 rel_tol: float = 1e-9, name: str = "numeric") -> None:
        problems = [f"{label} must be a finite number >= 0, got {value!r}"
                    for label, value in (("abs_tol", abs_tol), ("rel_tol", rel_tol))
                    if not isinstance(value, int | float) or not math.isfinite(value)
                    or value < 0]
        if problems:
            raise ConfigurationError(problems, subject="Numeric")
        self.expected = expected
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol
        self.name = name

    def check(self, case: Case, run: Observed) -> Score | None:
        raw = case.expected_output if self.expected is None else self.expected
        if raw is None:
            return None
        try:
            expected = float(raw)
        except (TypeError, ValueError):
            return self.score(0, False, f"expected output {_short(raw)} is not a number")
        if isinstance(run.output, int | float) and not isinstance(run.output, bool):
            numbers = [float(run.output)]
        else:
            numbers = [float(n) for n in _NUMBER.findall(run.text.replace(",", ""))]
        for number in numbers:
            if math.isclose(number, expected, rel_tol=self.rel_tol, abs_tol=self.abs_tol):
                return self.score(1, True, f"{number:g} is within tolerance of {expected:g}")
        seen = ", ".join(f"{n:g}" for n in numbers[:5]) or "no number"
        return self.score(0, False, f"expected {expected:g}, found {seen}")


class MatchesSchema(Evaluator):
    """The output fits a JSON Schema (a dict, checked without fetching any ``$ref``) or
    validates as a pydantic model class."""

    def __init__(self, schema: dict[str, Any] | type[Any], *, name: str = "schema") -> None:
        from .._tool_schema import compile_validator, schema_problems

        self.name = name
        self._model: type[Any] | None = None
        self._validator: Any = None
        if isinstance(schema, dict):
            problems = schema_problems(schema)
            if problems:
                raise ConfigurationError(problems, subject="MatchesSchema")
            self._validator = compile_validator(schema)
        elif isinstance(schema, type) and callable(getattr(schema, "model_validate", None)):
            self._model = schema
        else:
            raise ConfigurationError(["schema must be a JSON Schema dict or a pydantic model "
                                      f"class, got {type(schema).__name__}"],
                                     subject="MatchesSchema")

    def check(self, case: Case, run: Observed) -> Score | None:
        data = plain(run.output)
        if isinstance(data, str):
            with contextlib.suppress(ValueError):  # else validated as the string it is
                data = json.loads(data)
        if self._model is not None:
            import pydantic

            try:
                self._model.model_validate(data)
            except pydantic.ValidationError as exc:
                found = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                  for e in exc.errors()[:5])
                return self.score(0, False, found)
            return self.score(1, True, f"a valid {self._model.__name__}")
        errors = [e.message for e in self._validator.iter_errors(data)][:5]
        if errors:
            return self.score(0, False, "; ".join(errors))
        return self.score(1, True, "fits the schema")


ScoreFunction = Callable[[Case, Observed], Any]


class Function(Evaluator):
    """A plain Python function ``fn(case, run)`` (sync or async) as an evaluator.

    It may return a bool (pass or fail), a number in [0, 1] (passes at ``threshold``), a
    ``(value, reason)`` pair or a :class:`Score`. An exception is a failed score that names it,
    not a crashed experiment.
    """

    def __init__(self, fn: ScoreFunction, *, name: str | None = None,
                 threshold: float = 1.0) -> None:
        if not callable(fn):
            raise ConfigurationError([f"expected a function, got {type(fn).__name__}"],
                                     subject="Function")
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.name = name or str(getattr(fn, "__name__", "function"))
        self.threshold = threshold
        #: a function may read anything it is given: the tool calls included
        self.reads_output_only = False

    def check(self, case: Case, run: Observed) -> Score | None:
        if self.is_async:
            raise TypeError(f"{self.name} is an async function: await evaluate() instead")
        try:
            value = self.fn(case, run)
        except Exception as exc:
            return self.score(0, False, f"{type(exc).__name__}: {exc}")
        return self._coerce(value)

    async def evaluate(self, case: Case, run: Observed) -> Score | None:
        if not self.is_async:
            return self.check(case, run)
        try:
            value = await self.fn(case, run)
        except Exception as exc:
            return self.score(0, False, f"{type(exc).__name__}: {exc}")
        return self._coerce(value)

    @property
    def synchronous(self) -> bool:
        return not self.is_async

    def _coerce(self, value: Any) -> Score:
        reason = ""
        if isinstance(value, Score):
            return Score(self.name, value.value, value.passed, value.reason)
        if isinstance(value, tuple) and len(value) == 2:
            value, reason = value[0], str(value[1])
        if isinstance(value, bool):
            return self.score(value, value, reason or ("passed" if value else "failed"))
        if isinstance(value, int | float) and math.isfinite(value):
            number = min(1.0, max(0.0, float(value)))
            return self.score(number, number >= self.threshold, reason or f"{number:g}")
        return self.score(0, False, f"returned {type(value).__name__}, expected a bool, a "
                                    "number in [0, 1], (value, reason) or a Score")


AnyEvaluator = Evaluator | ScoreFunction


def as_evaluators(items: Sequence[AnyEvaluator]) -> list[Evaluator]:
    """Evaluators as given, plain functions wrapped in :class:`Function`; names must be unique
    (they are the report's columns)."""
    evaluators = [item if isinstance(item, Evaluator) else Function(item) for item in items]
    names = [e.name for e in evaluators]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigurationError([f"evaluator name {n!r} is used more than once (pass name=)"
                                  for n in repeated], subject="evaluators")
    return evaluators

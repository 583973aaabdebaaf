"""Evaluators named in text, for the command line: ``--check trajectory:any_order``.

The grammar (each a ``--check`` value):

- ``equals``, ``contains``, ``schema:FILE.json`` (a JSON Schema file)
- ``numeric`` or ``numeric:TOLERANCE`` (absolute)
- ``regex:PATTERN``
- ``trajectory`` or ``trajectory:MODE`` or ``trajectory:MODE:names`` (MODE: exact, in_order,
  any_order, subset; ``names``: compare tool names only)
- ``judge:MODEL`` (with ``--rubric``): an LLM judge on any model string

Without any, :func:`default_evaluators` looks at the dataset: ``contains`` when a case has an
expected output, ``trajectory`` when a case has expected tools. Every bad name is reported at
once, as bad configuration always is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .dataset import Dataset
from .evaluators import Contains, Equals, Evaluator, MatchesSchema, Numeric, Regex
from .trajectory import MODES, ToolTrajectory

NAMES = ("equals", "contains", "numeric", "regex", "schema", "trajectory", "judge")


def named_evaluators(texts: Sequence[str], *, rubric: str | None = None,
                     resolve_model: Callable[[str], Any] = str) -> list[Evaluator]:
    """The evaluators ``texts`` name; raises ConfigurationError listing every bad one.
    ``resolve_model``: turns a judge's model text into what ``Agent`` takes (the CLI's
    ``python:module:attribute`` included)."""
    problems: list[str] = []
    found: list[Evaluator] = []
    for text in texts:
        try:
            found.append(_one(text, rubric, resolve_model))
        except ConfigurationError as exc:
            problems += [f"--check {text!r}: {p}" for p in exc.problems]
        except (ValueError, OSError) as exc:
            problems.append(f"--check {text!r}: {exc}")
    if problems:
        raise ConfigurationError(problems, subject="evaluators")
    return found


def _one(text: str, rubric: str | None, resolve_model: Callable[[str], Any]) -> Evaluator:
    kind, _, rest = text.partition(":")
    if kind == "equals" and not rest:
        return Equals()
    if kind == "contains" and not rest:
        return Contains()
    if kind == "numeric":
        return Numeric(abs_tol=float(rest) if rest else 0.0)
    if kind == "regex" and rest:
        return Regex(rest)
    if kind == "schema" and rest:
        return MatchesSchema(json.loads(Path(rest).read_text(encoding="utf-8")))
    if kind == "trajectory":
        mode, _, names = rest.partition(":")
        if mode and mode not in MODES:
            raise ValueError(f"trajectory mode must be one of {', '.join(MODES)}")
        if names not in ("", "names"):
            raise ValueError("the third part of trajectory:MODE:names can only be 'names'")
        return ToolTrajectory(mode or "in_order", args=names != "names")
    if kind == "judge" and rest:
        if not rubric:
            raise ValueError("an LLM judge needs --rubric TEXT")
        from .judge import LLMJudge

        return LLMJudge(resolve_model(rest), rubric)
    raise ValueError(f"expected one of {', '.join(NAMES)} (see toolcycle eval --help)")


def default_evaluators(dataset: Dataset) -> list[Evaluator]:
    """``contains`` if a case expects an output, ``trajectory`` if one expects tools."""
    found: list[Evaluator] = []
    if any(case.expected_output is not None for case in dataset):
        found.append(Contains())
    if any(case.expected_tools is not None for case in dataset):
        found.append(ToolTrajectory())
    return found

"""Evals: measure an agent on a dataset, on any model, and whether a change (or what the
playbook learned) made it better. See docs/evals.md.

- :mod:`.dataset`: :class:`Case`, :class:`Dataset` (JSONL and YAML, every bad row in one error)
- :mod:`.evaluators`, :mod:`.trajectory`, :mod:`.judge`: scores with reasons
- :mod:`.experiment`: :class:`Experiment` (repeats, concurrency, asyncio or Ray, resumable log)
- :mod:`.report`, :mod:`.report_html`: figures with 95 % intervals, table, HTML, JSON
- :mod:`.compare`: two experiments paired by case, with paired tests
- :mod:`.playbook_ab`: no playbook vs a playbook learned on a train split, in one call
- :mod:`.stats`: the intervals and tests themselves
- :mod:`.testing`: thresholds to assert in a user's CI
"""

from __future__ import annotations

from .compare import CaseChange, Comparison, compare
from .dataset import Case, Dataset, DatasetError, ExpectedCall
from .evaluators import (
    Contains,
    Equals,
    Evaluator,
    Function,
    MatchesSchema,
    Numeric,
    Observed,
    Regex,
    Score,
)
from .experiment import Experiment
from .judge import LLMJudge, Verdict
from .playbook_ab import PlaybookAB, playbook_ab
from .records import ExperimentLogError, RunRecord, read_records
from .report import ExperimentReport
from .stats import Estimate
from .testing import EvalThresholdError, assert_thresholds
from .trajectory import ToolTrajectory

__all__ = [
    "Case",
    "CaseChange",
    "Comparison",
    "Contains",
    "Dataset",
    "DatasetError",
    "Equals",
    "Estimate",
    "EvalThresholdError",
    "Evaluator",
    "ExpectedCall",
    "Experiment",
    "ExperimentLogError",
    "ExperimentReport",
    "Function",
    "LLMJudge",
    "MatchesSchema",
    "Numeric",
    "Observed",
    "PlaybookAB",
    "Regex",
    "RunRecord",
    "Score",
    "ToolTrajectory",
    "Verdict",
    "assert_thresholds",
    "compare",
    "playbook_ab",
    "read_records",
]

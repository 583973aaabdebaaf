"""The figures of a report, per case and per evaluator, and the rule of what a passing run is.

Kept apart from :mod:`.report` so that the HTML page (:mod:`.report_html`), the comparison
(:mod:`.compare`) and the report itself all read the same definitions without importing each
other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .records import RunRecord
from .stats import Estimate, mean_interval, pass_at_k, pass_hat_k, wilson


def run_passes(record: RunRecord) -> bool:
    """Succeeded, and every evaluator passed it."""
    return record.succeeded and all(score.passed for score in record.scores)


@dataclass(frozen=True, slots=True)
class EvaluatorSummary:
    """One evaluator over some runs: pass rate (Wilson) and mean score (t)."""

    passed: Estimate
    score: Estimate

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed.to_dict(), "score": self.score.to_dict()}


def summarise(records: Sequence[RunRecord], evaluator: str) -> EvaluatorSummary:
    scores = [s for r in records if (s := r.score(evaluator)) is not None]
    return EvaluatorSummary(wilson(sum(s.passed for s in scores), len(scores)),
                            mean_interval([s.value for s in scores]))


@dataclass(frozen=True, slots=True)
class CaseReport:
    """One case over its repeats."""

    case: str
    kind: str
    runs: int
    success: Estimate
    passed: Estimate
    pass_at_k: float
    pass_hat_k: float
    k: int
    evaluators: dict[str, EvaluatorSummary]
    iterations: Estimate
    tokens: Estimate
    cost_usd: Estimate | None
    latency_s: Estimate
    #: What the case's runs cost in all (USD); ``None`` when any run's cost is unknown.
    cost_total_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "kind": self.kind, "runs": self.runs,
                "success": self.success.to_dict(), "passed": self.passed.to_dict(),
                "pass_at_k": self.pass_at_k, "pass_hat_k": self.pass_hat_k, "k": self.k,
                "evaluators": {n: e.to_dict() for n, e in self.evaluators.items()},
                "iterations": self.iterations.to_dict(), "tokens": self.tokens.to_dict(),
                "cost_usd": self.cost_usd.to_dict() if self.cost_usd else None,
                "cost_total_usd": self.cost_total_usd,
                "latency_s": self.latency_s.to_dict()}


def case_report(case: str, kind: str, records: Sequence[RunRecord],
                evaluators: Sequence[str], k: int) -> CaseReport:
    n = len(records)
    passes = sum(run_passes(r) for r in records)
    costs = [r.cost_usd for r in records if r.cost_usd is not None]
    return CaseReport(
        case, kind, n, wilson(sum(r.succeeded for r in records), n), wilson(passes, n),
        pass_at_k(n, passes, k) if n else math.nan, pass_hat_k(n, passes, k) if n else math.nan,
        k, {name: summarise(records, name) for name in evaluators},
        mean_interval([r.iterations for r in records]),
        mean_interval([r.tokens for r in records]),
        mean_interval(costs) if len(costs) == n and costs else None,
        mean_interval([r.latency_s for r in records]), total_cost(records))


def total_cost(records: Sequence[RunRecord]) -> float | None:
    """What ``records`` cost in all (USD): the sum of every run's cost, ``None`` when any
    run's cost is unknown (a total that left runs out would be a made-up figure)."""
    costs = [r.cost_usd for r in records]
    return math.fsum(c for c in costs if c is not None) if None not in costs else None


@dataclass(frozen=True, slots=True)
class Headline:
    """The experiment-wide figures a page or table leads with."""

    name: str
    evaluators: tuple[str, ...]
    runs: int
    passed: Estimate
    success: Estimate
    k: int
    pass_at_k: float
    pass_hat_k: float
    #: What every run cost in all (USD, :func:`total_cost`); ``None`` when unknown.
    cost_usd: float | None = None


def json_ready(value: Any) -> Any:
    """JSON has no NaN: missing figures (no runs, one value) are written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value

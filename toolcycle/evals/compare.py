"""Two experiments paired by case: which cases got better or worse, and is it more than noise?

The unit is the case, not the run: repeats of one case are not independent (a hard case is
hard every time), so pooling runs would count one case's luck many times over. Each case
gets its pass rate in each experiment; a case whose rate rose is *better*, fell is *worse*.

- Whether more cases got better than worse beyond chance: the exact **sign test** on the
  changed cases (McNemar's exact test, for one repeat per case).
- Iterations, tokens and latency: per case the mean in each arm, paired; the mean difference
  with its t interval and the **Wilcoxon signed-rank** p-value (:mod:`.stats` says why).
  They are given over all runs, and over the *both-passed* pairs alone (runs of the same case
  and repeat that passed in both arms), since a failed run's iterations measure the failure,
  not the work a right answer took.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._safe_text import terminal_safe
from .figures import json_ready, run_passes
from .records import RunRecord
from .report import ExperimentReport
from .stats import Estimate, average, mean_interval, sign_test, wilcoxon

#: The paired numeric figures: name -> what to read off a record.
METRICS: dict[str, Callable[[RunRecord], float]] = {
    "iterations": lambda r: float(r.iterations),
    "tokens": lambda r: float(r.tokens),
    "latency_s": lambda r: r.latency_s,
}
SIGNIFICANCE = 0.05


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case's pass rate in each arm (``a`` before, ``b`` after)."""

    case: str
    kind: str
    a: float
    b: float
    runs_a: int
    runs_b: int

    @property
    def change(self) -> str:
        return "better" if self.b > self.a else "worse" if self.b < self.a else "same"

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "kind": self.kind, "a": self.a, "b": self.b,
                "runs_a": self.runs_a, "runs_b": self.runs_b, "change": self.change}


@dataclass(frozen=True, slots=True)
class MetricChange:
    """A numeric figure paired by case: each arm's mean, the difference b - a with its
    interval, and the Wilcoxon p-value; ``pairs``: the cases it is computed over."""

    metric: str
    a: float
    b: float
    difference: Estimate
    p_value: float
    pairs: int

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "a": self.a, "b": self.b,
                "difference": self.difference.to_dict(), "p_value": self.p_value,
                "pairs": self.pairs}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Experiment ``b`` against experiment ``a``, over the cases both ran."""

    a: str
    b: str
    cases: tuple[CaseChange, ...]
    metrics: dict[str, MetricChange]
    metrics_both_passed: dict[str, MetricChange]
    pass_rate_a: float
    pass_rate_b: float

    @property
    def better(self) -> list[str]:
        return [c.case for c in self.cases if c.change == "better"]

    @property
    def worse(self) -> list[str]:
        return [c.case for c in self.cases if c.change == "worse"]

    @property
    def p_value(self) -> float:
        """Exact two-sided sign test over the changed cases."""
        return sign_test(len(self.better), len(self.worse))

    @property
    def significant(self) -> bool:
        """Whether the pass-rate change is more than noise at the 5 % level."""
        return self.p_value < SIGNIFICANCE

    @property
    def share_worse(self) -> float:
        """The share of cases made worse (0 when there are none to compare)."""
        return len(self.worse) / len(self.cases) if self.cases else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "pass_rate_a": self.pass_rate_a,
                "pass_rate_b": self.pass_rate_b, "better": self.better, "worse": self.worse,
                "share_worse": self.share_worse, "p_value": self.p_value,
                "significant": self.significant,
                "test": "exact two-sided sign test over changed cases (McNemar exact)",
                "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
                "metrics_both_passed": {k: m.to_dict()
                                        for k, m in self.metrics_both_passed.items()},
                "cases": [c.to_dict() for c in self.cases]}

    def to_json(self) -> str:
        return json.dumps(json_ready(self.to_dict()), indent=1)

    def render(self) -> str:
        """A few lines for a terminal."""
        verdict = ("more than noise" if self.significant
                   else "within noise")
        lines = [f"{terminal_safe(self.b)} vs {terminal_safe(self.a)}: pass "
                 f"{self.pass_rate_a:.0%} -> {self.pass_rate_b:.0%}; {len(self.better)} "
                 f"better, {len(self.worse)} worse of {len(self.cases)} cases "
                 f"(sign test p={self.p_value:.3g}: {verdict}; "
                 f"{self.share_worse:.0%} made worse)"]
        for label, metrics in (("all runs", self.metrics),
                               ("both passed", self.metrics_both_passed)):
            for m in metrics.values():
                if not m.pairs:
                    lines.append(f"  {m.metric:<10} {label:<11} no case to pair")
                    continue
                lines.append(f"  {m.metric:<10} {label:<11} {m.a:10.2f} -> {m.b:10.2f}  "
                             f"diff {m.difference} (Wilcoxon p={m.p_value:.3g}, "
                             f"{m.pairs} cases)")
        for change in self.cases:
            if change.change != "same":
                lines.append(f"  {change.change:<6} {terminal_safe(change.case)}: "
                             f"{change.a:.0%} -> {change.b:.0%}")
        return "\n".join(lines)


def compare(a: ExperimentReport, b: ExperimentReport) -> Comparison:
    """``b`` against ``a``, paired by case name (cases only one of them ran are left out)."""
    runs_a = _by_case(a.records)
    runs_b = _by_case(b.records)
    shared = [name for name in runs_a if name in runs_b]
    cases = tuple(CaseChange(name, runs_a[name][0].kind, _rate(runs_a[name]),
                             _rate(runs_b[name]), len(runs_a[name]), len(runs_b[name]))
                  for name in shared)
    both = {name: _both_passed(runs_a[name], runs_b[name]) for name in shared}
    return Comparison(
        a.name, b.name, cases,
        {m: _metric(m, f, [(runs_a[n], runs_b[n]) for n in shared]) for m, f in METRICS.items()},
        {m: _metric(m, f, [pair for pair in both.values() if pair[0]])
         for m, f in METRICS.items()},
        average([c.a for c in cases]), average([c.b for c in cases]))


def _by_case(records: Sequence[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = {}
    for record in records:
        out.setdefault(record.case, []).append(record)
    return out


def _rate(records: Sequence[RunRecord]) -> float:
    return sum(run_passes(r) for r in records) / len(records)


def _both_passed(a: Sequence[RunRecord],
                 b: Sequence[RunRecord]) -> tuple[list[RunRecord], list[RunRecord]]:
    """The runs of one case whose repeat passed in both arms, paired by repeat."""
    passed_b = {r.repeat: r for r in b if run_passes(r)}
    pairs = [(r, passed_b[r.repeat]) for r in a if run_passes(r) and r.repeat in passed_b]
    return [x for x, _ in pairs], [y for _, y in pairs]


def _metric(name: str, read: Callable[[RunRecord], float],
            pairs: Sequence[tuple[Sequence[RunRecord], Sequence[RunRecord]]]) -> MetricChange:
    means = [(average([read(r) for r in a]), average([read(r) for r in b])) for a, b in pairs]
    differences = [y - x for x, y in means]
    return MetricChange(name, average([x for x, _ in means]), average([y for _, y in means]),
                        mean_interval(differences), wilcoxon(differences), len(means))

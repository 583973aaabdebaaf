"""What an experiment found: per case and evaluator, means with 95 % intervals, pass@k and
pass^k over repeats, iterations, tokens, cost and latency; as a terminal table or JSON (the
HTML page is :mod:`.report_html`).

A run *passes* when it succeeded (``status == "success"``) and every evaluator passed it; the
``pass`` column, pass@k and pass^k are about that. Each evaluator also has its own pass rate
(Wilson interval) and mean score (t interval); :mod:`.stats` says why those intervals.

Overall figures pool every run of every case. Runs of the same case are not independent (the
same case is easier or harder for every repeat), so the pooled interval is narrower than the
truth when cases differ a lot; the per-case rows and pass^k show that spread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..tracing.values import money
from .figures import (
    CaseReport,
    EvaluatorSummary,
    Headline,
    case_report,
    json_ready,
    run_passes,
    summarise,
    total_cost,
)
from .records import RunRecord
from .report_html import render_report_html
from .stats import Estimate, average, wilson


@dataclass(frozen=True, slots=True)
class ExperimentReport:
    """Every figure of one experiment, computed from its run records."""

    name: str
    evaluators: tuple[str, ...]
    cases: tuple[CaseReport, ...]
    records: tuple[RunRecord, ...]
    repeats: int

    @classmethod
    def from_records(cls, name: str, evaluators: Sequence[str], records: Iterable[RunRecord],
                     *, order: Sequence[str] | None = None) -> ExperimentReport:
        """``order``: the dataset's case names (default: as the records first name them)."""
        kept = sorted(records, key=lambda r: r.key)
        by_case: dict[str, list[RunRecord]] = {}
        for name_ in order or ():
            by_case[name_] = []
        for record in kept:
            by_case.setdefault(record.case, []).append(record)
        ran = [len(rs) for rs in by_case.values() if rs]
        k = min(ran) if ran else 1
        cases = tuple(case_report(c, rs[0].kind if rs else "", rs, evaluators, k)
                      for c, rs in by_case.items() if rs)
        return cls(name, tuple(evaluators), cases, tuple(kept), max(ran, default=0))

    @property
    def k(self) -> int:
        return min((c.runs for c in self.cases), default=1)

    @property
    def success(self) -> Estimate:
        return wilson(sum(r.succeeded for r in self.records), len(self.records))

    @property
    def passed(self) -> Estimate:
        """The share of runs that pass (succeeded, every evaluator passed)."""
        return wilson(sum(run_passes(r) for r in self.records), len(self.records))

    def evaluator(self, name: str) -> EvaluatorSummary:
        """One evaluator over every run."""
        return summarise(self.records, name)

    @property
    def pass_at_k(self) -> float:
        """The mean over cases of each case's unbiased pass@k, k = the fewest repeats a case got."""
        return average([c.pass_at_k for c in self.cases])

    @property
    def pass_hat_k(self) -> float:
        return average([c.pass_hat_k for c in self.cases])

    def kinds(self) -> dict[str, ExperimentReport]:
        """The report restricted to each kind of case (``metadata["kind"]``)."""
        out: dict[str, ExperimentReport] = {}
        for kind in dict.fromkeys(c.kind for c in self.cases):
            names = [c.case for c in self.cases if c.kind == kind]
            out[kind] = ExperimentReport.from_records(
                self.name, self.evaluators, [r for r in self.records if r.kind == kind],
                order=names)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.name, "evaluators": list(self.evaluators),
            "runs": len(self.records), "repeats": self.repeats, "k": self.k,
            "success": self.success.to_dict(), "passed": self.passed.to_dict(),
            "pass_at_k": self.pass_at_k, "pass_hat_k": self.pass_hat_k,
            "cost_usd": total_cost(self.records),
            "by_evaluator": {n: self.evaluator(n).to_dict() for n in self.evaluators},
            "by_kind": {kind: {"passed": r.passed.to_dict(), "success": r.success.to_dict(),
                               "runs": len(r.records)} for kind, r in self.kinds().items()},
            "cases": [c.to_dict() for c in self.cases],
            "records": [r.to_dict() for r in self.records],
            "intervals": "95 %: Wilson score for pass rates, Student t for means",
        }

    def to_json(self) -> str:
        return json.dumps(json_ready(self.to_dict()), indent=1, default=str)  # ASCII: safe anywhere

    @property
    def headline(self) -> Headline:
        return Headline(self.name, self.evaluators, len(self.records), self.passed,
                        self.success, self.k, self.pass_at_k, self.pass_hat_k,
                        total_cost(self.records))

    def to_html(self) -> str:
        """A self-contained HTML page (:mod:`.report_html`)."""
        kinds = self.kinds() if len({c.kind for c in self.cases}) > 1 else {}
        by_kind = [replace(report.headline, name=kind) for kind, report in kinds.items()]
        return render_report_html(self.headline, self.cases, self.records, by_kind)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the report as ``.html`` or ``.json`` (by the suffix)."""
        target = Path(path)
        if target.suffix not in (".html", ".json"):
            raise ValueError(f"{path}: expected a .html or .json file")
        text = self.to_html() if target.suffix == ".html" else self.to_json()
        target.write_text(text, encoding="utf-8")

    def _summary_row(self, label: str, kind: str, over: ExperimentReport) -> list[str]:
        """A row over many cases: every run pooled, pass@k / pass^k as the cases' mean."""
        costs = [r.cost_usd for r in over.records if r.cost_usd is not None]
        return [label, kind, str(len(over.records)), _rate(over.passed),
                *(_rate(over.evaluator(e).passed) for e in self.evaluators),
                f"{over.pass_at_k:.2f}", f"{over.pass_hat_k:.2f}",
                f"{average([r.iterations for r in over.records]):.1f}",
                f"{average([r.tokens for r in over.records]):.0f}",
                f"{average(costs):.6f}" if len(costs) == len(over.records) and costs else "?",
                f"{average([r.latency_s for r in over.records]):.2f}"]

    def render_table(self) -> str:
        """A fixed-width table for a terminal; case names are made terminal-safe."""
        k = self.k
        head = ["case", "kind", "runs", "pass", *self.evaluators, f"pass@{k}", f"pass^{k}",
                "iter", "tokens", "cost $", "latency s"]
        rows = [[c.case, c.kind, str(c.runs), _rate(c.passed),
                 *(_rate(c.evaluators[e].passed) for e in self.evaluators),
                 f"{c.pass_at_k:.2f}", f"{c.pass_hat_k:.2f}", f"{c.iterations.mean:.1f}",
                 f"{c.tokens.mean:.0f}", _money(c.cost_usd), f"{c.latency_s.mean:.2f}"]
                for c in self.cases]
        kinds = self.kinds() if len({c.kind for c in self.cases}) > 1 else {}
        rows += [self._summary_row(f"kind {kind or '-'}", kind, report)
                 for kind, report in kinds.items()]
        rows.append(self._summary_row("all", "", self))
        cells = [[terminal_safe(cell) for cell in row] for row in [head, *rows]]
        widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                 for row in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        title = (f"{terminal_safe(self.name)}: {len(self.records)} runs, pass "
                 f"{self.passed} (95 % Wilson interval), cost {cost_in_all(self.records)}")
        return "\n".join([title, *lines])


def _rate(estimate: Estimate) -> str:
    if estimate.n == 0:
        return "-"
    return f"{estimate.mean:.0%} [{estimate.low:.0%},{estimate.high:.0%}]"


def _money(estimate: Estimate | None) -> str:
    return "?" if estimate is None else f"{estimate.mean:.6f}"


def cost_in_all(records: Sequence[RunRecord]) -> str:
    """The experiment's spend in words: ``$0.0123 in all``, or why it is unknown."""
    total = total_cost(records)
    if total is not None:
        return f"{money(Decimal(repr(total)))} in all"
    unknown = sum(r.cost_usd is None for r in records)
    return f"unknown ({unknown} of {len(records)} runs had no price)"

"""Thresholds to assert in a user's CI: ``assert_thresholds(report, pass_rate=0.9)``.

    from toolcycle.evals import Experiment, assert_thresholds

    def test_support_agent_is_good_enough():
        report = Experiment(agent, dataset, [Contains()], repeats=3).run_sync()
        assert_thresholds(report, pass_rate=0.8, evaluators={"contains": 0.9})

Why ``bound``: a pass rate of 4/5 is 80 % but could well be 40 % on the next five runs.
``bound="mean"`` (the default) compares the observed rate; ``bound="lower"`` compares the
lower end of its 95 % Wilson interval, so the test passes only when the eval is *confident*
the agent clears the bar (more repeats narrow the interval). Every threshold missed is listed
in one :class:`EvalThresholdError` (an ``AssertionError``, so pytest shows it as a failure),
with the cases that failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from .report import ExperimentReport
from .stats import Estimate


class EvalThresholdError(AssertionError):
    """An eval below one or more of its thresholds; the message lists each."""


def assert_thresholds(
    report: ExperimentReport,
    *,
    pass_rate: float | None = None,
    success: float | None = None,
    evaluators: Mapping[str, float] | None = None,
    pass_at_k: float | None = None,
    pass_hat_k: float | None = None,
    bound: Literal["mean", "lower"] = "mean",
) -> None:
    """Raise :class:`EvalThresholdError` listing every threshold ``report`` does not reach.

    ``pass_rate``: runs that succeeded and passed every evaluator; ``success``: runs that
    succeeded; ``evaluators``: per evaluator name, its pass rate; ``pass_at_k`` /
    ``pass_hat_k``: the report's (k = its fewest repeats of a case).
    """
    if bound not in ("mean", "lower"):
        raise ValueError(f"bound must be 'mean' or 'lower', got {bound!r}")
    missed: list[str] = []

    def check(label: str, estimate: Estimate, threshold: float | None) -> None:
        if threshold is None:
            return
        value = estimate.mean if bound == "mean" else estimate.low
        if estimate.n == 0 or value < threshold:
            missed.append(f"{label} {value:.3f} < {threshold} ({bound}; observed {estimate}, "
                          f"n={estimate.n})")

    check("pass rate", report.passed, pass_rate)
    check("success rate", report.success, success)
    for name, threshold in (evaluators or {}).items():
        if name not in report.evaluators:
            missed.append(f"no evaluator {name!r} (the report has "
                          f"{', '.join(report.evaluators) or 'none'})")
            continue
        check(f"{name} pass rate", report.evaluator(name).passed, threshold)
    for label, value, floor in ((f"pass@{report.k}", report.pass_at_k, pass_at_k),
                                (f"pass^{report.k}", report.pass_hat_k, pass_hat_k)):
        if floor is not None and not value >= floor:
            missed.append(f"{label} {value:.3f} < {floor}")
    if missed:
        failing = [f"{c.case} ({c.passed.mean:.0%})" for c in report.cases
                   if c.passed.mean < 1.0]
        raise EvalThresholdError(
            f"eval {report.name!r} below its thresholds:\n"
            + "\n".join(f"  - {m}" for m in missed)
            + (f"\ncases that did not always pass: {', '.join(failing)}" if failing else ""))

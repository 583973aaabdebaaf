"""The run engine's invariants under fuzzing (see tests/fuzz/engine.py).

Runs seeds 0..N-1 (N = $TOOLCYCLE_FUZZ_RUNS, default sized for about a minute on the 2-core
test host) and fails listing every violating seed with a one-line reason. Reproduce a seed
with ``python -m tests.fuzz.engine --explain SEED``.
"""

from __future__ import annotations

import os
import time

from .engine import Report, run_many, summary, violation_class
from .scenario import offers_eligible

DEFAULT_RUNS = 4000
#: Runs of the offers campaign (agents given the playbook's offers, whose model calls them under
#: a tool-call budget); $TOOLCYCLE_FUZZ_OFFER_RUNS.
DEFAULT_OFFER_RUNS = 800

#: Seeds beyond the default range that once broke an invariant (found by ``make fuzz``), kept so
#: every ``make test`` replays them: a cancel landing while a failure was being closed (19908,
#: 21630), a token and a task cancel together (5898, 30007), a token cancelled from a callback
#: inside the run's own task (38838), a failing async callback that cancels (43215), a tool
#: that cancels the run as a limit is reached (no forced final request after it: 4628, 5139), a
#: tool of a concurrent batch that cancels the run just before a deferred call (cancelled, not
#: paused: 5585), a team with approvals whose resume was cancelled before its paused member
#: went on (the member's run was never closed nor listed: 4131, 4649).
REGRESSION_SEEDS = (4131, 4628, 4649, 5139, 5585, 5898, 19908, 21630, 30007, 38838, 43215,
                    210780, 216482, 218774)


def test_engine_invariants_hold_on_fuzzed_runs() -> None:
    runs = int(os.environ.get("TOOLCYCLE_FUZZ_RUNS", DEFAULT_RUNS))
    started = time.perf_counter()
    reports = run_many([*range(runs), *REGRESSION_SEEDS])
    _fail_on_violations(reports, runs, time.perf_counter() - started, "")
    seen = {feature for report in reports for feature in report.features}
    if runs >= DEFAULT_RUNS:  # (a smaller $TOOLCYCLE_FUZZ_RUNS may draw none of them)
        assert {"team:approval", "team:paused_in_member", "approval:replayed"} <= seen


def test_budgets_bound_the_playbook_offers_on_fuzzed_runs() -> None:
    """Invariant 11 where it bites: the model calls the tools that routines, repairs and
    fallbacks answer, under a tool-call budget, with every other fuzzed choice as usual."""
    runs = int(os.environ.get("TOOLCYCLE_FUZZ_OFFER_RUNS", DEFAULT_OFFER_RUNS))
    seeds = [s for s in range(runs * 4) if offers_eligible(s)][:runs]
    started = time.perf_counter()
    reports = run_many(seeds, offer_focus=True)
    entered = sum("offer_focus" in r.features for r in reports)
    assert entered == len(seeds)
    _fail_on_violations(reports, runs, time.perf_counter() - started, " --offer-focus")


def _fail_on_violations(reports: list[Report], runs: int, elapsed: float, flag: str) -> None:
    bad = [r for r in reports if r.violations]
    print(summary(reports, elapsed, show_all=False))
    if bad:
        classes = {violation_class(v) for r in bad for v in r.violations}
        lines = [f"seed {r.seed}: {r.violations[0]}" + (
            f" (+{len(r.violations) - 1} more)" if len(r.violations) > 1 else "") for r in bad]
        raise AssertionError(
            f"{len(bad)} of {runs} fuzzed runs broke the engine's invariants "
            f"({len(classes)} classes; python -m tests.fuzz.engine{flag} --explain SEED):\n"
            + "\n".join(lines)
        )

"""The approval doors' invariants under fuzzing (see tests/fuzz/doors.py): a sample of seeds in
every ``make test`` ($TOOLCYCLE_DOORS_FUZZ_RUNS), the campaign in ``make fuzz``. Reproduce a
seed with ``python -m tests.fuzz.doors --seed SEED --runs 1 --child-every 1``."""

from __future__ import annotations

import os

from .doors import run_campaign, summary

DEFAULT_RUNS = 300
#: Every Nth seed also resumes in a second interpreter (about a second each).
CHILD_EVERY = 100


def test_approval_doors_hold_under_random_answers_replays_and_resumes() -> None:
    runs = int(os.environ.get("TOOLCYCLE_DOORS_FUZZ_RUNS", DEFAULT_RUNS))
    cases, elapsed = run_campaign(runs, CHILD_EVERY)
    print(summary(cases, elapsed))
    assert sum("child" in c.attacks for c in cases) >= runs // CHILD_EVERY
    bad = [f"seed {c.seed}: {'; '.join(c.violations)}" for c in cases if c.violations]
    assert not bad, f"{len(bad)} of {runs} fuzzed seeds broke an approval invariant:\n" + \
        "\n".join(bad)

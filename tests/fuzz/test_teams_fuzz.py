"""Teams under fuzzing (see tests/fuzz/teams.py): random nesting, handoffs, failing members,
cancels and deadlines inside members, approvals inside members that pause the team (resumed
with random answers, cancelled by token or task, replayed); every history well-formed, usage
adding up exactly, an approved side effect run at most once.

Runs seeds 0..N-1 (N = $TOOLCYCLE_TEAM_FUZZ_RUNS); reproduce one with
``python -m tests.fuzz.teams --seed S --runs 1 --show``.
"""

from __future__ import annotations

import os

from .teams import run_many

DEFAULT_RUNS = 300


def test_team_invariants_hold_on_fuzzed_teams() -> None:
    runs = int(os.environ.get("TOOLCYCLE_TEAM_FUZZ_RUNS", DEFAULT_RUNS))
    bad, seen = run_many(list(range(runs)))
    for feature in ("depth_3", "handoff", "cancel_inside", "task_cancel", "model_error",
                    "guardrails", "guardrail_trip", "paused", "paused_in_member", "replay",
                    "resume_cancelled", "resume_task_cancel_announced"):
        assert seen[feature], f"no fuzzed team exercised {feature}: {dict(seen)}"
    assert not bad, "\n".join(f"seed {seed}: {v[0]}" for seed, v in bad[:20])

"""A sample of the batch-kill fuzz (tests/batch/kill_fuzz.py) in ``make test``.

$TOOLCYCLE_BATCH_FUZZ rounds (default 1, a few seconds) from seed $TOOLCYCLE_BATCH_FUZZ_SEED;
``make fuzz`` runs the campaign (``python -m tests.batch.kill_fuzz --rounds 200``).
"""

from __future__ import annotations

import os

from .kill_fuzz import campaign

ROUNDS = int(os.environ.get("TOOLCYCLE_BATCH_FUZZ", "1"))
FIRST_SEED = int(os.environ.get("TOOLCYCLE_BATCH_FUZZ_SEED", "20261205"))


def test_killed_and_resumed_batches_lose_and_double_nothing() -> None:
    rounds, kills, batches, violations = campaign(ROUNDS, FIRST_SEED)
    assert violations == []
    assert batches > rounds, (kills, batches)  # every round ran more than one batch

"""The MCP client's promises under fuzzing (see tests/fuzz/mcp.py): a sample of seeds here,
the campaign in ``make fuzz``. Reproduce a seed with ``python -m tests.fuzz.mcp --explain
SEED``."""

from __future__ import annotations

import os

from .mcp import run_many

#: Seeds per ``make test`` ($TOOLCYCLE_MCP_FUZZ_RUNS): a few seconds each at most.
DEFAULT_RUNS = 8


def test_mcp_client_invariants_hold_against_hostile_servers() -> None:
    runs = int(os.environ.get("TOOLCYCLE_MCP_FUZZ_RUNS", DEFAULT_RUNS))
    reports = run_many(list(range(runs)))
    bad = [f"seed {r.seed}: {'; '.join(r.violations)}" for r in reports if r.violations]
    assert not bad, "\n".join(bad)

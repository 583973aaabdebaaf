"""Many processes writing into one PostgreSQL playbook and trace store lose nothing.

Eight separate interpreters (nothing shared but the database) each make 50 runs that record
their traces and learn into one playbook. Every run is shown the same seeded strategy, so
curators in eight processes increment its counters at the same time: with a lost update the
totals would fall short of 400. Everything is counted afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg

from toolcycle.playbook import Strategy, open_store
from toolcycle.tracing.store import TraceStore

WORKERS = 8
RUNS = 50
WORKER = Path(__file__).with_name("fleet_worker.py")


def test_eight_processes_lose_no_run_no_step_and_no_count(postgres_url: str) -> None:
    store = open_store(postgres_url)
    store.put([Strategy(id="s-fleet", domain="fleet", advice="Call quote(ticker) once.",
                        tools=["quote"], applies_when=["share", "price"], kind="advice")])
    store.close()
    workers = [
        subprocess.Popen([sys.executable, str(WORKER), postgres_url, str(n), str(RUNS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for n in range(WORKERS)
    ]
    done = 0
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        done += int(out.strip())
    total = WORKERS * RUNS
    assert done == total

    traces = TraceStore(postgres_url)
    runs = traces.list(limit=None)
    assert len(runs) == total and {r.status for r in runs} == {"success"}
    assert {r.iterations for r in runs} == {2}
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM steps").fetchone() == (2 * total,)
        assert conn.execute("SELECT count(*) FROM observed_runs").fetchone() == (total,)
        assert conn.execute("SELECT count(*) FROM tool_calls").fetchone() == (total,)
        held = conn.execute("SELECT count(*) FROM pg_stat_activity "
                            "WHERE application_name = 'toolcycle' AND datname = current_database()"
                            ).fetchone()
    assert held == (1,)  # only this test's trace store: the workers closed or died with theirs

    playbook = open_store(postgres_url)
    fleet = playbook.get("s-fleet")
    assert fleet is not None
    assert (fleet.helpful, fleet.harmful) == (total, 0)  # every increment landed
    assert fleet.sum_iterations == 2 * total
    assert [s.id for s in playbook.strategies("fleet", status=None)] == ["s-fleet"]

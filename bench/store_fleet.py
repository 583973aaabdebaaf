"""A fleet of processes recording traces and learning into one store: SQLite file vs PostgreSQL.

Prints one line per figure. Run: `.venv/bin/python bench/store_fleet.py [--workers 8] [--runs 50]`.

Each of ``--workers`` separate interpreters makes ``--runs`` scripted agent runs (one tool
call, then the answer) with ``trace_store=`` and a ``Playbook`` on the same location, and
waits until every run is learned from (tests/postgres/fleet_worker.py, the fleet test's
worker). Figures: wall seconds for the whole fleet, runs per second, and whether every count
added up (traces, observed runs, the shared strategy's ``helpful``). PostgreSQL is a throwaway
local server (tests/postgres_cluster.py) with ``fsync=off``, so the figures compare the
stores' locking and round trips, not disk durability. Wall time on a shared host: repeat.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from postgres_cluster import running_cluster  # noqa: E402

from toolcycle.playbook import Strategy, open_store  # noqa: E402
from toolcycle.tracing.store import TraceStore  # noqa: E402

WORKER = ROOT / "tests" / "postgres" / "fleet_worker.py"


def fleet(location: str, workers: int, runs: int) -> tuple[float, bool]:
    """Wall seconds for the fleet, and whether nothing was lost."""
    store = open_store(location)
    store.put([Strategy(id="s-fleet", domain="fleet", advice="Call quote(ticker) once.",
                        tools=["quote"], applies_when=["share", "price"], kind="advice")])
    store.close()
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, str(WORKER), location, str(n), str(runs)],
                              stdout=subprocess.PIPE, text=True) for n in range(workers)]
    done = sum(int(p.communicate()[0].strip() or 0) for p in procs)
    wall = time.perf_counter() - start
    total = workers * runs
    strategy = open_store(location).get("s-fleet")
    complete = (done == total and len(TraceStore(location).list(limit=None)) == total
                and strategy is not None and strategy.helpful == total)
    return wall, complete


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    total = args.workers * args.runs
    with tempfile.TemporaryDirectory() as folder, running_cluster() as cluster:
        for name, location in (("sqlite", str(Path(folder) / "fleet.db")),
                               ("postgres", cluster.create_database())):
            wall, complete = fleet(location, args.workers, args.runs)
            print(f"{name:8} {args.workers} workers x {args.runs} runs: {wall:6.2f} s wall, "
                  f"{total / wall:6.1f} runs/s, nothing lost: {complete}")


if __name__ == "__main__":
    main()

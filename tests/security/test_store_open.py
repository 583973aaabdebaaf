"""rel-16: many processes opening one *new* SQLite store at the same moment.

Workers of one service start together and each opens the trace store, the playbook or the
knowledge base named in their configuration. Before the fix 0.5-1 % of such opens failed with
"database is locked" (the WAL switch does not wait on the busy timeout), and the knowledge base
also with "UNIQUE constraint failed: meta.key" or ``KeyError: 'chunk_overlap'`` (two processes
writing, or one reading, its settings half-written).

Eight long-lived worker processes meet at a barrier before each of ``ROUNDS`` rounds, then all
open the round's new file at once, so every round is a real collision; each store gets its own
200 rounds (1,600 opens). Workers are forked after toolcycle is imported, as a service's are.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import traceback
from collections.abc import Callable
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

import toolcycle.playbook.store
import toolcycle.rag
import toolcycle.tracing.store

PROCESSES = 8
ROUNDS = 200


def _trace_store(path: str) -> None:
    toolcycle.tracing.store.TraceStore(path).close()


def _playbook_store(path: str) -> None:
    store = toolcycle.playbook.store.SQLitePlaybookStore(path)
    store.strategies()  # reads what the schema script created
    store.close()


def _knowledge_base(path: str) -> None:
    base = toolcycle.rag.KnowledgeBase(path)
    assert base.chunking is not None
    base.close()


OPENERS: dict[str, Callable[[str], None]] = {
    "trace store": _trace_store,
    "playbook store": _playbook_store,
    "knowledge base": _knowledge_base,
}


def _worker(
    kind: str, paths: list[str], barrier: Barrier, results: mp.Queue[list[str]]
) -> None:
    """Open every round's file right after the barrier; send back the failures."""
    failures: list[str] = []
    for round_no, path in enumerate(paths):
        barrier.wait(timeout=120)
        try:
            OPENERS[kind](path)
        except Exception as exc:  # every failure is what the test reports
            failures.append(f"round {round_no}: {type(exc).__name__}: {exc}")
            if len(failures) == 1:
                failures.append(traceback.format_exc(limit=4))
    results.put(failures)


def collide(kind: str, directory: Path, rounds: int = ROUNDS) -> list[str]:
    """Run ``rounds`` rounds of ``PROCESSES`` simultaneous opens; every failure, as text."""
    ctx = mp.get_context("spawn")  # not fork: pytest is multi-threaded by then (deadlock risk)
    paths = [str(directory / f"round-{k}" / "shared.db") for k in range(rounds)]
    for path in paths:
        Path(path).parent.mkdir()
    barrier = ctx.Barrier(PROCESSES)
    results: mp.Queue[list[str]] = ctx.Queue()
    workers = [
        ctx.Process(target=_worker, args=(kind, paths, barrier, results))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    failures = [line for _ in workers for line in results.get(timeout=600)]
    for worker in workers:
        worker.join(timeout=60)
        if worker.exitcode != 0:
            failures.append(f"a worker exited with status {worker.exitcode}")
    return failures


@pytest.mark.skipif(os.name != "posix", reason="POSIX file locking is what is tested")
@pytest.mark.parametrize("kind", list(OPENERS))
def test_simultaneous_opens_of_a_new_store_all_succeed(kind: str, tmp_path: Path) -> None:
    failures = collide(kind, tmp_path)
    failed = sum(line.startswith("round ") for line in failures)
    assert not failures, f"{failed} of {ROUNDS * PROCESSES} opens failed:\n" + (
        "\n".join(failures[:20])
    )
    # Every file ends complete: a fresh open of the last round's store works.
    OPENERS[kind](str(tmp_path / f"round-{ROUNDS - 1}" / "shared.db"))

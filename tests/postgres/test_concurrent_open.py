"""Many processes opening the stores of one *new* PostgreSQL database at the same moment.

Workers of a fleet start together and each creates the tables it needs. ``CREATE TABLE IF NOT
EXISTS`` alone is not safe against a concurrent creator (both pass the check, one fails on a
catalogue index), so the stores create their schema under an advisory lock
(:func:`toolcycle.stores.postgres.create_schema`). Eight long-lived workers meet at a barrier before
each round, then all open the round's new database: trace store, playbook and conversations.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from multiprocessing.synchronize import Barrier

from postgres_cluster import PostgresCluster

PROCESSES = 8
ROUNDS = 3


def _open_all(url: str) -> None:
    from toolcycle.conversation import Conversation
    from toolcycle.playbook import open_store
    from toolcycle.tracing.store import TraceStore

    TraceStore(url).close()
    store = open_store(url)
    store.strategies()
    store.close()
    Conversation(url, "c").store.list_conversations()


def _worker(urls: list[str], barrier: Barrier, results: mp.Queue[list[str]]) -> None:
    import toolcycle.tracing.store  # noqa: F401  (imported before the race, as a service has)

    failures: list[str] = []
    for round_no, url in enumerate(urls):
        barrier.wait(timeout=120)
        try:
            _open_all(url)
        except Exception as exc:  # every failure is what the test reports
            failures.append(f"round {round_no}: {type(exc).__name__}: {exc}")
            failures.append(traceback.format_exc(limit=4))
    results.put(failures)


def test_simultaneous_opens_of_a_new_database_all_succeed(
    postgres_cluster: PostgresCluster,
) -> None:
    urls = [postgres_cluster.create_database() for _ in range(ROUNDS)]
    ctx = mp.get_context("spawn")  # not fork: pytest is multi-threaded by then
    barrier = ctx.Barrier(PROCESSES)
    results: mp.Queue[list[str]] = ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(urls, barrier, results))
               for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    failures = [line for _ in workers for line in results.get(timeout=300)]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert not failures, "\n".join(failures[:20])
    _open_all(urls[-1])

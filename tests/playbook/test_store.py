"""Retrieval relevance, filters, and persistence across processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolcycle.playbook import Strategy, open_store

from .conftest import stock_trace


def _strategies() -> list[Strategy]:
    return [
        Strategy(id="s-stock", domain="support", advice="Call find_ticker, then get_quote.",
                 tools=["find_ticker", "get_quote"], applies_when=["stock", "price", "shares"]),
        Strategy(id="s-weather", domain="support", advice="Call staff_directory, then weather.",
                 tools=["staff_directory", "weather"],
                 applies_when=["weather", "office", "employee"]),
        Strategy(id="s-billing", domain="billing", advice="Call invoices first.",
                 tools=["invoices"], applies_when=["stock", "invoice"]),
    ]


def test_retrieval_returns_the_strategy_about_the_task(db_location: str) -> None:
    store = open_store(db_location)
    store.put(_strategies())
    tools = ["find_ticker", "get_quote", "staff_directory", "weather", "invoices"]
    hits = store.search("What is the stock price of Globex?", "support", tools)
    assert [s.id for s, _ in hits] == ["s-stock"]
    hits = store.search("How is the weather at the office of employee Ann Lee?", "support", tools)
    assert hits[0][0].id == "s-weather"
    assert store.search("Tell me a joke", "support", tools) == []


def test_retrieval_filters_by_domain_and_available_tools(db_location: str) -> None:
    store = open_store(db_location)
    store.put(_strategies())
    assert [s.id for s, _ in store.search("stock invoice", "billing", ["invoices"])] == [
        "s-billing"
    ]
    # the agent lacks get_quote: a strategy it cannot follow is never shown
    assert store.search("stock price", "support", ["find_ticker"]) == []
    assert {s.id for s, _ in store.search("stock price", None, None)} == {"s-stock", "s-billing"}


def test_retired_strategies_are_not_retrieved(db_location: str) -> None:
    store = open_store(db_location)
    strategies = _strategies()
    store.put(strategies)
    assert store.search("stock price", "support", None)
    strategies[0].status = "retired"
    store.put([strategies[0]])
    assert store.search("stock price", "support", None) == []


def test_better_evidence_ranks_first(db_location: str) -> None:
    store = open_store(db_location)
    store.put([
        Strategy(id="s-weak", domain="d", advice="a", applies_when=["stock"], helpful=0, harmful=3),
        Strategy(id="s-strong", domain="d", advice="b", applies_when=["stock"], helpful=3),
    ])
    assert [s.id for s, _ in store.search("stock", "d", None)] == ["s-strong", "s-weak"]


_CHILD = """
import sys
from toolcycle.playbook import Playbook
from toolcycle.tracing.trace import Trace
pb = Playbook(sys.argv[1])
pb.observe(Trace.from_json(open(sys.argv[2]).read()))
pb.close()
"""


def test_playbooks_in_several_processes_learn_into_one_file(
    db_location: str, tmp_path: Path
) -> None:
    # Separate interpreters (not multiprocessing): nothing is shared but the database file.
    children = []
    for company in ("Acme Corp", "Globex Corp", "Initech Corp"):
        trace_file = tmp_path / f"{company}.json"
        trace_file.write_text(stock_trace(company).to_json())
        children.append(subprocess.Popen(
            [sys.executable, "-c", _CHILD, db_location, str(trace_file)], stderr=subprocess.PIPE
        ))
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err.decode()
    # a fresh process-level view of the same file sees the strategy the three runs produced
    store = open_store(db_location)
    [strategy] = store.strategies("support")
    assert strategy.support == 3 and len(strategy.provenance) == 3
    assert store.search("stock price of Hooli Corp", "support", ["find_ticker", "get_quote"])


def test_the_index_sees_writes_made_through_another_connection(db_location: str) -> None:
    reader, writer = open_store(db_location), open_store(db_location)
    assert reader.search("stock price", "support", None) == []
    writer.put(_strategies())
    assert [s.id for s, _ in reader.search("stock price", "support", None)] == ["s-stock"]



def test_a_memory_playbook_is_read_by_several_threads_at_once() -> None:
    """A ``:memory:`` playbook's threads share one connection, and two threads running the
    same statement on one connection at once is a misuse sqlite3 refuses ("bad parameter or
    other API misuse"): an agent built while the background worker was learning read the
    strategies as the worker did (a CI run under load). Its reads hold the lock its writes
    hold; this failed every time before."""
    import threading

    from toolcycle.playbook.store import SQLitePlaybookStore

    store = SQLitePlaybookStore(":memory:")
    for i in range(200):
        store.put_candidate(f"k{i}", "depot", {"n": i, "pad": "x" * 200})
    failures: list[BaseException] = []

    def read_and_write(n: int) -> None:
        try:
            for i in range(300):
                store.candidates("depot")
                store.get_candidate("k5")
                store.strategies("depot")
                if i % 50 == 0:
                    store.put_candidate(f"t{n}-{i}", "depot", {"n": i})
        except BaseException as exc:  # (asserted below, on the test's thread)
            failures.append(exc)

    threads = [threading.Thread(target=read_and_write, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures

"""Fixtures shared by every test folder: the throwaway PostgreSQL cluster; the order files run in.

The cluster starts lazily, once per session, the first time a test asks for
``postgres_cluster`` or ``postgres_url`` (see tests/postgres_cluster.py); tests that never ask
pay nothing. A missing server fails the test with the install instruction, never skips it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from postgres_cluster import PostgresCluster, running_cluster

# Tests never assert on wall time (DESIGN.md §5): Hypothesis's per-example deadline and its
# "input generation is slow" check are wall-time assertions, and on the 2-core CI machine
# under two xdist workers they fail tests whose code is right. Properties are still checked
# on every example; only the clock is out of it.
settings.register_profile("toolcycle", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolcycle")

# Resumes record the snapshots they consume (toolcycle.stores.ledger); the suite keeps that
# record in a throwaway file rather than the user's ~/.toolcycle. Subprocesses inherit it.
os.environ.setdefault("TOOLCYCLE_SNAPSHOT_LEDGER", os.path.join(
    tempfile.mkdtemp(prefix="toolcycle-ledger-"), "consumed-snapshots.db"))


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A real PostgreSQL server on 127.0.0.1 for the whole session, stopped by PID at the end."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a fresh, empty database on the session's cluster (one per test)."""
    return postgres_cluster.create_database()


@pytest.fixture(params=["sqlite", "postgres"])
def db_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store test keeps its store: a SQLite file, then a fresh PostgreSQL database.

    Store tests take this fixture to run once on each backend with the same assertions. The
    PostgreSQL location is a fresh schema (``postgresql://...?options=-csearch_path%3Dt_...``),
    which the stores use exactly as they would a database of their own, at a fraction of the
    cost of creating a database per test.
    """
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    return cluster.create_schema()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that hold a real-model or packaging test run first, the rest in the order
    collected (a stable sort).

    Why: ``make test`` deals whole files to two xdist workers (``--dist loadfile``) in
    collection order, and the files that take minutes (a real model answering several
    questions, a wheel built and installed) sat in the middle and the end of that order: one
    started last left the other worker idle until it finished. Dealt first, the longest work
    starts at once and the short files fill in around it (longest first is the classic rule
    for keeping two machines busy). The Makefile passes ``--no-loadscope-reorder``: xdist
    otherwise re-sorts the files by how many tests each holds, most first, which undoes this
    order and deals the one-test real-model files last. Nothing else depends on the order:
    every test is independent of the ones before it.
    """
    long_files = {item.path for item in items
                  if item.get_closest_marker("real_model") or item.get_closest_marker("packaging")}
    items.sort(key=lambda item: item.path not in long_files)

"""Fixtures shared by every test folder: the throwaway PostgreSQL cluster.

The cluster starts lazily, once per session, the first time a test asks for
``postgres_cluster`` or ``postgres_url`` (see tests/postgres_cluster.py); tests that never ask
pay nothing. A missing server fails the test with the install instruction, never skips it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres_cluster import PostgresCluster, running_cluster


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A real PostgreSQL server on 127.0.0.1 for the whole session, stopped by PID at the end."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a fresh, empty database on the session's cluster (one per test)."""
    return postgres_cluster.create_database()

"""The throwaway cluster itself: a real server, fresh databases, stopped by PID at the end."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
from postgres_cluster import PostgresCluster, running_cluster


def test_fresh_databases_are_separate(postgres_cluster: PostgresCluster) -> None:
    first, second = postgres_cluster.create_database(), postgres_cluster.create_database()
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (x int)")
    with psycopg.connect(second) as conn:
        found = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = 't'").fetchone()
    assert found == (0,)


def test_server_runs_unprivileged_and_stops() -> None:
    with running_cluster() as cluster:
        with psycopg.connect(cluster.url) as conn:
            row = conn.execute("SELECT pg_backend_pid(), current_setting('fsync')").fetchone()
        assert row is not None and row[1] == "off"
        pid = int((cluster.data / "postmaster.pid").read_text().splitlines()[0])
        owner = os.stat(f"/proc/{pid}").st_uid
        assert owner != 0  # PostgreSQL refuses root; the fixture runs it as another account
        root = cluster.root
    assert not root.exists()
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for init to reap it has stopped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_fresh_schemas_are_separate(postgres_cluster: PostgresCluster) -> None:
    first, second = postgres_cluster.create_schema(), postgres_cluster.create_schema()
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (x int)")
        schema = conn.execute("SELECT current_schema()").fetchone()
    assert schema is not None and schema[0].startswith("t_")
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('t')").fetchone() == (None,)

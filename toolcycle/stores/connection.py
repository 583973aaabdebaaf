"""One connection protocol for every store, and opening it from a location.

The stores write their statements once, in the SQL both engines accept (``?`` placeholders,
``INSERT ... ON CONFLICT``), and run them on a :class:`SQLConnection`: ``sqlite3.Connection``
is one as it is, :class:`~toolcycle.stores.postgres.PostgresConnection` gives psycopg the same
calls. :func:`connect` opens either from a :class:`~toolcycle.stores.location.StoreLocation`
with the store's schema created safely against other processes opening it at the same moment
(SQLite: busy timeout first, WAL, ``BEGIN IMMEDIATE``; PostgreSQL: an advisory lock).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from . import sqlite as sqlite_files
from .location import StoreLocation, store_location

#: How long a SQLite statement waits for another process's write lock (seconds).
SQLITE_BUSY_TIMEOUT_S = 10.0


class SQLConnection(Protocol):
    """What the stores use of a connection: ``sqlite3.Connection`` has it, as has
    :class:`~toolcycle.stores.postgres.PostgresConnection`. Rows come back as tuples."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Any: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> Any: ...


def connect(location: object, *, schema: str, lock: str) -> SQLConnection:
    """A connection to the store at ``location`` (anything :func:`store_location` reads) with
    ``schema`` created. SQLite connections are in autocommit (``isolation_level=None``): a
    lone statement is its own transaction, as on PostgreSQL; ``lock`` names the PostgreSQL
    advisory lock that serialises schema creation."""
    where: StoreLocation = store_location(location)
    if where.engine == "postgresql":
        from .postgres import connect as connect_postgres  # psycopg is imported only now

        return connect_postgres(where.target, schema=schema, lock=lock)
    return open_sqlite(where, schema)


def open_sqlite(where: StoreLocation, schema: str) -> sqlite3.Connection:
    """A SQLite connection usable from any thread (callers serialise it), WAL on a file."""
    if not where.in_memory:
        Path(where.target).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(where.target, timeout=SQLITE_BUSY_TIMEOUT_S,
                           check_same_thread=False, isolation_level=None)
    if not where.in_memory:
        sqlite_files.use_wal(conn)
    sqlite_files.create_schema(conn, schema)
    return conn

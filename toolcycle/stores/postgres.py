"""Connecting the stores to PostgreSQL: ``postgresql://`` URLs, psycopg 3, one schema lock.

The trace store, the playbook and the conversation store each accept a SQLite path or a
``postgresql://`` (or ``postgres://``) URL. Their statements are written in the SQL both
engines accept (``?`` placeholders, ``INSERT ... ON CONFLICT``), so a store keeps one copy of
its logic; :class:`PostgresConnection` gives a psycopg connection the few ``sqlite3`` calls the
stores make (:class:`~toolcycle.stores.connection.SQLConnection`: ``execute``,
``executemany``, ``with conn:`` as one transaction) and turns ``?`` into psycopg's ``%s``.
Values always travel as parameters, never inside the SQL text.

psycopg is imported only when a URL is opened, from the optional extra ``toolcycle[postgres]``;
without it opening a URL raises :class:`~toolcycle.errors.ConfigurationError` saying so.

Why a lock for the schema: ``CREATE TABLE IF NOT EXISTS`` is not safe against another session
running it at the same moment (both pass the check; one fails on a unique index of the
catalogue). Workers of a fleet open the same database together, so :func:`create_schema` runs
the script in one transaction holding a transaction-level advisory lock: openers queue, and
the second finds the tables made.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from ..errors import ConfigurationError

if TYPE_CHECKING:
    import psycopg

_SCHEMES = ("postgresql://", "postgres://")
#: ``application_name`` of the stores' sessions (``pg_stat_activity`` shows who is connected).
APPLICATION_NAME = "toolcycle"
_PASSWORD = re.compile(r"^([a-z]+://[^/@:]*):[^/@]*@", re.IGNORECASE)
_PASSWORD_PARAMETER = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.strip().lower().startswith(_SCHEMES)


def safe_url(url: str) -> str:
    """``url`` without its password (``user:PASSWORD@`` or ``?password=``), for messages."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _PASSWORD.sub(r"\1:***@", url.strip()))


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigurationError(
            ["a postgresql:// store needs psycopg 3, in the postgres extra: "
             f"pip install 'toolcycle[postgres]' ({exc})"], subject="store location") from exc
    return psycopg


@functools.lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """A statement written for sqlite3 (``?`` placeholders) in psycopg's form (``%s``).

    A literal ``%`` is doubled first. The stores never put a ``?`` inside a string literal,
    so every ``?`` is a placeholder.
    """
    return sql.replace("%", "%%").replace("?", "%s")


class PostgresConnection:
    """One psycopg connection with the ``sqlite3`` calls the stores make.

    The session runs in autocommit, so a lone statement is its own transaction (like sqlite3
    outside ``BEGIN``); ``with conn:`` is one transaction (``BEGIN`` ... ``COMMIT``, or
    ``ROLLBACK`` when the block raises), as ``with sqlite3_connection:`` is. A connection the
    server dropped is opened again by the next transaction (see :meth:`begin`) or by the
    statement after the one that found it dropped (which raises ``OperationalError``).
    Not for concurrent use by several threads at once (the stores guard or separate it).
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._psycopg = _psycopg()
        self._raw: psycopg.Connection[Any] = self._connect()
        self._depth = 0

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn: psycopg.Connection[Any] = self._psycopg.connect(
                self.url, autocommit=True, application_name=APPLICATION_NAME)
        except self._psycopg.Error as exc:
            raise ConnectionError(f"cannot connect to {safe_url(self.url)}: {exc}") from exc
        return conn

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def _usable(self) -> psycopg.Connection[Any]:
        if self._depth == 0 and self._raw.closed:
            self._raw = self._connect()
        return self._raw

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        """Run one statement; the cursor has ``fetchone``, ``fetchall``, ``rowcount``."""
        return self._usable().execute(to_pyformat(sql), tuple(parameters))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Any:
        cursor = self._usable().cursor()
        rows = [tuple(p) for p in seq_of_parameters]
        if rows:
            cursor.executemany(to_pyformat(sql), rows)
        return cursor

    def script(self, script: str) -> None:
        """Run several statements with no parameters (a schema)."""
        self._usable().execute(script.encode())

    def begin(self, *statements: str) -> None:
        """Open a transaction and run ``statements`` first (e.g. taking an advisory lock).

        A connection found dropped at ``BEGIN`` (a server restart, an idle timeout) is opened
        again and the transaction begins there: nothing had been sent, so nothing is repeated.
        """
        raw = self._usable()
        try:
            raw.execute("BEGIN")
        except self._psycopg.OperationalError:
            if not raw.closed:
                raise
            raw = self._raw = self._connect()
            raw.execute("BEGIN")
        self._depth = 1
        try:
            for statement in statements:
                raw.execute(statement.encode())
        except BaseException:
            self.rollback()
            raise

    def commit(self) -> None:
        self._depth = 0
        self._raw.execute("COMMIT")

    def rollback(self) -> None:
        self._depth = 0
        if not self._raw.closed:
            self._raw.execute("ROLLBACK")

    def __enter__(self) -> Self:
        self.begin()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()

    def close(self) -> None:
        self._raw.close()

    def __repr__(self) -> str:
        return f"PostgresConnection({safe_url(self.url)!r})"


def lock_statement(name: str) -> str:
    """The statement taking the transaction-level advisory lock called ``name``.

    Advisory locks belong to a database, so the key also names the session's current schema:
    stores kept in two schemas of one database (``options=-csearch_path=...`` in the URL) do
    not wait on each other. The server derives the key (``hashtext``), so every process agrees.
    """
    if not re.fullmatch(r"[a-z_.]+", name):  # it is spliced into the SQL text
        raise ValueError(f"bad lock name {name!r}")
    return (f"SELECT pg_advisory_xact_lock(hashtext('{name}:' || "
            "coalesce(current_schema(), '')))")


_CREATED = re.compile(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", re.IGNORECASE)


def create_schema(conn: PostgresConnection, script: str, lock: str) -> None:
    """Run a schema ``script`` (``CREATE ... IF NOT EXISTS``) while other sessions may too.

    Skipped when every table and index it names exists, checked before and again after taking
    the lock: ``CREATE INDEX IF NOT EXISTS`` locks its table (SHARE) before it looks, so running
    the script while another process writes could deadlock with that writer. A script only
    runs when its objects are missing, and then no one writes to them yet.
    """
    names = sorted(set(_CREATED.findall(script)))
    if _all_exist(conn, names):
        return
    conn.begin(lock_statement(lock))
    try:
        if not _all_exist(conn, names):
            conn.script(script)
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _all_exist(conn: PostgresConnection, names: list[str]) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_class WHERE relnamespace = "
        "(SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
        "AND relname = ANY(?)", (names,)).fetchone()
    return bool(names) and int(row[0]) == len(names)


def connect(url: str, *, schema: str, lock: str) -> PostgresConnection:
    """A connection to ``url`` with the store's ``schema`` created (safe against openers)."""
    conn = PostgresConnection(url)
    create_schema(conn, schema, lock)
    return conn


def describe(location: str | os.PathLike[str]) -> str:
    """A store location for messages: a path as given, a URL without its password."""
    text = os.fspath(location)
    return safe_url(text) if is_postgres_url(text) else text

"""Opening a SQLite store that other processes may be opening at the same moment.

Workers of one service start together and each opens the same trace store, playbook or
knowledge base; the first open of a new file switches it to WAL and creates the schema. SQLite
does not always wait on the busy timeout there: ``PRAGMA journal_mode=WAL`` and a transaction
that must upgrade its lock return ``SQLITE_BUSY`` at once (waiting could deadlock), so 0.5-6 %
of simultaneous opens failed with "database is locked" (rel-16). The fix, shared by the three
stores:

- the busy timeout is the connection's first setting (``sqlite3.connect(timeout=...)`` sets it
  before any statement runs);
- the WAL switch and the schema are retried on ``SQLITE_BUSY`` / ``SQLITE_LOCKED`` with a
  bounded, jittered exponential backoff (:data:`OPEN_RETRY_S` in all);
- the schema is created inside ``BEGIN IMMEDIATE`` (the write lock taken up front, so two
  creators queue instead of interleaving), and whatever must be written once with it (the
  knowledge base's settings) is written in the same transaction, so no process reads it half
  written.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable

#: How long, in all, opening a store keeps retrying a busy file before giving up (seconds).
OPEN_RETRY_S = 30.0
#: First and largest pause between two tries (seconds); each pause doubles, with jitter.
_FIRST_PAUSE_S = 0.002
_LONGEST_PAUSE_S = 0.25
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})

def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` means another connection holds the file (worth another try)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _BUSY_CODES
    message = str(exc)
    return "database is locked" in message or "database table is locked" in message

def retry_busy[T](action: Callable[[], T], *, within_s: float = OPEN_RETRY_S) -> T:
    """``action()``, tried again while it fails because the file is busy, for ``within_s``."""
    deadline = time.monotonic() + within_s
    pause = _FIRST_PAUSE_S
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause * random.uniform(0.5, 1.5))
        pause = min(pause * 2, _LONGEST_PAUSE_S)

def use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL (and ``synchronous=NORMAL``), tolerating another process doing the same.

    The switch needs a moment of exclusive access and fails at once if another connection is
    switching or reading; a retry then finds the file already in WAL, which is the goal.
    """
    retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
    conn.execute("PRAGMA synchronous=NORMAL")

def write_once[T](conn: sqlite3.Connection, action: Callable[[sqlite3.Connection], T]) -> T:
    """``action(conn)`` in one ``BEGIN IMMEDIATE`` transaction, retried while the file is busy.

    For a store's first writes (schema, settings): run in full or not at all, by one process
    at a time. ``action`` must not commit; it may be called more than once.
    """

    def attempt() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = action(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    return retry_busy(attempt)

def create_schema(conn: sqlite3.Connection, script: str) -> None:
    """Run a schema ``script`` (``CREATE ... IF NOT EXISTS``; ``INSERT OR IGNORE``) safely."""
    write_once(conn, lambda c: run_script(c, script))

def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of ``script`` in the current transaction.

    ``executescript`` would commit the open transaction first, so statements are split with
    :func:`sqlite3.complete_statement` (which knows that a trigger's body holds semicolons).
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)

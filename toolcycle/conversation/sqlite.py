"""The SQLite conversation store: its claims, over the tables and statements of ``sql.py``.

Opened through :func:`toolcycle.stores.connection.open_sqlite`, as the ledger of consumed
snapshots is (busy timeout first, WAL switch and schema retried while another process opens
the same file), and every write is one ``BEGIN IMMEDIATE`` transaction, so claims and appends
from threads and processes queue instead of interleaving.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigurationError
from ..messages import Message
from ..result import ContextSummary
from ..stores.connection import open_sqlite
from ..stores.location import store_location
from ..stores.sqlite import write_once
from ..tracing.redaction import Redactor
from . import sql
from .store import busy, message_text, summary_text

DEFAULT_PATH = Path("~/.toolcycle/conversations.db")

class SQLiteConversationStore:
    """Conversations in a SQLite file (see :class:`~toolcycle.conversation.ConversationStore`).

    ``redactor`` defaults to the trace store's rules; ``redact=False`` stores verbatim. A
    redacted secret is what later runs of the conversation see (``[REDACTED]``).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, *,
                 redactor: Redactor | None = None, redact: bool = True) -> None:
        where = store_location(path)
        if where.engine != "sqlite":
            raise ConfigurationError([f"{where.describe()} is not a SQLite location: use "
                                      "PostgresConversationStore"], subject="conversation store")
        self.path = Path(where.target)
        self.redactor = (redactor or Redactor()) if redact else None
        self._lock = threading.Lock()  # one connection, one transaction at a time
        self._conn = open_sqlite(where, sql.SCHEMA)  # autocommit, WAL, schema: toolcycle.stores

    def claim(self, conversation_id: str, holder: str, lease_s: float) -> int:
        def take(conn: sqlite3.Connection) -> int:
            now = time.time()
            conn.execute("INSERT OR IGNORE INTO conversations (id, created_at) VALUES (?, ?)",
                         (conversation_id, now))
            version, current, until = conn.execute(
                "SELECT version, holder, held_until FROM conversations WHERE id = ?",
                (conversation_id,)).fetchone()
            if current is not None and current != holder and until is not None and until > now:
                raise busy(conversation_id, current, until - now)
            conn.execute("UPDATE conversations SET holder = ?, held_until = ? WHERE id = ?",
                         (holder, now + lease_s, conversation_id))
            return int(version)

        with self._lock:
            return write_once(self._conn, take)

    def load(self, conversation_id: str) -> tuple[list[Message], int]:
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot for the version and the rows
            try:
                return sql.load(self._conn, conversation_id)
            finally:
                self._conn.execute("COMMIT")

    def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
               expected_version: int) -> int:
        # outside the lock: redaction takes time
        texts = [message_text(m, self.redactor) for m in messages]

        def write(conn: sqlite3.Connection) -> int:
            return sql.append(conn, conversation_id, holder, texts, expected_version)

        with self._lock:
            return write_once(self._conn, write)

    def load_summary(self, conversation_id: str) -> ContextSummary | None:
        with self._lock:
            return sql.load_summary(self._conn, conversation_id)

    def save_summary(self, conversation_id: str, summary: ContextSummary) -> None:
        text = summary_text(summary, self.redactor)

        def write(conn: sqlite3.Connection) -> None:
            sql.save_summary(conn, conversation_id, text, summary.start, summary.upto)

        with self._lock:
            write_once(self._conn, write)

    def release(self, conversation_id: str, holder: str) -> None:
        def drop(conn: sqlite3.Connection) -> None:
            sql.release(conn, conversation_id, holder)

        with self._lock:
            write_once(self._conn, drop)

    def list_conversations(self) -> list[str]:
        with self._lock:
            return sql.conversation_ids(self._conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

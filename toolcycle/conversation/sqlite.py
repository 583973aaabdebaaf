"""The SQLite conversation store: every SQL statement of the SQLite backend is in this module.

Opened like the trace store and the playbook (:mod:`toolcycle._sqlite`: busy timeout first,
WAL switch and schema retried while another process opens the same file), and every write is
one ``BEGIN IMMEDIATE`` transaction, so claims and appends from threads and processes queue
instead of interleaving.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .._sqlite import create_schema, use_wal, write_once
from ..messages import Message
from ..tracing.redaction import Redactor
from .store import busy, conflict, message_text

DEFAULT_PATH = Path("~/.toolcycle/conversations.db")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    version INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    held_until REAL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS conversation_messages (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""


class SQLiteConversationStore:
    """Conversations in a SQLite file (see :class:`~toolcycle.conversation.ConversationStore`).

    ``redactor`` defaults to the trace store's rules; ``redact=False`` stores verbatim. A
    redacted secret is what later runs of the conversation see (``[REDACTED]``).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_PATH, *,
                 redactor: Redactor | None = None, redact: bool = True) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redactor = (redactor or Redactor()) if redact else None
        self._lock = threading.Lock()  # one connection, one transaction at a time
        self._conn = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False,
                                     isolation_level=None)
        use_wal(self._conn)
        create_schema(self._conn, _SCHEMA)

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
                row = self._conn.execute("SELECT version FROM conversations WHERE id = ?",
                                         (conversation_id,)).fetchone()
                rows = self._conn.execute(
                    "SELECT message FROM conversation_messages WHERE conversation_id = ? "
                    "ORDER BY seq", (conversation_id,)).fetchall()
            finally:
                self._conn.execute("COMMIT")
        return [Message.from_dict(json.loads(text)) for (text,) in rows], (
            int(row[0]) if row else 0)

    def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
               expected_version: int) -> int:
        # outside the lock: redaction takes time
        texts = [message_text(m, self.redactor) for m in messages]

        def write(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT version, holder FROM conversations WHERE id = ?",
                               (conversation_id,)).fetchone()
            if row is None or row[0] != expected_version or row[1] != holder:
                raise conflict(conversation_id, holder)
            (count,) = conn.execute("SELECT COUNT(*) FROM conversation_messages "
                                    "WHERE conversation_id = ?", (conversation_id,)).fetchone()
            conn.executemany(
                "INSERT INTO conversation_messages (conversation_id, seq, message) "
                "VALUES (?, ?, ?)",
                [(conversation_id, count + i, text) for i, text in enumerate(texts)])
            conn.execute("UPDATE conversations SET version = version + 1, holder = NULL, "
                         "held_until = NULL WHERE id = ?", (conversation_id,))
            return expected_version + 1

        with self._lock:
            return write_once(self._conn, write)

    def release(self, conversation_id: str, holder: str) -> None:
        def drop(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE conversations SET holder = NULL, held_until = NULL "
                         "WHERE id = ? AND holder = ?", (conversation_id, holder))

        with self._lock:
            write_once(self._conn, drop)

    def list_conversations(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM conversations ORDER BY created_at, id").fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

"""The PostgreSQL conversation store: every SQL statement of that backend is in this module.

Same contract as the SQLite store (:class:`~toolcycle.conversation.ConversationStore`), for
conversations continued from many processes and machines. Claims and appends serialise on the
conversation's row (``SELECT ... FOR UPDATE`` inside one transaction), not on the whole
database: runs on different conversations never wait on each other. Leases are judged by the
server's clock (``clock_timestamp()``), so machines whose clocks differ still agree on when a
claim has run out.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

from .._postgres import PostgresConnection, connect, safe_url
from ..messages import Message
from ..tracing.redaction import Redactor
from .store import busy, conflict, message_text

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    version BIGINT NOT NULL DEFAULT 0,
    holder TEXT,
    held_until DOUBLE PRECISION,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS conversation_messages (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
"""

_NOW = "extract(epoch FROM clock_timestamp())::double precision"


class PostgresConversationStore:
    """Conversations in a PostgreSQL database (``postgresql://user@host/db``).

    ``redactor`` defaults to the trace store's rules; ``redact=False`` stores verbatim.
    One connection per store, used by one thread at a time; open a store per process.
    """

    def __init__(self, url: str, *, redactor: Redactor | None = None,
                 redact: bool = True) -> None:
        self.path = url
        self.redactor = (redactor or Redactor()) if redact else None
        self._lock = threading.Lock()  # one connection, one transaction at a time
        self._conn: PostgresConnection = connect(url, schema=SCHEMA,
                                                 lock="toolcycle.conversations.schema")

    def claim(self, conversation_id: str, holder: str, lease_s: float) -> int:
        with self._lock, self._conn as conn:
            conn.execute(f"INSERT INTO conversations (id, created_at) VALUES (?, {_NOW}) "
                         "ON CONFLICT (id) DO NOTHING", (conversation_id,))
            version, current, until, now = conn.execute(
                f"SELECT version, holder, held_until, {_NOW} FROM conversations WHERE id = ? "
                "FOR UPDATE", (conversation_id,)).fetchone()
            if current is not None and current != holder and until is not None and until > now:
                raise busy(conversation_id, current, until - now)
            conn.execute("UPDATE conversations SET holder = ?, held_until = ? WHERE id = ?",
                         (holder, now + lease_s, conversation_id))
            return int(version)

    def load(self, conversation_id: str) -> tuple[list[Message], int]:
        with self._lock:
            # one snapshot for the version and the rows
            self._conn.begin("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try:
                row = self._conn.execute("SELECT version FROM conversations WHERE id = ?",
                                         (conversation_id,)).fetchone()
                rows = self._conn.execute(
                    "SELECT message FROM conversation_messages WHERE conversation_id = ? "
                    "ORDER BY seq", (conversation_id,)).fetchall()
            finally:
                self._conn.commit()
        return [Message.from_dict(json.loads(text)) for (text,) in rows], (
            int(row[0]) if row else 0)

    def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
               expected_version: int) -> int:
        # outside the lock: redaction takes time
        texts = [message_text(m, self.redactor) for m in messages]
        with self._lock, self._conn as conn:
            row = conn.execute("SELECT version, holder FROM conversations WHERE id = ? "
                               "FOR UPDATE", (conversation_id,)).fetchone()
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

    def release(self, conversation_id: str, holder: str) -> None:
        with self._lock:
            self._conn.execute("UPDATE conversations SET holder = NULL, held_until = NULL "
                               "WHERE id = ? AND holder = ?", (conversation_id, holder))

    def list_conversations(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM conversations ORDER BY created_at, id").fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"PostgresConversationStore({safe_url(self.path)!r})"

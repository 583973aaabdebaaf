"""The PostgreSQL conversation store: its claims, over the tables and statements of ``sql.py``.

Same contract as the SQLite store (:class:`~toolcycle.conversation.ConversationStore`), for
conversations continued from many processes and machines. Claims and appends serialise on the
conversation's row (``SELECT ... FOR UPDATE`` inside one transaction), not on the whole
database: runs on different conversations never wait on each other. Leases are judged by the
server's clock (``clock_timestamp()``), so machines whose clocks differ still agree on when a
claim has run out.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..messages import Message
from ..result import ContextSummary
from ..stores.postgres import PostgresConnection, connect, safe_url
from ..tracing.redaction import Redactor
from . import sql
from .store import busy, message_text, summary_text

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
        self._conn: PostgresConnection = connect(url, schema=sql.SCHEMA,
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
                return sql.load(self._conn, conversation_id)
            finally:
                self._conn.commit()

    def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
               expected_version: int) -> int:
        # outside the lock: redaction takes time
        texts = [message_text(m, self.redactor) for m in messages]
        with self._lock, self._conn as conn:
            return sql.append(conn, conversation_id, holder, texts, expected_version,
                              lock=" FOR UPDATE")

    def load_summary(self, conversation_id: str) -> ContextSummary | None:
        with self._lock, self._conn as conn:
            return sql.load_summary(conn, conversation_id)

    def save_summary(self, conversation_id: str, summary: ContextSummary) -> None:
        text = summary_text(summary, self.redactor)
        with self._lock, self._conn as conn:
            sql.save_summary(conn, conversation_id, text, summary.start, summary.upto)

    def release(self, conversation_id: str, holder: str) -> None:
        with self._lock:
            sql.release(self._conn, conversation_id, holder)

    def list_conversations(self) -> list[str]:
        with self._lock:
            return sql.conversation_ids(self._conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"PostgresConversationStore({safe_url(self.path)!r})"

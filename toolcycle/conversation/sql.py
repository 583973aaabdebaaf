"""The conversation tables, and the statements both backends run on them.

SQLite (``sqlite.py``) and PostgreSQL (``postgres.py``) keep the same tables and load and append
with the same statements, in the SQL both engines accept. They differ in how a write excludes
the others: SQLite's ``BEGIN IMMEDIATE`` takes the file's write lock, PostgreSQL locks only the
conversation's row (``lock=" FOR UPDATE"``), so runs on other conversations go on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..messages import Message
from ..result import ContextSummary
from ..stores.connection import SQLConnection
from .store import conflict

# DOUBLE PRECISION and BIGINT: SQLite reads them as REAL and INTEGER; PostgreSQL's REAL would
# keep 24 bits of an epoch time.
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
CREATE TABLE IF NOT EXISTS conversation_summaries (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations(id),
    summary TEXT NOT NULL,
    start_seq INTEGER NOT NULL,
    upto_seq INTEGER NOT NULL
);
"""


def load(conn: SQLConnection, conversation_id: str) -> tuple[list[Message], int]:
    """The messages and the version; the caller makes both reads one snapshot."""
    row = conn.execute("SELECT version FROM conversations WHERE id = ?",
                       (conversation_id,)).fetchone()
    rows = conn.execute("SELECT message FROM conversation_messages WHERE conversation_id = ? "
                        "ORDER BY seq", (conversation_id,)).fetchall()
    return [Message.from_dict(json.loads(text)) for (text,) in rows], (
        int(row[0]) if row else 0)


def append(conn: SQLConnection, conversation_id: str, holder: str, texts: Sequence[str],
           expected_version: int, *, lock: str = "") -> int:
    """Append ``texts`` and release the claim, inside the caller's transaction; the new version.

    Raises :class:`~toolcycle.errors.ConversationConflict` (the caller rolls back) when the
    version moved or ``holder`` no longer holds the claim.
    """
    row = conn.execute("SELECT version, holder FROM conversations WHERE id = ?" + lock,
                       (conversation_id,)).fetchone()
    if row is None or row[0] != expected_version or row[1] != holder:
        raise conflict(conversation_id, holder)
    (count,) = conn.execute("SELECT COUNT(*) FROM conversation_messages "
                            "WHERE conversation_id = ?", (conversation_id,)).fetchone()
    conn.executemany(
        "INSERT INTO conversation_messages (conversation_id, seq, message) VALUES (?, ?, ?)",
        [(conversation_id, count + i, text) for i, text in enumerate(texts)])
    conn.execute("UPDATE conversations SET version = version + 1, holder = NULL, "
                 "held_until = NULL WHERE id = ?", (conversation_id,))
    return expected_version + 1


def load_summary(conn: SQLConnection, conversation_id: str) -> ContextSummary | None:
    row = conn.execute("SELECT summary, start_seq, upto_seq FROM conversation_summaries "
                       "WHERE conversation_id = ?", (conversation_id,)).fetchone()
    return None if row is None else ContextSummary(str(row[0]), int(row[1]), int(row[2]))


def save_summary(conn: SQLConnection, conversation_id: str, text: str, start: int,
                 upto: int) -> None:
    """Keep the summary that covers the most (a later one replaces it only when it reaches
    further), in one statement both engines run atomically."""
    conn.execute(
        "INSERT INTO conversation_summaries (conversation_id, summary, start_seq, upto_seq) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO UPDATE SET "
        "summary = excluded.summary, start_seq = excluded.start_seq, "
        "upto_seq = excluded.upto_seq WHERE excluded.upto_seq > conversation_summaries.upto_seq",
        (conversation_id, text, start, upto))


def release(conn: SQLConnection, conversation_id: str, holder: str) -> None:
    conn.execute("UPDATE conversations SET holder = NULL, held_until = NULL "
                 "WHERE id = ? AND holder = ?", (conversation_id, holder))


def conversation_ids(conn: SQLConnection) -> list[str]:
    rows = conn.execute("SELECT id FROM conversations ORDER BY created_at, id").fetchall()
    return [r[0] for r in rows]

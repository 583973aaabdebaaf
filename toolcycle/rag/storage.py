"""The knowledge base's SQL layer: schema, connections, safe FTS queries, metadata filters.

Kept apart from :mod:`.knowledge_base` so that the class reads as what a knowledge base does,
and this module as how SQLite is asked to do it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..stores.sqlite import use_wal
from .embedders import STOPWORDS

#: How long a statement waits for another connection's lock before failing (seconds).
BUSY_TIMEOUT_S = 5.0
SCHEMA_VERSION = "1"
META_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")  # \Z: "$" allows a final newline
_TOKEN = re.compile(r"\w+", re.UNICODE)
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    pk INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='pk',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.pk, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.pk, old.text);
END;
CREATE TABLE IF NOT EXISTS embeddings (chunk_pk INTEGER PRIMARY KEY, vector BLOB NOT NULL);
"""


def fts_query(text: str, operator: str = "OR") -> str:
    """A safe FTS5 query from free text: each word quoted, stopwords dropped, joined by
    ``operator`` (``"OR"`` or ``"AND"``). Quoting every word means FTS5 syntax typed by a user
    or a model (quotes, ``NEAR``, ``col:``, ``*``) is searched for as words, never parsed."""
    words = _TOKEN.findall(text.lower())
    kept = [w for w in words if w not in STOPWORDS] or words
    unique = list(dict.fromkeys(kept))
    return f" {operator} ".join(f'"{w}"' for w in unique)


def connect(path: str, read_only: bool) -> sqlite3.Connection:
    if path == ":memory:":
        if read_only:
            raise ValueError("an in-memory knowledge base cannot be opened read-only")
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    else:
        file = Path(path)
        if read_only:
            uri = f"{file.resolve().as_uri()}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            # the busy timeout is set before the first statement (the WAL switch); use_wal
            # retries where SQLite does not wait (rel-16: other processes opening it too)
            conn = sqlite3.connect(
                file, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
            )
            use_wal(conn)
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def metadata_filters(where: Mapping[str, Any] | None) -> tuple[str, list[Any]]:
    """SQL for metadata equality filters; keys are checked, values are parameters."""
    if not where:
        return "", []
    clauses, params = [], []
    for key, value in where.items():
        if not META_KEY.match(key):
            raise ValueError(f"invalid metadata key {key!r}")
        if not isinstance(value, str | int | float | bool):
            raise ValueError(f"metadata filter {key!r} must be a str, number or bool")
        clauses.append("AND json_extract(d.metadata, ?) = ?")
        params.extend([f'$."{key}"', int(value) if isinstance(value, bool) else value])
    return " " + " ".join(clauses), params


def new_document_id(conn: sqlite3.Connection) -> str:
    """``doc-<n>``: short and readable, because answers cite chunk ids built from it."""
    n = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM documents").fetchone()[0]
    while conn.execute("SELECT 1 FROM documents WHERE id = ?", (f"doc-{n}",)).fetchone():
        n += 1
    return f"doc-{n}"

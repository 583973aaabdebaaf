"""Where a playbook lives: strategies, pending patterns, tool observations, learning progress.

:class:`PlaybookStore` is the interface the rest of the package uses; :class:`SQLitePlaybookStore`
implements it on one SQLite file (WAL mode, one connection per thread, read-modify-write in
``BEGIN IMMEDIATE`` transactions) so several processes can learn into the same playbook. Its
statements are written in the SQL PostgreSQL accepts too: the PostgreSQL store
(:mod:`toolcycle.playbook.postgres`) changes only how connections and transactions are made.

Retrieval does not go to SQLite on every call: the active strategies are held in an in-memory
inverted index. Every write bumps a version counter inside its transaction and stamps the rows
it wrote, so a lookup is one tiny ``SELECT`` of the counters, a fetch of the rows changed since
(usually none) and a scan of the posting lists of the task's words in the task's domain.
``bench/learning.py --retrieval`` measures it at 10k strategies.

Strategies and pending patterns are distilled from traces (a task's keywords are words of its
user prompt; a model reflector writes advice), so they are redacted like traces before they
are written (:mod:`toolcycle.tracing.redaction`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..stores.sqlite import create_schema, use_wal, write_once
from ..tracing.redaction import Redactor
from . import legacy
from .index import StrategyIndex
from .storage import TASKS_KEPT as TASKS_KEPT
from .storage import PlaybookStore as PlaybookStore
from .storage import ToolObservation as ToolObservation
from .storage import shared_schema as shared_schema
from .strategy import Strategy

#: Secrets out of what a playbook file keeps (the trace store's defaults).
_REDACTOR = Redactor()


_SCHEMA = shared_schema("REAL", "INTEGER") + """
CREATE TABLE IF NOT EXISTS tool_calls (
    id INTEGER PRIMARY KEY, domain TEXT NOT NULL, tool TEXT NOT NULL, duration_ms REAL NOT NULL,
    error INTEGER NOT NULL, timeout INTEGER NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS tool_calls_tool ON tool_calls(tool, id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta(key, value) VALUES ('version', 0);
INSERT OR IGNORE INTO meta(key, value) VALUES ('deleted', 0);
"""

#: Tool observations kept per tool (the statistics describe recent behaviour).
TOOL_WINDOW = 500


class SQLitePlaybookStore(PlaybookStore):
    """A playbook in one SQLite file, safe for several threads and processes.

    ``path=":memory:"`` is accepted for throw-away playbooks (one process; each thread then
    shares one connection, every read and transaction of it under one lock).
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = str(path)
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._memory = self.path == ":memory:"
        self._shared: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._index: StrategyIndex | None = None
        #: :meth:`observed_tasks` by domain, with the (count, newest) they were read at.
        self._tasks: dict[str, tuple[tuple[Any, ...], dict[str, frozenset[str]]]] = {}
        self._connections: list[sqlite3.Connection] = []
        create_schema(self._conn(), _SCHEMA)  # safe against other processes opening it too
        write_once(self._conn(), _add_miss_columns)
        self.upgrade_legacy()

    # -- connections and transactions ---------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._memory:
            if self._shared is None:
                self._shared = self._connect()
            return self._shared
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            # each thread uses only its own connection; close() may run on another thread
            self.path, timeout=self._busy_timeout_s, isolation_level=None,
            check_same_thread=False,
        )
        if not self._memory:
            use_wal(conn)
        with self._lock:
            self._connections.append(conn)
        return conn

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read, fetched whole.

        Why the lock: a ``:memory:`` playbook's threads share one connection, and sqlite3
        refuses two threads using one connection at once ("bad parameter or other API
        misuse": an agent built while the background worker was learning read the
        strategies in the middle of the worker's write). Its reads hold the lock its
        transactions hold. A file's threads each have a connection of their own."""
        with self._lock if self._memory else _NullLock():
            return self._conn().execute(sql, args).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (nested uses join the outer transaction).

        IMMEDIATE takes the write lock up front, so two curators never read the same counts
        and both write back (a lost update).
        """
        with self._lock if self._memory else _NullLock():
            conn = self._conn()
            depth: int = getattr(self._local, "depth", 0)
            if depth == 0:
                self._begin(conn)
            self._local.depth = depth + 1
            try:
                yield conn
            except BaseException:
                self._local.depth = depth
                if depth == 0:
                    self._end(conn, commit=False)
                raise
            self._local.depth = depth
            if depth == 0:
                self._end(conn, commit=True)

    def _begin(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def _end(self, conn: sqlite3.Connection, *, commit: bool) -> None:
        conn.execute("COMMIT" if commit else "ROLLBACK")

    def _bump(self, conn: sqlite3.Connection) -> int:
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
        row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        return int(row[0])

    def _versions(self) -> tuple[int, int]:
        """(last write, last delete): the index catches up on the first, rebuilds on the second."""
        rows = dict(self._read("SELECT key, value FROM meta"))
        return int(rows["version"]), int(rows["deleted"])

    def upgrade_legacy(self) -> int:
        """Give the lessons of a playbook written before typed repairs their typed parts,
        derived once from their text (:mod:`~toolcycle.playbook.legacy`), so that they act
        as they did; returns how many rows changed. Run when the store opens: a cheap read
        finds nothing to do in a playbook written since (or already upgraded)."""
        if not any(legacy.rows_to_upgrade(self._conn())):
            return 0
        with self.transaction() as conn:  # read again under the write lock: one upgrader
            strategies, candidates = legacy.rows_to_upgrade(conn)
            if strategies:
                version = self._bump(conn)
                conn.executemany("UPDATE strategies SET data = ?, version = ? WHERE id = ?",
                                 [(_REDACTOR.dumps(d), version, i) for i, d in strategies])
            conn.executemany("UPDATE candidates SET data = ? WHERE key = ?",
                             [(_REDACTOR.dumps(d), k) for k, d in candidates])
        return len(strategies) + len(candidates)

    # -- strategies ---------------------------------------------------------------------

    def get(self, strategy_id: str) -> Strategy | None:
        rows = self._read("SELECT data FROM strategies WHERE id = ?", (strategy_id,))
        return Strategy.from_dict(json.loads(rows[0][0])) if rows else None

    def strategies(
        self, domain: str | None = None, status: str | None = "active"
    ) -> list[Strategy]:
        sql, args = "SELECT data FROM strategies WHERE 1=1", list[str]()
        if domain is not None:
            sql, args = sql + " AND domain = ?", [*args, domain]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        rows = self._read(sql + " ORDER BY updated_at DESC", args)
        return [Strategy.from_dict(json.loads(r[0])) for r in rows]

    def put(self, strategies: Iterable[Strategy]) -> None:
        rows = [(s.id, s.domain, s.status, s.updated_at, _REDACTOR.dumps(s.to_dict()))
                for s in strategies]
        if not rows:
            return
        with self.transaction() as conn:
            version = self._bump(conn)
            conn.executemany(
                "INSERT INTO strategies(id, domain, status, updated_at, version, data) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET domain=excluded.domain, "
                "status=excluded.status, updated_at=excluded.updated_at, "
                "version=excluded.version, data=excluded.data",
                [(i, d, st, u, version, data) for i, d, st, u, data in rows],
            )

    def delete(self, strategy_ids: Iterable[str]) -> None:
        with self.transaction() as conn:
            conn.executemany("DELETE FROM strategies WHERE id = ?", [(i,) for i in strategy_ids])
            version = self._bump(conn)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'deleted'", (version,))

    # -- pending patterns ---------------------------------------------------------------

    def get_candidate(self, key: str) -> dict[str, Any] | None:
        rows = self._read("SELECT data FROM candidates WHERE key = ?", (key,))
        return dict(json.loads(rows[0][0])) if rows else None

    def put_candidate(self, key: str, domain: str, data: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO candidates(key, domain, data) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET data = excluded.data",
                (key, domain, _REDACTOR.dumps(data)),
            )

    def delete_candidate(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM candidates WHERE key = ?", (key,))

    def prune_candidates(self, domain: str, keep: int) -> int:
        [(count,)] = self._read("SELECT COUNT(*) FROM candidates WHERE domain = ?", (domain,))
        return super().prune_candidates(domain, keep) if int(count) > keep else 0

    def candidates(self, domain: str | None = None) -> list[dict[str, Any]]:
        if domain is None:
            rows = self._read("SELECT data FROM candidates")
        else:
            rows = self._read("SELECT data FROM candidates WHERE domain = ?", (domain,))
        return [dict(json.loads(r[0])) for r in rows]

    # -- tool observations --------------------------------------------------------------

    def add_tool_observations(self, rows: Sequence[ToolObservation]) -> None:
        if not rows:
            return
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO tool_calls(domain, tool, duration_ms, error, timeout, at, empty, "
                "alternative) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.domain, r.tool, r.duration_ms, int(r.error), int(r.timeout),
                  r.at or time.time(), int(r.empty), r.alternative) for r in rows],
            )
            for name in {r.tool for r in rows}:
                conn.execute(
                    "DELETE FROM tool_calls WHERE tool = ? AND id NOT IN "
                    "(SELECT id FROM tool_calls WHERE tool = ? ORDER BY id DESC LIMIT ?)",
                    (name, name, TOOL_WINDOW),
                )

    def tool_observations(self, domain: str | None = None) -> list[ToolObservation]:
        sql = ("SELECT tool, duration_ms, error, timeout, domain, at, empty, alternative "
               "FROM tool_calls")
        args: tuple[Any, ...] = ()
        if domain is not None:
            sql, args = sql + " WHERE domain = ?", (domain,)
        return [
            ToolObservation(t, d, bool(e), bool(o), dom, at, bool(m), alt)
            for t, d, e, o, dom, at, m, alt in self._read(sql + " ORDER BY id", args)
        ]

    def tool_observation_mark(self) -> int:
        [(newest,)] = self._read("SELECT max(id) FROM tool_calls")
        return int(newest or 0)

    # -- runs and learning progress -----------------------------------------------------

    def mark_observed(self, run_id: str, domain: str = "", words: Sequence[str] = ()) -> bool:
        with self.transaction() as conn:
            now = time.time()
            cursor = conn.execute(
                "INSERT INTO observed_runs(run_id, at) VALUES (?, ?) "
                "ON CONFLICT(run_id) DO NOTHING",
                (run_id, now),
            )
            if cursor.rowcount != 1:
                return False
            if words:
                conn.execute("INSERT INTO task_words(run_id, domain, at, words) "
                             "VALUES (?, ?, ?, ?) ON CONFLICT(run_id) DO NOTHING",
                             (run_id, domain, now, _REDACTOR.dumps(sorted(set(words)))))
                conn.execute(  # bounded: only the newest are read
                    "DELETE FROM task_words WHERE domain = ? AND run_id NOT IN (SELECT run_id "
                    "FROM task_words WHERE domain = ? ORDER BY at DESC LIMIT ?)",
                    (domain, domain, TASKS_KEPT))
            return True

    def observed_tasks(self, domain: str) -> dict[str, frozenset[str]]:
        # read for every run a playbook advises: parsed again only when a task was added
        [mark] = self._read("SELECT COUNT(*), MAX(at) FROM task_words WHERE domain = ?",
                            (domain,))
        with self._lock:
            cached = self._tasks.get(domain)
        if cached is not None and cached[0] == mark:
            return dict(cached[1])
        rows = self._read(
            "SELECT run_id, words FROM task_words WHERE domain = ? ORDER BY at DESC LIMIT ?",
            (domain, TASKS_KEPT))
        tasks: dict[str, frozenset[str]] = {}
        for run_id, text in rows:
            try:
                words = json.loads(text)
            except ValueError:  # a damaged row teaches nothing; the rest still apply
                continue
            if isinstance(words, list):
                tasks[str(run_id)] = frozenset(w for w in words if isinstance(w, str))
        with self._lock:
            self._tasks[domain] = (mark, tasks)
        return dict(tasks)

    def progress(self, session: str) -> dict[str, dict[str, Any]]:
        rows = self._read("SELECT task_id, data FROM learn_progress WHERE session = ?",
                          (session,))
        return {task_id: dict(json.loads(data)) for task_id, data in rows}

    def save_progress(self, session: str, task_id: str, data: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO learn_progress(session, task_id, data) VALUES (?, ?, ?) "
                "ON CONFLICT(session, task_id) DO UPDATE SET data = excluded.data",
                (session, task_id, json.dumps(data, default=str)),
            )

    # -- retrieval ----------------------------------------------------------------------

    def search(
        self, task: str, domain: str | None, tool_names: Sequence[str] | None, limit: int = 8
    ) -> list[tuple[Strategy, float]]:
        return self._fresh_index().search(task, domain, tool_names, limit)

    def leading(self, domain: str | None, kind: str, tool_names: Sequence[str] | None,
                limit: int = 4) -> list[Strategy]:
        return self._fresh_index().leading(domain, kind, tool_names, limit)

    def _fresh_index(self) -> StrategyIndex:
        """The index, patched with the rows written since it was last read."""
        version, deleted = self._versions()
        with self._lock:
            index = self._index
            if index is None or deleted > index.version:
                index = StrategyIndex()
                self._index = index
            if index.version < version:
                rows = self._read("SELECT data FROM strategies WHERE version > ?",
                                  (index.version,))
                index.update([Strategy.from_dict(json.loads(r[0])) for r in rows], version)
            return index

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._shared = None
        self._local = threading.local()


def _add_miss_columns(conn: sqlite3.Connection) -> None:
    """Playbooks written before empty results counted as misses lack two columns."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(tool_calls)")}
    if "empty" not in have:
        conn.execute("ALTER TABLE tool_calls ADD COLUMN empty INTEGER NOT NULL DEFAULT 0")
    if "alternative" not in have:
        conn.execute("ALTER TABLE tool_calls ADD COLUMN alternative TEXT NOT NULL DEFAULT ''")


class _NullLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

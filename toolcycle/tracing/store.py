"""Persist traces in SQLite, written incrementally so a crashed run keeps what it did.

Why incremental: the runs people most need to look at are the ones that went wrong, including
those whose process died (an OOM kill, a segfault in a native tool, a Ctrl-C in a notebook).
So the loop calls :meth:`TraceStore.start` when a run begins, :meth:`TraceStore.record_step`
after every iteration and :meth:`TraceStore.finish` on every way out (success, failure,
cancellation). Each call is one short transaction; a step already written is not written again
(except the most recent one, which the loop may still have amended).

Why SQLite: it is in the standard library, one real file is easy to copy into a bug report, WAL
mode lets ``toolcycle trace list`` read while agents write, and several processes may share a
database. A fleet of workers shares one PostgreSQL database instead: the same store opened with
a ``postgresql://`` URL runs the same statements, written in the SQL both engines accept, over
psycopg (:mod:`toolcycle.stores.postgres`, docs/postgres.md); each write touches only its
run's rows, so writers never wait on each other. Secrets are redacted (see
:mod:`toolcycle.tracing.redaction`) before anything reaches the file.

A run whose process died stays ``running`` in the file; when read back on the same host and the
writing process no longer exists, it is reported as ``crashed``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..messages import Usage
from ..status import is_success
from ..stores.connection import SQLConnection
from ..stores.location import store_location
from ..stores.postgres import connect
from ..stores.sqlite import create_schema, use_wal
from .recorder import TraceRecorder
from .redaction import Redactor
from .store_status import migrate_statuses
from .trace import Step, Trace

#: Environment variable naming the database that agents record into automatically.
ENV_VAR = "TOOLCYCLE_TRACE_DB"
#: Where the CLI looks when neither ``--db`` nor the environment variable says otherwise.
DEFAULT_PATH = Path("~/.toolcycle/traces.db")

# One schema for both engines: SQLite reads DOUBLE PRECISION as REAL and BIGINT as INTEGER
# (64 bits there); PostgreSQL's REAL would keep 24 bits of an epoch time, its INTEGER 32.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    agent_name TEXT NOT NULL,
    model_name TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at DOUBLE PRECISION,
    updated_at DOUBLE PRECISION NOT NULL,
    iterations INTEGER NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    termination_reason TEXT,
    error_code TEXT,
    writer_pid INTEGER NOT NULL,
    writer_host TEXT NOT NULL,
    header TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at);
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (agent_name, started_at);
CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, started_at);
CREATE TABLE IF NOT EXISTS trace_store_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

_RUN_COLUMNS = (
    "run_id, agent_name, model_name, status, started_at, ended_at, iterations, "
    "input_tokens, output_tokens, termination_reason, error_code, writer_pid, writer_host"
)


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """One row of ``trace list``: enough to pick a run without loading its steps."""

    run_id: str
    agent_name: str
    model_name: str
    status: str
    started_at: float
    ended_at: float | None
    iterations: int
    input_tokens: int
    output_tokens: int
    termination_reason: str | None
    error_code: str | None
    #: The user's prompt and the run's answer (the output as JSON when not text), clipped to
    #: :data:`HEADLINE_CHARS`, as stored (redacted): what tells runs apart in a listing.
    prompt: str = ""
    answer: str = ""

    @property
    def duration_ms(self) -> float | None:
        return None if self.ended_at is None else (self.ended_at - self.started_at) * 1000.0

    @property
    def succeeded(self) -> bool:
        """Whether the run did what was asked (``status == "success"``, docs/status.md)."""
        return is_success(self.status)


class TraceStore:
    """A SQLite file (or a ``postgresql://`` database) of traces: ``start`` / ``record_step`` /
    ``finish`` write, ``get`` / ``list`` read.

    ``redactor`` defaults to API keys, bearer tokens and secret-named fields; pass
    ``Redactor(extra_patterns=[...])`` to add formats, or ``redact=False`` to store verbatim.
    The store is thread-safe and may be shared by concurrent runs and by callbacks.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        redactor: Redactor | None = None,
        redact: bool = True,
    ) -> None:
        self.redactor = (redactor or Redactor()) if redact else None
        self._lock = threading.Lock()
        self._written: dict[str, int] = {}
        self._pid = os.getpid()
        self._host = socket.gethostname()
        self.path: Path | str
        self._conn: SQLConnection
        where = store_location(path)  # a path, sqlite:///, postgresql:// (toolcycle.stores)
        if where.engine == "postgresql":  # psycopg is imported only now
            self.path = where.target
            self._conn = connect(self.path, schema=_SCHEMA, lock="toolcycle.traces.schema")
            migrate_statuses(self._conn)
            return
        self.path = Path(where.target)
        if not where.in_memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # Safe while other processes open the same new file (rel-16): see toolcycle.stores.sqlite.
        conn = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
        use_wal(conn)
        conn.execute("PRAGMA foreign_keys=ON")
        create_schema(conn, _SCHEMA)
        self._conn = conn
        migrate_statuses(conn)  # a store written before the status vocabulary

    @classmethod
    def from_env(cls, **kwargs: Any) -> TraceStore | None:
        """The store named by ``$TOOLCYCLE_TRACE_DB``, or ``None`` when it is unset."""
        path = os.environ.get(ENV_VAR)
        return cls(path, **kwargs) if path else None

    # -- writing: the three calls the loop makes ------------------------------------------

    def start(self, trace: Trace) -> None:
        """Record that a run began (its prompt, agent and model), before any model request."""
        with self._lock, self._conn:
            self._write_header(trace)
            self._write_steps(trace, first=0)
            self._written[trace.run_id] = len(trace.steps)

    def record_step(self, trace: Trace) -> None:
        """Write the steps added since the last call (and rewrite the latest one).

        Called after every iteration, so a crash loses at most the iteration in flight.
        """
        with self._lock, self._conn:
            self._write_header(trace)
            first = max(self._written.get(trace.run_id, 0) - 1, 0)
            self._write_steps(trace, first=first)
            self._written[trace.run_id] = len(trace.steps)

    def finish(self, trace: Trace) -> None:
        """Write the final state: status, termination, output or error, and every step."""
        with self._lock, self._conn:
            self._write_header(trace)
            self._write_steps(trace, first=0)
            self._conn.execute(
                "DELETE FROM steps WHERE run_id = ? AND position >= ?",
                (trace.run_id, len(trace.steps)),
            )
            self._written.pop(trace.run_id, None)

    def recorder(self) -> TraceRecorder:
        """A callbacks object that records runs into this store from their events.

        For agents that were not given ``trace_store=``: ``Agent(..., callbacks=store.recorder())``.
        The store knows the recorder, not the other way: the recorder writes to any
        :class:`~toolcycle.tracing.recorder.TraceSink`.
        """
        return TraceRecorder(self)

    def save(self, trace: Trace) -> None:
        """Store a complete trace in one go (imports, tests, traces built elsewhere)."""
        self.finish(trace)

    def _write_header(self, trace: Trace) -> None:
        header = replace(trace, steps=[]).to_dict()  # steps are rows of their own
        del header["steps"]
        termination = trace.termination or {}
        error = trace.error or {}
        # the loop totals usage when the run ends; until then the steps are the record
        usage = trace.usage if trace.usage.requests else _usage_of_steps(trace)
        self._conn.execute(
            "INSERT INTO runs (run_id, agent_name, model_name, status, started_at, ended_at,"
            " updated_at, iterations, input_tokens, output_tokens, termination_reason,"
            " error_code, writer_pid, writer_host, header)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id) DO UPDATE SET agent_name = excluded.agent_name,"
            " model_name = excluded.model_name, status = excluded.status,"
            " started_at = excluded.started_at, ended_at = excluded.ended_at,"
            " updated_at = excluded.updated_at, iterations = excluded.iterations,"
            " input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,"
            " termination_reason = excluded.termination_reason,"
            " error_code = excluded.error_code, writer_pid = excluded.writer_pid,"
            " writer_host = excluded.writer_host, header = excluded.header",
            (
                trace.run_id,
                self._column(trace.agent_name),
                self._column(trace.model_name),
                trace.status,
                trace.started_at,
                trace.ended_at,
                time.time(),
                len(trace.steps),
                usage.input_tokens,
                usage.output_tokens,
                self._column(termination.get("reason")),
                self._column(error.get("code")),
                self._pid,
                self._host,
                self._dumps(header),
            ),
        )

    def _write_steps(self, trace: Trace, first: int) -> None:
        rows = []
        for position in range(first, len(trace.steps)):
            rows.append((trace.run_id, position, self._dumps(trace.steps[position].to_dict())))
        self._conn.executemany(
            "INSERT INTO steps (run_id, position, data) VALUES (?, ?, ?)"
            " ON CONFLICT (run_id, position) DO UPDATE SET data = excluded.data", rows
        )

    def _column(self, value: Any) -> Any:
        """A plain column copied from the trace, redacted like the JSON beside it (a model
        name may be a URL with a password in it)."""
        if self.redactor is not None and isinstance(value, str):
            return self.redactor.text(value)
        return value

    def _dumps(self, data: dict[str, Any]) -> str:
        if self.redactor is not None:
            return self.redactor.dumps(data)
        return json.dumps(data, ensure_ascii=False, default=str)

    # -- reading --------------------------------------------------------------------------

    def get(self, run_id: str) -> Trace | None:
        """Load one trace by id, or by a unique prefix of its id (as the CLI accepts)."""
        with self._lock:
            row = self._resolve(run_id)
            if row is None:
                return None
            full_id, header_json, status, pid, host = row
            steps = self._conn.execute(
                "SELECT data FROM steps WHERE run_id = ? ORDER BY position", (full_id,)
            ).fetchall()
        data = json.loads(header_json)
        trace = Trace.from_dict({**data, "steps": []})
        trace.steps = [Step.from_dict(json.loads(s)) for (s,) in steps]
        trace.status = self._effective_status(status, pid, host)
        if trace.ended_at is None and trace.usage.requests == 0:
            trace.usage = _usage_of_steps(trace)
        return trace

    def _resolve(self, run_id: str) -> tuple[str, str, str, int, str] | None:
        query = "SELECT run_id, header, status, writer_pid, writer_host FROM runs WHERE run_id "
        row = self._conn.execute(query + "= ?", (run_id,)).fetchone()
        if row is not None:
            return tuple(row)
        pattern = _escape_like(run_id) + "%"
        rows = self._conn.execute(query + "LIKE ? ESCAPE '\\' LIMIT 2", (pattern,)).fetchall()
        if len(rows) > 1:
            raise KeyError(f"run id prefix {run_id!r} is ambiguous")
        return tuple(rows[0]) if rows else None

    def list(
        self,
        *,
        agent: str | None = None,
        status: str | Collection[str] | None = None,
        since: float | datetime | str | None = None,
        limit: int | None = 50,
    ) -> list[TraceSummary]:
        """Most recent runs first, filtered by agent name, status and start time.

        ``status`` is one word of :data:`toolcycle.status.RunStatus` or several (any of them:
        ``NOT_SUCCESS`` lists every run that did not succeed); ``since`` accepts what
        :func:`parse_since` accepts.
        """
        clauses: list[str] = []
        params: list[Any] = []
        if agent is not None:
            clauses.append("agent_name = ?")
            params.append(agent)
        wanted = None if status is None else {status} if isinstance(status, str) else set(status)
        if wanted is not None and not wanted:  # none of no statuses
            return []
        if wanted is not None:  # a crashed run is a running row whose writer is gone
            stored = sorted({"running" if word == "crashed" else word for word in wanted})
            clauses.append(f"status IN ({', '.join('?' * len(stored))})")
            params.extend(stored)
        if since is not None:
            clauses.append("started_at >= ?")
            params.append(parse_since(since))
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs{where} ORDER BY started_at DESC, run_id"
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        out: list[TraceSummary] = []
        for row in rows:
            summary = self._summary(row)
            if wanted is not None and summary.status not in wanted:
                continue
            out.append(summary)
            if limit is not None and len(out) >= limit:
                break
        return _with_headlines(self._conn, self._lock, out)

    def iter_traces(self, run_ids: Iterable[str]) -> Iterator[Trace]:
        """Load several traces one by one (the CLI's bulk export shows progress over this)."""
        for run_id in run_ids:
            trace = self.get(run_id)
            if trace is not None:
                yield trace

    def delete(self, run_id: str) -> bool:
        """Remove one run and its steps; ``True`` when it existed."""
        with self._lock, self._conn:
            cursor = self._conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        return int(cursor.rowcount) > 0

    def _summary(self, row: tuple[Any, ...]) -> TraceSummary:
        (run_id, agent, model, status, started, ended, iterations, tokens_in, tokens_out,
         reason, code, pid, host) = row
        return TraceSummary(
            run_id, agent, model, self._effective_status(status, pid, host), started, ended,
            iterations, tokens_in, tokens_out, reason, code,
        )

    def _effective_status(self, status: str, pid: int, host: str) -> str:
        """``running`` rows whose writer process is gone (on this host) read as ``crashed``."""
        if status != "running" or host != self._host or pid == self._pid:
            return status
        return status if _process_alive(pid) else "crashed"

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve_trace_store(
    value: TraceStore | str | os.PathLike[str] | bool | None,
) -> TraceStore | None:
    """What ``Agent(trace_store=...)`` accepts: a store, a path, ``True`` (the default path),
    ``False`` (never record), or ``None`` (record only when ``$TOOLCYCLE_TRACE_DB`` is set)."""
    if isinstance(value, TraceStore):
        return value
    if value is None:
        return TraceStore.from_env()
    if value is False:
        return None
    if value is True:
        return TraceStore(os.environ.get(ENV_VAR) or DEFAULT_PATH)
    return TraceStore(value)


_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: float | datetime | str, now: float | None = None) -> float:
    """A start-time bound as epoch seconds: a number, a datetime, an ISO date or datetime, or a
    relative age such as ``30m``, ``12h``, ``7d``."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    match = _RELATIVE.match(value)
    if match:
        age = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        return (time.time() if now is None else now) - age
    try:
        return datetime.fromisoformat(value.strip()).timestamp()
    except ValueError:
        raise ValueError(
            f"cannot read {value!r} as a time: use e.g. 30m, 12h, 7d or 2026-01-31T12:00"
        ) from None


def _with_headlines(conn: SQLConnection, lock: AbstractContextManager[Any],
                    summaries: list[TraceSummary]) -> list[TraceSummary]:
    """``summaries`` with their prompt and answer, read from the listed rows only (a header
    holds the whole output: reading every row's would cost a large store dear)."""
    if not summaries:
        return summaries
    marks = ", ".join("?" for _ in summaries)
    with lock:
        rows = conn.execute(f"SELECT run_id, header FROM runs WHERE run_id IN ({marks})",
                            [s.run_id for s in summaries]).fetchall()
    headers = {row[0]: row[1] for row in rows}
    out = []
    for summary in summaries:
        prompt, answer = _headline(headers.get(summary.run_id))
        out.append(replace(summary, prompt=prompt, answer=answer))
    return out


#: A listing's prompt and answer are clipped to this many characters.
HEADLINE_CHARS = 200


def _headline(header: Any) -> tuple[str, str]:
    """The prompt and the answer of a stored header; empty where it cannot be read (a header
    is stored data: a damaged or crafted one must not break a listing)."""
    try:
        data = json.loads(header)
    except (TypeError, ValueError, RecursionError):
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    prompt, output = data.get("user_prompt"), data.get("output")
    answer = output if isinstance(output, str) or output is None else json.dumps(output)
    return _clip_line(prompt), _clip_line(answer)


def _clip_line(value: Any) -> str:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text if len(text) <= HEADLINE_CHARS else text[: HEADLINE_CHARS - 1] + "…"


def _usage_of_steps(trace: Trace) -> Usage:
    """Usage added up from the steps (for runs that have not ended, or never will)."""
    total = Usage(requests=trace.iterations, tool_calls=len(trace.tool_calls))
    for step in trace.steps:
        total.add(Usage(step.usage.input_tokens, step.usage.output_tokens,
                        step.usage.cache_read_tokens, step.usage.cache_write_tokens,
                        reasoning_tokens=step.usage.reasoning_tokens, cost=step.usage.cost))
    return total


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

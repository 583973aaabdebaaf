"""The trace store's tables on PostgreSQL (``TraceStore("postgresql://...")``).

:class:`~toolcycle.tracing.store.TraceStore` keeps one copy of its statements, written in the
SQL that SQLite and PostgreSQL both accept; what differs is only how the database is opened
and the column types below (``DOUBLE PRECISION`` for times: PostgreSQL's ``REAL`` has 24 bits,
a second's precision lost on an epoch time). Many processes may write into one database: each
``start`` / ``record_step`` / ``finish`` is one transaction touching only its own run's rows,
so writers never wait on each other except on the same run id.
"""

from __future__ import annotations

from .._postgres import PostgresConnection, connect

SCHEMA = """
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
"""


def open_trace_database(url: str) -> PostgresConnection:
    """A connection to the traces at ``url``, their tables created if missing."""
    return connect(url, schema=SCHEMA, lock="toolcycle.traces.schema")

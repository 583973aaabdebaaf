"""Bringing a trace store written before the status vocabulary up to date (docs/status.md).

A store written by an older toolcycle says ``success`` for every run that returned: runs a
limit forced to answer, partial ones, and runs whose answer is a tool's error text passed
through. ``trace list --status success`` and the viewer would go on calling them successes.
So when a store is opened, the rows that say ``success`` are read once more and given the
status the vocabulary says (:func:`toolcycle.status.returned_status`, the rule the loop
applies to a new run), and a marker row records that the store is up to date: later opens
cost one query. Reading again is idempotent, so two processes opening the same old store at
once agree; a row that cannot be read (a damaged or crafted one) keeps what it says.
"""

from __future__ import annotations

import json
from typing import Any

from .._postgres import SQLConnection
from ..status import RunStatus, returned_status
from .trace import Trace

#: The marker row (table ``trace_store_meta``) and the vocabulary's version it records.
MARKER = "status_vocabulary"
VERSION = "2"


def migrate_statuses(conn: SQLConnection) -> int:
    """Re-read the ``success`` rows of a store written before the vocabulary; return how many
    changed. Does nothing (one query) once the store is marked up to date."""
    row = conn.execute("SELECT value FROM trace_store_meta WHERE name = ?", (MARKER,)).fetchone()
    if row is not None and row[0] == VERSION:
        return 0
    changed = 0
    with conn:
        rows = conn.execute(
            "SELECT run_id, header FROM runs WHERE status = 'success'").fetchall()
        for run_id, header in rows:
            status = _status_of(conn, run_id, header)
            if status != "success":
                conn.execute("UPDATE runs SET status = ? WHERE run_id = ? AND status = 'success'",
                             (status, run_id))
                changed += 1
        conn.execute(
            "INSERT INTO trace_store_meta (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value", (MARKER, VERSION))
    return changed


def _status_of(conn: SQLConnection, run_id: str, header: str) -> RunStatus:
    """What a stored ``success`` run's status is: its termination's action says forced or
    partial; an answered one is read with its steps, to see whether it passed a tool's error
    through."""
    try:
        data = json.loads(header)
        termination = data.get("termination")
        action = termination.get("action") if isinstance(termination, dict) else None
        if action in ("final_answer", "partial"):
            return returned_status(action, None, ())
        if data.get("output") is None:
            return "success"
        steps: list[Any] = [json.loads(text) for (text,) in conn.execute(
            "SELECT data FROM steps WHERE run_id = ? ORDER BY position", (run_id,)).fetchall()]
        trace = Trace.from_dict({**data, "steps": steps})
        return returned_status(str(action), trace.output, trace.error_observations())
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
        return "success"  # damaged or crafted: it keeps what it says

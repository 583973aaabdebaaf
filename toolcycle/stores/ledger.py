"""The record of consumed snapshots: a paused run continues at most once.

A snapshot is a bearer record of a person's pending decision. Resumed twice (a retry, a
double-clicked button, two workers reading one queue, an attacker replaying it) it would run
the approved side effect twice. So every resume first *claims* the pause it continues, in a
ledger shared by every process that resumes runs: one row per pause, keyed by
``run_id#pause`` (the pause's ordinal in the run's trace), inserted with
``INSERT ... ON CONFLICT DO NOTHING``. The unique key makes the claim atomic in both engines,
across threads and processes: exactly one claimant inserts the row; every other one finds it
and gets :class:`~toolcycle.errors.SnapshotConsumed`, before anything of the run executes.

The claim is committed *before* the resumed run executes anything (see docs/approval.md): a
process that dies after the claim and before or during the approved call leaves the snapshot
consumed and the call run at most once (perhaps not at all), never twice.

The default ledger is the SQLite file ``~/.toolcycle/consumed-snapshots.db`` (or the location
in ``$TOOLCYCLE_SNAPSHOT_LEDGER``), shared by the processes of one machine; services that
resume on several machines give every agent one PostgreSQL URL (``snapshot_ledger=``).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass

from ..errors import SnapshotConsumed
from .connection import SQLConnection, connect
from .location import StoreLocation, store_location

DEFAULT_LOCATION = "~/.toolcycle/consumed-snapshots.db"
#: The environment variable naming the default ledger's location (a path or URL).
ENVIRONMENT = "TOOLCYCLE_SNAPSHOT_LEDGER"

SCHEMA = """
CREATE TABLE IF NOT EXISTS consumed_snapshots (
    pause_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    consumed_at DOUBLE PRECISION NOT NULL,
    consumer TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Consumption:
    """Who consumed a pause, and when (Unix time)."""

    run_id: str
    pause: int
    consumed_at: float
    consumer: str


class SnapshotLedger:
    """Consumed pauses in a SQLite file or a PostgreSQL database (thread-safe; one connection
    per ledger, opened at the first claim)."""

    def __init__(self, location: object = DEFAULT_LOCATION) -> None:
        self.location: StoreLocation = store_location(location)
        self._lock = threading.Lock()
        self._conn: SQLConnection | None = None
        self._pid = os.getpid()

    def _connection(self) -> SQLConnection:
        if self._pid != os.getpid():  # a forked child never shares its parent's connection
            self._conn, self._pid = None, os.getpid()
        if self._conn is None:
            self._conn = connect(self.location, schema=SCHEMA, lock="toolcycle.ledger")
        return self._conn

    def claim(self, run_id: str, pause: int) -> None:
        """Record that the pause ``pause`` of run ``run_id`` is being resumed; raises
        :class:`SnapshotConsumed` when some resume claimed it before (committed at return)."""
        consumer = f"{socket.gethostname()}:{os.getpid()}"
        key = f"{run_id}#{pause}"
        with self._lock:
            conn = self._connection()
            inserted = conn.execute(
                "INSERT INTO consumed_snapshots (pause_key, run_id, consumed_at, consumer) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (pause_key) DO NOTHING",
                (key, run_id, time.time(), consumer)).rowcount
            if inserted == 1:
                return
            row = conn.execute("SELECT consumed_at, consumer FROM consumed_snapshots "
                               "WHERE pause_key = ?", (key,)).fetchone()
        raise SnapshotConsumed(run_id, pause, float(row[0]), str(row[1]))

    def consumed(self, run_id: str, pause: int) -> Consumption | None:
        """Whether (and by whom) the pause was claimed."""
        with self._lock:
            row = self._connection().execute(
                "SELECT consumed_at, consumer FROM consumed_snapshots WHERE pause_key = ?",
                (f"{run_id}#{pause}",)).fetchone()
        return None if row is None else Consumption(run_id, pause, float(row[0]), str(row[1]))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"SnapshotLedger({self.location.describe()!r})"


_shared: dict[StoreLocation, SnapshotLedger] = {}
_shared_lock = threading.Lock()


def ledger_of(source: object) -> SnapshotLedger:
    """``source`` itself when it is a ledger, else the shared ledger at that location (``None``:
    the default one): what an agent's ``snapshot_ledger=`` names."""
    return source if isinstance(source, SnapshotLedger) else shared_ledger(source)


def shared_ledger(location: object = None) -> SnapshotLedger:
    """The process's one ledger for ``location`` (``None``: ``$TOOLCYCLE_SNAPSHOT_LEDGER`` or
    the default file), so agents resuming into one ledger share its connection."""
    if location is None:
        location = os.environ.get(ENVIRONMENT) or DEFAULT_LOCATION
    where = store_location(location)
    with _shared_lock:
        ledger = _shared.get(where)
        if ledger is None:
            ledger = _shared[where] = SnapshotLedger(where)
        return ledger

"""Writing the output file: one batch at a time, each record on disk as its run ends.

Why a lock file beside the output (``OUT.lock``): two batches on one output (a cron job that
overlaps the previous one, a rerun started while the first still runs) would both run every
input and both append. The first batch holds an exclusive ``flock`` on ``OUT.lock`` from
before it reads the output until after its last write; a second one fails at once with
:class:`BatchLockedError`, naming the holder's process. The lock is on a file of its own
because the output itself is replaced (renamed over) by the final rewrite, and a lock on a
replaced file would lock nothing. The kernel drops the lock when its holder dies, however it
dies, so a killed batch never leaves a stale lock; the empty lock file stays (deleting it
would let two batches lock two different files). ``flock`` needs a file system with working
locks (local disks; NFS only with its lock service).

Why flush per record and fsync now and then: a record flushed to the kernel survives the
kill of its process, which is what r2-06 loses today; surviving a crash of the machine needs
``fsync``, which costs a disk round trip, so the journal syncs at most every
:data:`SYNC_SECONDS` (and at the end, and before every resume: see :mod:`.records`).

Why the final rewrite goes through a temporary file and a rename: the rename is atomic, so a
kill during the rewrite leaves the journal as it was, never a half-written file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .inputs import BatchFileError, InputLine
from .records import Entry, error_record

#: The most seconds a flushed record waits before the journal is synced to disk.
SYNC_SECONDS = 1.0


class BatchLockedError(BatchFileError):
    """Another batch is writing the same output file."""


def lock_path(out: str | os.PathLike[str]) -> Path:
    target = Path(out)
    return target.with_name(target.name + ".lock")


@contextlib.contextmanager
def output_lock(out: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the exclusive lock on ``out`` (its ``.lock`` file), or raise BatchLockedError."""
    path = lock_path(out)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            who = f" (process {holder})" if holder.isdigit() else ""
            raise BatchLockedError(
                f"another batch is writing {out}{who}; wait for it to finish or choose "
                "another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


@dataclass
class JournalWriter:
    """Appends records to the output file as runs end (never twice for one key and attempt)."""

    handle: IO[bytes]
    _written: set[tuple[str, int]] = field(default_factory=set)
    _synced: float = field(default_factory=time.monotonic)
    written: int = 0

    def add(self, record: dict[str, Any], item: InputLine) -> Entry | None:
        """Append ``record`` for ``item``: where it is, or None for a second answer (a retried
        Ray task's) to a key and attempt that already has one."""
        token = (record["key"], record["attempt"])
        if token in self._written:
            return None
        self._written.add(token)
        try:
            line = json.dumps(record, ensure_ascii=False, default=str).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:  # an output JSON cannot hold
            record = error_record(item, f"the record cannot be written as JSON: "
                                        f"{type(exc).__name__}: {exc}", attempt=record["attempt"])
            line = json.dumps(record, ensure_ascii=False).encode("utf-8")
        self.written += 1
        return self._append(record, line, sync=False)

    def mark(self, record: dict[str, Any]) -> Entry:
        """Append a journal entry (a ``resuming`` mark) and sync it before going on."""
        return self._append(record, json.dumps(record, ensure_ascii=False).encode("utf-8"),
                            sync=True)

    def _append(self, record: dict[str, Any], line: bytes, *, sync: bool) -> Entry:
        offset = self.handle.tell()
        self.handle.write(line + b"\n")
        self.handle.flush()
        if sync or time.monotonic() - self._synced >= SYNC_SECONDS:
            self.sync()
        return Entry(record["line"], record["key"], record["status"], record["attempt"],
                     offset, len(line))

    def sync(self) -> None:
        os.fsync(self.handle.fileno())
        self._synced = time.monotonic()


def rewrite_in_order(out: Path, entries: list[Entry]) -> None:
    """Replace ``out`` by exactly ``entries`` (input order, one per input), atomically."""
    temporary = out.with_name(f".{out.name}.rewrite")
    with open(out, "rb") as source, open(temporary, "wb") as target:
        for entry in entries:
            source.seek(entry.offset)
            target.write(source.read(entry.length) + b"\n")
        target.flush()
        os.fsync(target.fileno())
    os.replace(temporary, out)
    folder = os.open(out.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)

"""The batch's records and how the output file is read back: the latest record per input wins.

Why the output file is a journal: each record is appended the moment its run ends (see
:mod:`.journal`), in the order runs finish, so a kill loses no finished run. The order users
expect is restored twice: by :func:`read_records` (records by input line, whatever the file's
order) and by the batch itself, which rewrites the file in input order once every input has a
record. A killed batch's file is therefore in finish order until the batch is run again.

Why a record can be superseded: ``--retry-errors`` reruns a failed input and ``--resume``
continues a paused one; the new record is appended with ``attempt`` one higher than the record
it replaces. Reading keeps, per input key, the record with the highest ``attempt`` (the later
one on a tie), so a file read mid-batch never shows an input twice, and the final rewrite
drops the superseded records.

Why ``resuming`` entries: before a paused run is resumed, an entry with that status is
appended and synced. If the batch dies during the resume, the next batch finds it as the
input's latest entry, knows the snapshot was consumed (its approved calls may have run), and
records an error rather than resuming the same snapshot a second time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .inputs import BatchFileError, InputLine

#: A resume of this input's paused run has started (a journal entry, never a final record).
RESUMING = "resuming"
#: Statuses ``--retry-errors`` does not rerun: done, waiting for a person, or a line that can
#: only fail the same way again (an edited line has a new key and runs anyway).
NOT_RETRIED = frozenset({"success", "paused", "malformed", RESUMING})


def base_record(item: InputLine, status: str, attempt: int) -> dict[str, Any]:
    """Every field a record has, in the order the file shows them."""
    return {"line": item.line, "key": item.key, "id": item.id, "status": status,
            "attempt": attempt, "output": None, "termination": None, "usage": None,
            "run_id": None, "error": None, "pending": None, "snapshot": None}


def error_record(item: InputLine, message: str, status: str = "error",
                 attempt: int = 1) -> dict[str, Any]:
    record = base_record(item, status, attempt)
    record["error"] = message
    return record


@dataclass(frozen=True, slots=True)
class Entry:
    """Where an input's latest entry is in the output file, and what it says."""

    line: int
    key: str
    status: str
    attempt: int
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class Journal:
    """What an output file holds: each input key's latest entry.

    ``canonical``: the file is already one record per input in input order, nothing
    superseded (the rewrite at the end of a batch would change nothing).
    """

    latest: dict[str, Entry]
    canonical: bool


def _lines(data: bytes) -> Iterable[tuple[int, int, bytes]]:
    """(1-based number, offset, bytes) of each whole line; an unterminated tail is left out."""
    offset = 0
    number = 0
    while True:
        end = data.find(b"\n", offset)
        if end < 0:
            return
        number += 1
        yield number, offset, data[offset:end]
        offset = end + 1


def _entry(raw: bytes, offset: int) -> Entry | None:
    try:
        record = json.loads(raw)
        key, status, line = record["key"], record["status"], record["line"]
        attempt = record.get("attempt", 1)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if not (isinstance(key, str) and isinstance(status, str) and isinstance(line, int)
            and isinstance(attempt, int)):
        return None
    return Entry(line, key, status, attempt, offset, len(raw))


def _scan(path: Path, data: bytes) -> tuple[dict[str, Entry], bool, int]:
    """The latest entry per key, whether the file is canonical, and the length of its whole
    lines (a torn last line, a write cut short by a kill, ends there)."""
    latest: dict[str, Entry] = {}
    canonical = True
    last_line = 0
    whole = 0
    for number, offset, raw in _lines(data):
        whole = offset + len(raw) + 1
        entry = _entry(raw, offset)
        if entry is None:
            raise BatchFileError(f"{path}: line {number} is not an output record")
        before = latest.get(entry.key)
        if before is None or entry.attempt >= before.attempt:
            latest[entry.key] = entry
        canonical = canonical and before is None and entry.line > last_line \
            and entry.status != RESUMING
        last_line = entry.line
    return latest, canonical, whole


def read_journal(path: str | os.PathLike[str], inputs: list[InputLine]) -> Journal:
    """Read the output file of a batch about to run (it holds the lock): a torn last line is
    cut off the file; a bad line anywhere else, or a record whose key matches no input line,
    raises :class:`BatchFileError`."""
    target = Path(path)
    if not target.exists():
        return Journal({}, True)
    data = target.read_bytes()
    latest, canonical, whole = _scan(target, data)
    known = {item.key for item in inputs}
    for entry in sorted(latest.values(), key=lambda e: e.offset):
        if entry.key not in known:
            raise BatchFileError(
                f"{path}: line {entry.line} has a record for input {entry.key!r}, which the "
                "inputs file no longer has (written for other inputs?); choose another --out")
    if whole < len(data):
        with open(target, "r+b") as handle:
            handle.truncate(whole)
            os.fsync(handle.fileno())
    return Journal(latest, canonical and len(latest) == len(known))


def load(path: str | os.PathLike[str], entry: Entry) -> dict[str, Any]:
    """The whole record of an entry (its snapshot included)."""
    with open(path, "rb") as handle:
        handle.seek(entry.offset)
        record: dict[str, Any] = json.loads(handle.read(entry.length))
    return record


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a batch's output file, one per input (its latest), in input order.

    Use it to read a file a batch is still writing or one a kill interrupted (in finish order
    there, with superseded records). A torn last line is ignored, not cut.
    """
    target = Path(path)
    data = target.read_bytes()
    latest, _, _ = _scan(target, data)
    return [json.loads(data[e.offset:e.offset + e.length])
            for e in sorted(latest.values(), key=lambda e: e.line)]

"""The batch's files: input lines in, one output record per input line out, in input order.

Why keys are a line number plus a content hash: a rerun must skip what the last run finished
(resumability) but must not skip a line whose text changed since, and two identical lines are
two inputs. An output file that holds a record for a key the inputs no longer have was written
for other inputs: the batch refuses to mix them rather than guess.

Why the writer keeps input order with a prefix: records are appended only once every earlier
pending input has its record, so a batch killed at any point leaves an output file that is
the finished records in input order, at most followed by one torn line (a write cut short).
A rerun drops that torn line and appends the rest, so the file stays in input order and no
record is written twice.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..errors import ToolcycleError


class BatchFileError(ToolcycleError, ValueError):
    """The inputs or the output file cannot be used (a message says which line and why)."""


@dataclass(frozen=True, slots=True)
class InputLine:
    """One non-blank line of the inputs: where it is, its key, and what to run (or why not)."""

    line: int
    key: str
    value: Any = None
    id: Any = None
    problem: str | None = None


def line_key(line: int, text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{line}:{digest}"


def parse_input(line: int, text: str) -> InputLine:
    """A line is a JSON string (the user's message) or an object with ``input`` (a message, or
    a task input for a spec with an input schema) and an optional ``id`` copied to the output."""
    key = line_key(line, text)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return InputLine(line, key, problem=f"line {line}: not JSON ({exc})")
    if isinstance(data, str):
        return InputLine(line, key, value=data)
    if isinstance(data, dict) and "input" in data:
        return InputLine(line, key, value=data["input"], id=data.get("id"))
    return InputLine(line, key, problem=(f"line {line}: expected a JSON string or an object "
                                         f"with an 'input' field, got {type(data).__name__}"))


def read_inputs(path: str | os.PathLike[str]) -> list[InputLine]:
    """Every non-blank line of the inputs file, numbered from 1 as an editor shows them."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [parse_input(number, text.rstrip("\r\n"))
                    for number, text in enumerate(handle, start=1) if text.strip()]
    except FileNotFoundError as exc:
        raise BatchFileError(f"no such inputs file: {path}") from exc


def read_done(path: str | os.PathLike[str], inputs: list[InputLine]) -> set[str]:
    """The keys the output file already has a record for.

    A torn last line (a batch killed mid-write) is cut off the file; a bad line anywhere else,
    or a record whose key matches no input line, raises :class:`BatchFileError`.
    """
    target = Path(path)
    if not target.exists():
        return set()
    data = target.read_bytes()
    keep = len(data)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:  # no newline at the end: the last write was cut short
        keep = len(data) - len(lines[-1])
        lines.pop()
    known = {item.key for item in inputs}
    done: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        try:
            key = json.loads(raw)["key"]
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines) and raw.strip() and not _complete_json(raw):
                keep = sum(len(line) + 1 for line in lines[:-1])
                break
            raise BatchFileError(f"{path}: line {number} is not an output record") from exc
        if key not in known:
            raise BatchFileError(
                f"{path}: line {number} has a record for input {key!r}, which the inputs file "
                "no longer has (written for other inputs?); choose another --out")
        done.add(key)
    if keep < len(data):
        with open(target, "r+b") as handle:
            handle.truncate(keep)
    return done


def _complete_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def error_record(item: InputLine, message: str, status: str = "error") -> dict[str, Any]:
    return {"line": item.line, "key": item.key, "id": item.id, "status": status,
            "output": None, "termination": None, "usage": None, "run_id": None,
            "error": message}


@dataclass
class OrderedWriter:
    """Appends records in the order of ``pending`` (the inputs still to do), each as soon as
    every earlier pending input has its record; flushed after each append."""

    handle: TextIO
    pending: list[str]
    _waiting: dict[str, dict[str, Any]] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _next: int = 0
    written: int = 0

    def add(self, record: dict[str, Any]) -> bool:
        """Take a record; False (and nothing written) for a key that already has one."""
        key = record["key"]
        if key in self._seen:
            return False  # a retried task's second answer: the first one stands
        self._seen.add(key)
        self._waiting[key] = record
        lines: list[str] = []
        while self._next < len(self.pending) and self.pending[self._next] in self._waiting:
            done = self._waiting.pop(self.pending[self._next])
            lines.append(json.dumps(done, ensure_ascii=False, default=str) + "\n")
            self._next += 1
        if lines:
            self.handle.write("".join(lines))
            self.handle.flush()
            self.written += len(lines)
        return True

    @property
    def complete(self) -> bool:
        return self._next == len(self.pending)

    def missing(self) -> Iterator[str]:
        return iter(self.pending[self._next:])

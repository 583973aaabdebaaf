"""The batch's inputs: every non-blank line of a JSONL file, each read on its own.

Why a line is never trusted: an inputs file is data from anywhere (an export, a scrape, a
user's upload), and one bad line must cost that line, never the batch. Every way a line can be
unusable (not UTF-8, not JSON, nested deeper than :data:`MAX_DEPTH`, longer than the size limit,
not a string nor an object with ``input``) becomes an :class:`InputLine` with a ``problem``,
which the batch writes as a ``malformed`` record. Python's JSON decoder recurses per nesting
level, so a line of 100,000 ``[`` raises ``RecursionError`` (not ``ValueError``); it is caught
here, and a value that does parse is measured without recursion before anything else (the
agent, pydantic, the record's own ``json.dumps``) recurses into it.

Why keys are a line number plus a content hash: a rerun must skip what the last run finished
(resumability) but must not skip a line whose text changed since, and two identical lines are
two inputs. The hash is over the line's bytes, so a line that is not UTF-8 still has a key.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..errors import ToolcycleError

#: The deepest nesting of arrays and objects an input line may have.
MAX_DEPTH = 64
#: The longest input line read (bytes, end of line excluded); longer ones are malformed records.
MAX_LINE_BYTES = 8 * 1024 * 1024

_CHUNK = 1024 * 1024


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


def line_key(line: int, text: str | bytes) -> str:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return f"{line}:{hashlib.sha256(raw).hexdigest()[:16]}"


def parse_input(line: int, text: str | bytes) -> InputLine:
    """A line is a JSON string (the user's message) or an object with ``input`` (a message, or
    a task input for a spec with an input schema) and an optional ``id`` copied to the output."""
    key = line_key(line, text)
    try:
        decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    except UnicodeDecodeError as exc:
        return InputLine(line, key, problem=f"line {line}: not UTF-8 text ({exc.reason} at "
                                            f"byte {exc.start})")
    try:
        data = json.loads(decoded)
    except RecursionError:
        return InputLine(line, key, problem=f"line {line}: nested deeper than {MAX_DEPTH} "
                                            "levels")
    except ValueError as exc:
        return InputLine(line, key, problem=f"line {line}: not JSON ({exc})")
    if _deeper_than(data, MAX_DEPTH):
        return InputLine(line, key, problem=f"line {line}: nested deeper than {MAX_DEPTH} "
                                            "levels")
    if isinstance(data, str):
        return InputLine(line, key, value=data)
    if isinstance(data, dict) and "input" in data:
        return InputLine(line, key, value=data["input"], id=data.get("id"))
    shape = type(data).__name__ if not isinstance(data, dict) else "an object without 'input'"
    return InputLine(line, key, problem=(f"line {line}: expected a JSON string or an object "
                                         f"with an 'input' field, got {shape}"))


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects more than ``limit`` levels (iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def read_inputs(path: str | os.PathLike[str],
                max_line_bytes: int = MAX_LINE_BYTES) -> list[InputLine]:
    """Every non-blank line of the inputs file, numbered from 1 as an editor shows them."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below; open errors are the user's)
    except FileNotFoundError as exc:
        raise BatchFileError(f"no such inputs file: {path}") from exc
    except IsADirectoryError as exc:
        raise BatchFileError(f"the inputs are a folder, not a file: {path}") from exc
    with handle:
        found: list[InputLine] = []
        number = 0
        while True:
            number += 1
            raw, digest, size = _next_line(handle, max_line_bytes)
            if raw is None and digest is None:
                return found
            if digest is not None:
                found.append(InputLine(number, f"{number}:{digest}", problem=(
                    f"line {number}: {size} bytes, over the limit of {max_line_bytes}")))
            elif raw is not None and raw.strip():
                found.append(parse_input(number, raw))


def _next_line(handle: BinaryIO, limit: int) -> tuple[bytes | None, str | None, int]:
    """The next line without its end: ``(bytes, None, size)``, or for a line over ``limit``
    ``(None, its key's digest, size)`` read in chunks and never held; ``(None, None, 0)`` at
    the end of the file."""
    first = handle.readline(limit + 2)
    if not first:
        return None, None, 0
    if first.endswith(b"\n") or len(first) <= limit:
        body = first.rstrip(b"\r\n")
        if len(body) <= limit:
            return body, None, len(body)
    digest = hashlib.sha256()
    size = 0
    chunk = first
    while chunk:
        ended = chunk.endswith(b"\n")
        body = chunk.rstrip(b"\r\n") if ended else chunk
        digest.update(body)
        size += len(body)
        if ended:
            break
        chunk = handle.readline(_CHUNK)
    return None, digest.hexdigest()[:16], size

"""The per-query guards of the read-only SQL tool: what SQLite's own limits let through (rel-06).

``SQLITE_LIMIT_LENGTH`` caps every value a query builds, but three things escaped the caps:

- **time inside one step.** The deadline was checked by a progress handler every 10,000 VM
  instructions; an instruction that handles a 900 KB value takes a millisecond, so a query ran
  many times its timeout. It is now checked every :data:`PROGRESS_STEPS` instructions (about
  10 % slower on a pure VM loop). A few built-in functions do seconds of work in *one*
  instruction, where no handler runs: ``printf('%.*c', 2147483647, 'x')`` loops two billion
  times (8 s) before giving up, and ``instr``, ``replace`` and two-argument ``trim`` compare
  every pair of characters of their arguments (``trim`` of 900,000 characters by a 60,000
  character set: 123 s; ``instr`` 4 s). When the SQL names one of them, the connection gets
  guarded versions that refuse a width or precision above the value cap, or an argument pair
  whose product of lengths exceeds :data:`MAX_CALL_COST`, and otherwise run SQLite's own function
  on a private in-memory connection (same results, same value cap). Only a query whose SQL
  names one of them pays for the guard (a Python call per use).
- **temporary files.** A sort, ``DISTINCT`` or ``GROUP BY`` over more rows than fit in the
  page cache spills to temporary files (2.2 GB in one second-long query). SQLite has no
  per-connection cap, so the progress handler sums the SQLite temporary files (``etilqs_*``)
  the process opened since the query started (``/proc/self/fd``, Linux) every
  :data:`TEMP_PROBE_INTERVAL_S` and stops the query past ``max_temp_bytes``. Concurrent queries
  in one process count each other's files: the cap is conservative, never lax. Elsewhere only
  the deadline bounds them.
- **result size**, capped by the caller as rows are fetched (see ``SQLiteDatabase.query``).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable
from typing import Any, NoReturn

#: VM instructions between two deadline checks (a Python call each: keep it cheap).
PROGRESS_STEPS = 100
#: Seconds between two sums of the temporary files (listing /proc/self/fd takes ~50 us).
TEMP_PROBE_INTERVAL_S = 0.01
#: The largest product of argument lengths a guarded function may get, about 10-50 ms of
#: work each: instr and replace compare with memcmp (~1e11 characters/s, measured), trim
#: tests each character against the whole set (~4e8/s). 1 MB searched for a 1,000-character
#: text, or trimmed by a 20-character set, still runs.
MAX_CALL_COST = {"instr": 1_000_000_000, "replace": 1_000_000_000,
                 "trim": 20_000_000, "ltrim": 20_000_000, "rtrim": 20_000_000}

_FD_DIR = "/proc/self/fd"
TEMP_PROBE_AVAILABLE = os.path.isdir(_FD_DIR)
_TEMP_PREFIX = "etilqs_"  # SQLite's name for its temporary files (SQLITE_TEMP_FILE_PREFIX)

#: Functions that do unbounded work in one VM instruction, and their argument counts.
_COSTLY: dict[str, tuple[int, ...]] = {
    "printf": (-1,), "format": (-1,), "instr": (2,), "replace": (3,),
    "trim": (1, 2), "ltrim": (1, 2), "rtrim": (1, 2),
}
#: A function is called by its name as written in the SQL (quoted or not, any case).
_COSTLY_NAME = re.compile(r"(?i)\b(?:" + "|".join(_COSTLY) + r")\b")
#: One printf conversion: flags, width, precision (digits or ``*``), length, type.
_CONVERSION = re.compile(r"%[-+ #0!,]*(\*|\d+)?(?:\.(\*|\d+))?(?:ll|l)?(.)?", re.DOTALL)
_LEADING_INT = re.compile(r"\s*[-+]?\d+")


class QueryGuard:
    """The deadline, the temporary-file cap and the guarded functions of one query.

    ``stop`` holds the error to raise when a guard stopped the query (SQLite itself only
    reports "interrupted" or "user-defined function raised exception").
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        sql: str,
        *,
        timeout: float,
        max_value_bytes: int,
        max_temp_bytes: int,
        errors: Callable[[str, int], Exception],
    ) -> None:
        self.stop: Exception | None = None
        self._errors = errors  # (kind, figure) -> the exception the caller raises
        self._deadline = time.monotonic() + timeout
        self._timeout = timeout
        self.max_value_bytes = max_value_bytes
        self._max_temp_bytes = max_temp_bytes
        self._baseline = _temp_files() if TEMP_PROBE_AVAILABLE else None
        self._next_probe = time.monotonic() + TEMP_PROBE_INTERVAL_S
        self._helper: sqlite3.Connection | None = None
        self._statements: dict[tuple[str, int], str] = {}
        conn.set_progress_handler(self._progress, PROGRESS_STEPS)
        if _COSTLY_NAME.search(sql):
            for name, counts in _COSTLY.items():
                for count in counts:
                    conn.create_function(name, count, self._guarded(name), deterministic=True)

    def close(self) -> None:
        if self._helper is not None:
            self._helper.close()

    # -- progress handler --------------------------------------------------------------------

    def _progress(self) -> int:
        now = time.monotonic()
        if now > self._deadline:
            return self._halt("timeout", 0)
        if self._baseline is not None and now >= self._next_probe:
            self._next_probe = now + TEMP_PROBE_INTERVAL_S
            used = sum(size for key, size in _temp_files().items() if key not in self._baseline)
            if used > self._max_temp_bytes:
                return self._halt("temp", used)
        return 0

    def _halt(self, kind: str, figure: int) -> int:
        if self.stop is None:
            self.stop = self._errors(kind, figure)
        return 1

    # -- guarded functions ---------------------------------------------------------------------

    def _guarded(self, name: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            if name in ("printf", "format"):
                width = _widest_field(args)
                if width > self.max_value_bytes:  # SQLite would loop, then give NULL
                    self.too_big()
            elif len(args) >= 2:
                cost = _length(args[0]) * _length(args[1])
                if cost > MAX_CALL_COST[name]:
                    self._halt(f"costly {name}", cost)
                    raise ValueError(f"{name}() on arguments this long is refused")
            fast = _FAST.get(name)
            if fast is not None and all(isinstance(a, str) for a in args):
                return fast(self, *args)
            return self._builtin(name, args)

        return call

    def too_big(self) -> NoReturn:
        """Stop the query: a value would pass the cap (raised inside a guarded function)."""
        self._halt("too big", self.max_value_bytes)
        raise ValueError("a value would be larger than the cap")

    def _builtin(self, name: str, args: tuple[Any, ...]) -> Any:
        """SQLite's own function, on a private in-memory connection with the same value cap."""
        if self._helper is None:
            self._helper = sqlite3.connect(":memory:", check_same_thread=False)
            self._helper.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_value_bytes)
        key = (name, len(args))
        statement = self._statements.get(key)
        if statement is None:
            statement = self._statements[key] = f"SELECT {name}({', '.join('?' * len(args))})"
        try:
            return self._helper.execute(statement, args).fetchone()[0]
        except sqlite3.DataError:  # "string or blob too big": the value cap
            self.too_big()
            raise


def _instr(_guard: QueryGuard, text: str, part: str) -> int:
    return text.find(part) + 1  # SQLite counts characters from 1; 0: not found


def _replace(guard: QueryGuard, text: str, old: str, new: str) -> str:
    if not old:  # SQLite leaves the text as it is; Python would insert between characters
        return text
    count = text.count(old) if len(new) > len(old) else 0
    if len(text) + count * (len(new) - len(old)) > guard.max_value_bytes:
        guard.too_big()  # decided before the string is built
    result = text.replace(old, new)
    if len(result) * 4 > guard.max_value_bytes and len(result.encode()) > guard.max_value_bytes:
        guard.too_big()
    return result


def _trim(strip: Callable[[str, str], str]) -> Callable[..., str]:
    def trim(_guard: QueryGuard, text: str, chars: str = " ") -> str:
        return strip(text, chars)  # SQLite trims spaces only by default, not all whitespace

    return trim


#: Python versions of the guarded comparisons, for text arguments (the common case): the same
#: results as SQLite's, without a call to the private connection (about 10x faster per row).
_FAST: dict[str, Callable[..., Any]] = {
    "instr": _instr, "replace": _replace,
    "trim": _trim(str.strip), "ltrim": _trim(str.lstrip), "rtrim": _trim(str.rstrip),
}


def _widest_field(args: tuple[Any, ...]) -> int:
    """The largest width or precision a printf call asks for (``*`` reads an argument)."""
    if not args or not isinstance(args[0], str | bytes):
        return 0
    fmt = args[0] if isinstance(args[0], str) else args[0].decode("utf-8", "replace")
    position, widest = 1, 0
    for match in _CONVERSION.finditer(fmt):
        width, precision, kind = match.groups()
        if kind == "%":
            continue
        for part in (width, precision):
            if part == "*":
                widest = max(widest, _as_int(args[position] if position < len(args) else 0))
                position += 1
            elif part:
                widest = max(widest, int(part))
        position += kind != "n"  # every conversion but %n takes a value
    return widest


def _as_int(value: Any) -> int:
    """The magnitude SQLite reads from a ``*`` argument (sqlite3_value_int64)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        found = _LEADING_INT.match(value)
        return abs(int(found.group())) if found else 0
    if isinstance(value, float):
        return abs(int(value)) if value == value and abs(value) != float("inf") else 2**63
    return abs(value) if isinstance(value, int) else 0


def _length(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes) else 32


def _temp_files() -> dict[tuple[int, int], int]:
    """Size of each SQLite temporary file this process has open, by (device, inode)."""
    found: dict[tuple[int, int], int] = {}
    try:
        names = os.listdir(_FD_DIR)
    except OSError:
        return found
    for name in names:
        path = f"{_FD_DIR}/{name}"
        try:
            if _TEMP_PREFIX in os.readlink(path):
                info = os.stat(path)
                found[(info.st_dev, info.st_ino)] = info.st_size
        except OSError:  # closed meanwhile
            continue
    return found

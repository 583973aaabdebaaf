"""Read-only query tools over SQLite databases: one tool per database.

The common production agent answers from several databases and must be free to try one, see
no rows, and try another, without any chance of changing them. :func:`sql_tools` gives it one
``query_<name>`` tool per database whose description carries the database's schema (so the
model can write SQL without a round trip) and which runs one parameterized ``SELECT``.

Read-only is enforced three times over, so that no single mistake opens a hole:
the file is opened with the ``mode=ro`` URI, ``PRAGMA query_only`` is on, and an authorizer
allows only reading actions (``SELECT``, reading columns, functions, recursive CTEs and a
handful of read-only pragmas). Writes, DDL, ``ATTACH`` (and so ``VACUUM INTO``), pragma
assignments, the functions that reach outside the database (``load_extension``, and
``fts3_tokenizer``, which reads and sets raw C pointers) and more than one statement per call
are rejected with a :class:`ReadOnlyViolation` naming what was refused; the agent loop turns it
into an error observation the model can read and correct.

Resources are capped per query (rel-06; :mod:`toolcycle.rag._sql_guard` says how): time (a
deadline checked every 100 VM instructions, and guarded versions of the functions that can
spend seconds in one instruction), the size of every string or blob a query builds
(``SQLITE_LIMIT_LENGTH``: ``printf('%.*c', 900000000, 'x')`` would otherwise allocate a
gigabyte), the temporary files a sort or ``GROUP BY`` spills, and the result, in rows and in
bytes.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolcycleError
from ..tools import Tool
from ._sql_guard import QueryGuard

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,40}\Z")  # \Z: "$" allows a final newline

#: Pragmas that only read (e.g. ``PRAGMA table_info(orders)``); every other pragma is refused.
READ_ONLY_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
     "foreign_key_list", "database_list", "collation_list", "function_list"}
)

#: Functions refused even inside a SELECT: they load code or hand out and accept C pointers.
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})

_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}

_ACTION_NAMES = {
    value: name.removeprefix("SQLITE_")
    for name, value in vars(sqlite3).items()
    if name.startswith("SQLITE_") and isinstance(value, int) and name not in (
        "SQLITE_OK", "SQLITE_DENY", "SQLITE_IGNORE") and not name.startswith("SQLITE_LIMIT")
    and value < 64
}


class ReadOnlyViolation(ToolcycleError, ValueError):
    """A statement tried to do more than read one database."""


@dataclass(frozen=True, slots=True)
class QueryResult:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool

    def to_dict(self, database: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "database": database,
            "columns": self.columns,
            "rows": self.rows,
            "row_count": len(self.rows),
            "truncated": self.truncated,
        }
        if not self.rows:
            data["note"] = f"no rows matched in database {database!r}"
        return data


class SQLiteDatabase:
    """A read-only handle on one SQLite file.

    ``name``: how the agent knows it (the tool is ``query_<name>``); ``description``: what it
    holds, in words for the model; ``max_rows``: rows returned per query (more are flagged as
    truncated); ``timeout``: seconds a query may run before it is interrupted;
    ``max_value_bytes``: the largest string, blob or row a query may read or build (SQLite's
    ``SQLITE_LIMIT_LENGTH``; it bounds the memory one call can take); ``max_temp_bytes``: the
    temporary-file space a query may fill (sorts, ``DISTINCT``, ``GROUP BY``; enforced where
    ``/proc/self/fd`` exists, i.e. Linux); ``max_result_bytes``: the size of the rows returned
    (characters of text, bytes of blobs, 8 per number): later rows are dropped and the result
    is flagged as truncated.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        description: str = "",
        max_rows: int = 100,
        timeout: float = 5.0,
        max_value_bytes: int = 1_000_000,
        max_temp_bytes: int = 100_000_000,
        max_result_bytes: int = 2_000_000,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no SQLite database at {self.path}")
        self.name = name or self.path.stem
        if not _NAME.match(self.name):
            raise ValueError(
                f"database name {self.name!r} must start with a letter and use only letters, "
                "digits and underscores (it becomes a tool name)"
            )
        if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
            raise ValueError(f"max_rows must be a positive integer, got {max_rows!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        for label, value in (("max_value_bytes", max_value_bytes),
                             ("max_temp_bytes", max_temp_bytes),
                             ("max_result_bytes", max_result_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        self.max_value_bytes = max_value_bytes
        self.max_temp_bytes = max_temp_bytes
        self.max_result_bytes = max_result_bytes
        self.description = description
        self.max_rows = max_rows
        self.timeout = timeout
        self._schema: str | None = None

    def schema(self) -> str:
        """The ``CREATE`` statements of its tables and views (read once, then cached)."""
        if self._schema is None:
            result = self.query(
                "SELECT sql FROM sqlite_schema WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' AND sql IS NOT NULL ORDER BY name"
            )
            self._schema = ";\n".join(str(row[0]) for row in result.rows) + ";"
        return self._schema

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> QueryResult:
        """Run one read-only statement with ``?`` (or ``:name``) parameters."""
        if not isinstance(sql, str) or not sql.strip():
            raise ReadOnlyViolation("the query is empty; send one SELECT statement")
        refused: list[str] = []
        conn = self._connect(refused)
        guard = QueryGuard(conn, sql, timeout=self.timeout, max_value_bytes=self.max_value_bytes,
                           max_temp_bytes=self.max_temp_bytes, errors=self._stopped)
        try:
            cursor = conn.execute(sql, params)
            columns = [d[0] for d in cursor.description or ()]
            rows, truncated = self._fetch(cursor)
        except sqlite3.ProgrammingError as exc:
            if "one statement" in str(exc):
                raise ReadOnlyViolation(
                    "only one SQL statement per call is allowed; remove the ';' and what "
                    "follows it, or make several calls"
                ) from None
            raise
        except sqlite3.DatabaseError as exc:
            if guard.stop is not None:
                raise guard.stop from None
            if refused:
                raise ReadOnlyViolation(
                    f"database {self.name!r} is read-only: {refused[0]} is not allowed; "
                    "only SELECT statements (and read-only pragmas) run"
                ) from None
            if "interrupted" in str(exc):
                raise TimeoutError(
                    f"query on {self.name!r} ran longer than {self.timeout} s and was stopped"
                ) from None
            if "too big" in str(exc):
                raise self._stopped("too big", self.max_value_bytes) from None
            raise
        finally:
            guard.close()
            conn.close()
        return QueryResult(columns, rows, truncated)

    def _fetch(self, cursor: sqlite3.Cursor) -> tuple[list[list[Any]], bool]:
        """Up to ``max_rows`` rows and ``max_result_bytes`` in all; whether more were left."""
        rows: list[list[Any]] = []
        size = 0
        for row in iter(cursor.fetchone, None):
            size += sum(_value_size(value) for value in row)
            if len(rows) == self.max_rows or size > self.max_result_bytes:
                if not rows:
                    raise self._stopped("row", size)
                return rows, True
            rows.append(list(row))
        return rows, False

    def _stopped(self, kind: str, figure: int) -> Exception:
        """The error the model reads when a cap stopped its query: what, and what to do."""
        if kind == "timeout":
            return TimeoutError(
                f"query on {self.name!r} ran longer than {self.timeout} s and was stopped")
        if kind == "temp":
            return ValueError(
                f"query on {self.name!r} needed more than {self.max_temp_bytes} bytes of "
                "temporary files (sorting or grouping too much data) and was stopped; filter "
                "first or sort less")
        if kind == "row":
            return ValueError(
                f"one row of this result is larger than {self.max_result_bytes} bytes; select "
                "fewer or shorter columns (substr(), length())")
        if kind.startswith("costly"):
            return ValueError(
                f"{kind.removeprefix('costly ')}() on arguments this long would run for "
                "seconds in one step; use shorter arguments")
        return ValueError(
            f"a string or blob in this query is larger than {self.max_value_bytes} "
            "bytes; select less (substr(), length()) instead")

    def as_tool(self) -> Tool[Any]:
        """The ``query_<name>`` tool: its description holds the schema; errors go to the model."""
        about = f" It holds {self.description.rstrip('.')}." if self.description else ""
        description = (
            f"Run one read-only SQL query (SQLite dialect) on the {self.name!r} database."
            f"{about} Only SELECT; pass values through `params` with ? placeholders. "
            f"An empty result means this database has no matching rows.\n"
            f"Schema:\n{self.schema()}"
        )
        parameters = {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "One SELECT statement."},
                "params": {
                    "type": "array",
                    "items": {"anyOf": [{"type": "string"}, {"type": "number"},
                                        {"type": "boolean"}, {"type": "null"}]},
                    "description": "Values for the ? placeholders, in order.",
                },
            },
            "required": ["sql"],
            "additionalProperties": False,
        }

        def run_query(sql: str, params: list[Any] | None = None) -> dict[str, Any]:
            return self.query(sql, params or ()).to_dict(self.name)

        return Tool.from_schema(f"query_{self.name}", description, parameters, run_query)

    def _connect(self, refused: list[str]) -> sqlite3.Connection:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.max_value_bytes)

        def authorize(action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
            if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
                refused.append(f"the function {arg2}()")
                return sqlite3.SQLITE_DENY
            if action in _ALLOWED_ACTIONS:
                return sqlite3.SQLITE_OK
            # these pragmas have no setting form: their argument is a table or index name
            if action == sqlite3.SQLITE_PRAGMA and arg1 in READ_ONLY_PRAGMAS:
                return sqlite3.SQLITE_OK
            what = _ACTION_NAMES.get(action, f"action {action}")
            refused.append(what + (f" {arg1}" if arg1 else "") + (f" ({arg2})" if arg2 else ""))
            return sqlite3.SQLITE_DENY

        conn.set_authorizer(authorize)
        return conn


def _value_size(value: Any) -> int:
    """What one value adds to a result: characters of text, bytes of a blob, 8 otherwise."""
    return len(value) if isinstance(value, str | bytes) else 8


def sql_tools(
    databases: Iterable[SQLiteDatabase | str | Path] | Mapping[str, str | Path],
) -> list[Tool[Any]]:
    """One read-only ``query_<name>`` tool per database.

    Accepts :class:`SQLiteDatabase` objects (to set descriptions and limits), paths (the name
    is the file's stem) or a mapping of name to path.
    """
    if isinstance(databases, Mapping):
        handles = [SQLiteDatabase(path, name=name) for name, path in databases.items()]
    else:
        handles = [d if isinstance(d, SQLiteDatabase) else SQLiteDatabase(d) for d in databases]
    names = [h.name for h in handles]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two databases share the name(s) {duplicates}; name them apart")
    return [h.as_tool() for h in handles]

"""The one place that reads a store location: a SQLite path, ``sqlite:///`` or ``postgresql://``.

Every store (traces, playbook, conversations, consumed snapshots) is opened from a location a
user wrote in code, a CLI flag or an environment variable. Reading it in one place means one
set of spellings everywhere and one error for a location nobody can open:

- a path (``str`` or ``os.PathLike``), ``~`` expanded: a SQLite file; ``":memory:"`` a
  database private to one connection;
- ``sqlite:///relative.db`` or ``sqlite:////absolute/path.db`` (SQLAlchemy's spelling: what
  follows the third slash is the path), ``sqlite://`` alone: in memory;
- ``postgresql://...`` or ``postgres://...``: a PostgreSQL database (psycopg 3, the
  ``postgres`` extra), passed to the driver as written.

Any other ``scheme://`` is refused with a :class:`~toolcycle.errors.ConfigurationError` rather
than taken for a file name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigurationError
from .postgres import is_postgres_url, safe_url

Engine = Literal["sqlite", "postgresql"]
MEMORY = ":memory:"
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where a store lives: ``engine`` and its ``target`` (a file path, or the URL)."""

    engine: Engine
    target: str

    @property
    def in_memory(self) -> bool:
        return self.engine == "sqlite" and self.target == MEMORY

    def describe(self) -> str:
        """For messages and logs: the path, or the URL without its password."""
        return safe_url(self.target) if self.engine == "postgresql" else self.target


def location_problems(location: object) -> list[str]:
    """Why ``location`` names no store (empty when it does), for configuration checks."""
    try:
        store_location(location)
    except ConfigurationError as error:
        return error.problems
    return []


def store_location(location: object) -> StoreLocation:
    """``location`` read as a store location; raises :class:`ConfigurationError` if it is none."""
    if isinstance(location, StoreLocation):
        return location
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    if not isinstance(location, str) or not location.strip():
        raise ConfigurationError([f"a store location is a SQLite path, sqlite:/// or "
                                  f"postgresql:// URL, got {location!r}"], subject="store location")
    text = location.strip()
    if is_postgres_url(text):
        return StoreLocation("postgresql", text)
    scheme = _SCHEME.match(text)
    if scheme is None:
        return StoreLocation("sqlite", text if text == MEMORY else os.path.expanduser(text))
    if scheme.group(1).lower() != "sqlite":
        raise ConfigurationError([f"store location {safe_url(text)!r}: unknown scheme "
                                  f"{scheme.group(1)!r} (use a path, sqlite:/// or "
                                  "postgresql://)"], subject="store location")
    path = text[len(scheme.group(0)):]
    if not path:
        return StoreLocation("sqlite", MEMORY)
    if not path.startswith("/"):
        raise ConfigurationError([f"store location {text!r}: a sqlite URL has three slashes "
                                  "before the path (sqlite:///relative.db, "
                                  "sqlite:////absolute.db)"], subject="store location")
    path = path[1:]
    return StoreLocation("sqlite", MEMORY if path in ("", MEMORY) else os.path.expanduser(path))

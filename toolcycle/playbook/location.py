"""From where a playbook lives (a path, ``:memory:``, ``sqlite:///path`` or a
``postgresql://`` URL) to its store: what ``Playbook(store=...)`` and the CLI's ``--db`` take."""

from __future__ import annotations

from pathlib import Path

from ..stores.location import store_location
from .store import PlaybookStore, SQLitePlaybookStore


def open_store(location: str | Path | PlaybookStore) -> PlaybookStore:
    """A store from a location, or the store itself when given one.

    A ``postgresql://`` URL opens :class:`~toolcycle.playbook.postgres.PostgresPlaybookStore`
    (psycopg from the ``postgres`` extra is imported only then); anything else is a SQLite file
    (its folder created if missing) or ``:memory:``. The location is read by
    :func:`toolcycle.stores.store_location`, as every store's is.
    """
    if isinstance(location, PlaybookStore):
        return location
    where = store_location(location)
    if where.engine == "postgresql":
        from .postgres import PostgresPlaybookStore

        return PostgresPlaybookStore(where.target)
    if not where.in_memory:
        Path(where.target).parent.mkdir(parents=True, exist_ok=True)
    return SQLitePlaybookStore(where.target)

"""From where a playbook lives (a path, ``:memory:``, ``sqlite:///path`` or a
``postgresql://`` URL) to its store: what ``Playbook(store=...)`` and the CLI's ``--db`` take."""

from __future__ import annotations

from pathlib import Path

from ..stores.postgres import is_postgres_url
from .store import PlaybookStore, SQLitePlaybookStore


def open_store(location: str | Path | PlaybookStore) -> PlaybookStore:
    """A store from a location, or the store itself when given one.

    A ``postgresql://`` URL opens :class:`~toolcycle.playbook.postgres.PostgresPlaybookStore`
    (psycopg from the ``postgres`` extra is imported only then); anything else is a SQLite file
    (its folder created if missing) or ``:memory:``.
    """
    if isinstance(location, PlaybookStore):
        return location
    text = str(location)
    if is_postgres_url(text):
        from .postgres import PostgresPlaybookStore

        return PostgresPlaybookStore(text)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///"):]
    if text != ":memory:":
        Path(text).parent.mkdir(parents=True, exist_ok=True)
    return SQLitePlaybookStore(text)

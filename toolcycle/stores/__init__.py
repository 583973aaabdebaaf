"""The stores' shared ground (DESIGN.md §3): one connection protocol, SQLite and PostgreSQL
backends, and one place that reads a store location.

- :mod:`~toolcycle.stores.location`: ``store_location()`` reads a SQLite path, ``sqlite:///``
  or ``postgresql://`` URL into a :class:`StoreLocation`; every store opens through it.
- :mod:`~toolcycle.stores.connection`: :class:`SQLConnection`, the calls a store makes, and
  ``connect()``, which opens either engine with the store's schema created safely.
- :mod:`~toolcycle.stores.sqlite`, :mod:`~toolcycle.stores.postgres`: the engines' details
  (busy retries and WAL; psycopg, ``?`` placeholders, advisory locks).
- :mod:`~toolcycle.stores.ledger`: the record of consumed snapshots (a paused run resumes at
  most once), the first store built on the three above.

Nothing here is imported by ``import toolcycle``: SQLite and psycopg load when a store opens.
"""

from .connection import SQLConnection, connect
from .ledger import Consumption, SnapshotLedger, shared_ledger
from .location import StoreLocation, location_problems, store_location

__all__ = ["Consumption", "SQLConnection", "SnapshotLedger", "StoreLocation", "connect",
           "location_problems", "shared_ledger", "store_location"]

"""Moved to :mod:`toolcycle.stores.postgres` (kept for imports not yet moved; private)."""

from .stores.connection import SQLConnection
from .stores.postgres import (
    APPLICATION_NAME,
    PostgresConnection,
    connect,
    create_schema,
    describe,
    is_postgres_url,
    lock_statement,
    safe_url,
    to_pyformat,
)

__all__ = ["APPLICATION_NAME", "PostgresConnection", "SQLConnection", "connect",
           "create_schema", "describe", "is_postgres_url", "lock_statement", "safe_url",
           "to_pyformat"]

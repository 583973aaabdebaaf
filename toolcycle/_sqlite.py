"""Moved to :mod:`toolcycle.stores.sqlite` (kept for imports not yet moved; private)."""

from .stores.sqlite import (
    OPEN_RETRY_S,
    create_schema,
    is_busy,
    retry_busy,
    run_script,
    use_wal,
    write_once,
)

__all__ = ["OPEN_RETRY_S", "create_schema", "is_busy", "retry_busy", "run_script", "use_wal",
           "write_once"]

"""The ReAct record of a run and everything that keeps, shows or exports it.

- :mod:`.trace`: the data (``Trace``, ``Step``, ``ToolCallRecord``, ``AttemptRecord``);
- :mod:`.recorder`: rebuilds and stores a trace from a run's events;
- :mod:`.store`: SQLite persistence; :mod:`.redaction`: secrets out before storage;
- :mod:`.html`: the self-contained viewer page; :mod:`.otel`: OpenTelemetry spans.

Only :mod:`.trace` is imported with the package; the others load when used (SQLite, OTel).
"""

from .trace import AttemptRecord, Step, ToolCallRecord, Trace

__all__ = ["AttemptRecord", "Step", "ToolCallRecord", "Trace"]

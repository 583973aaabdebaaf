"""Per-tool reliability statistics from traces, and their one-paragraph form for a prompt.

A model that is told "lookup_a errors on 60 % of calls; lookup_b answers in 20 ms" stops trying
the broken tool first. The figures come from the tool calls recorded in traces (the store keeps
the most recent ones per tool), so they describe how the tools behave now.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from ..tracing.trace import Trace
from .store import ToolObservation

#: Error texts that mean "the call ran out of time" (the loop's timeout observation says so).
_TIMEOUT_MARKERS = ("timed out", "timeout", "deadline exceeded")


@dataclass(slots=True, frozen=True)
class ToolStats:
    """Reliability of one tool over its recorded calls."""

    tool: str
    calls: int
    errors: int
    timeouts: int
    p50_ms: float
    p95_ms: float

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    @property
    def timeout_rate(self) -> float:
        return self.timeouts / self.calls if self.calls else 0.0


def is_timeout(error: str | None) -> bool:
    return error is not None and any(m in error.lower() for m in _TIMEOUT_MARKERS)


def observations_from_trace(trace: Trace, domain: str = "") -> list[ToolObservation]:
    """The helper-tool calls of a trace (output and submit calls are not tools of the task)."""
    return [
        ToolObservation(
            tool=call.name,
            duration_ms=call.duration_ms,
            error=call.error is not None,
            timeout=is_timeout(call.error),
            domain=domain,
        )
        for call in trace.tool_calls
        if call.kind in ("tool", "unknown")
    ]


def compute_stats(observations: Iterable[ToolObservation]) -> dict[str, ToolStats]:
    """Calls, errors, timeouts and latency percentiles per tool."""
    by_tool: dict[str, list[ToolObservation]] = {}
    for obs in observations:
        by_tool.setdefault(obs.tool, []).append(obs)
    return {name: _stats_of(name, rows) for name, rows in sorted(by_tool.items())}


def _stats_of(name: str, rows: list[ToolObservation]) -> ToolStats:
    durations = sorted(r.duration_ms for r in rows)
    return ToolStats(
        tool=name,
        calls=len(rows),
        errors=sum(r.error for r in rows),
        timeouts=sum(r.timeout for r in rows),
        p50_ms=_percentile(durations, 50),
        p95_ms=_percentile(durations, 95),
    )


def _percentile(sorted_values: list[float], pct: int) -> float:
    if not sorted_values:
        return 0.0
    if len(sorted_values) == 1:
        return sorted_values[0]
    cuts = statistics.quantiles(sorted_values, n=100, method="inclusive")
    return cuts[pct - 1]


def render_stats(
    stats: dict[str, ToolStats],
    tool_names: Iterable[str] | None = None,
    *,
    relevant: Iterable[str] | None = None,
    min_calls: int = 3,
    bad_error_rate: float = 0.3,
) -> str:
    """Prompt advice from the statistics: which tools to prefer and which often fail.

    Only tools with at least ``min_calls`` calls are judged, and only tools the agent has are
    mentioned. Timeouts are said of any such tool (they are the tool's fault); error rates only
    of the ``relevant`` tools (those of the strategies shown), because most errors come from
    the model's arguments, and naming unrelated failing tools makes small models call them
    (measured: bench/learning.py with qwen2.5-coder-0.5b). Returns "" when there is nothing
    worth saying, so no tokens are spent on it.
    """
    names = set(tool_names) if tool_names is not None else set(stats)
    wanted = set(relevant) if relevant is not None else names
    judged = [s for name, s in stats.items() if name in names and s.calls >= min_calls]
    lines: list[str] = []
    reliable = [s.tool for s in judged if s.error_rate == 0.0 and s.tool in wanted]
    for s in sorted(judged, key=lambda s: -s.error_rate):
        if s.timeout_rate >= bad_error_rate:
            lines.append(
                f"- {s.tool} often times out ({s.timeouts}/{s.calls} calls, "
                f"p95 {s.p95_ms:.0f} ms)."
            )
        elif s.error_rate >= bad_error_rate and s.tool in wanted:
            lines.append(f"- {s.tool} often fails ({s.errors}/{s.calls} calls returned errors).")
    if lines and reliable:
        lines.insert(0, f"- Reliable tools: prefer {', '.join(sorted(reliable))}.")
    return "Tool reliability from earlier runs:\n" + "\n".join(lines) if lines else ""


def format_table(stats: dict[str, ToolStats]) -> str:
    """A plain table for the CLI."""
    header = f"{'tool':<28} {'calls':>6} {'errors':>7} {'err %':>6} {'p50 ms':>8} {'p95 ms':>8}"
    rows = [header, "-" * len(header)]
    for s in stats.values():
        rows.append(
            f"{s.tool:<28} {s.calls:>6} {s.errors:>7} {100 * s.error_rate:>5.0f}% "
            f"{s.p50_ms:>8.1f} {s.p95_ms:>8.1f}"
        )
    return "\n".join(rows)

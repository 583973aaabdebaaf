"""Per-tool reliability statistics from traces, and their one-paragraph form for a prompt.

A model that is told "lookup_a errors on 60 % of calls; lookup_b answers in 20 ms" stops trying
the broken tool first. The figures come from the tool calls recorded in traces (the store keeps
the most recent ones per tool), so they describe how the tools behave now.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..tracing.trace import LOOP_ERROR_TYPES, ToolCallRecord
from ..words import TIMEOUT_WORDS
from .evidence import CallEvidence, Repair
from .store import ToolObservation

#: The duration of a call nobody timed (one a routine made: a trace times the routine's call
#: alone): counted in its tool's calls and misses, not in its latency.
UNTIMED = -1.0


@dataclass(slots=True, frozen=True)
class ToolStats:
    """Reliability of one tool over its recorded calls."""

    tool: str
    calls: int
    errors: int
    timeouts: int
    p50_ms: float
    p95_ms: float
    #: calls that returned nothing (``[]``, ``{}``, "No results.")
    empties: int = 0
    #: tools that answered after this one missed, most frequent first
    alternatives: tuple[tuple[str, int], ...] = field(default=())
    #: calls whose duration is known (the percentiles' sample): not those routines made
    timed: int = 0

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    @property
    def misses(self) -> int:
        """Calls that gave the run nothing: errors and empty results."""
        return self.errors + self.empties

    @property
    def miss_rate(self) -> float:
        return self.misses / self.calls if self.calls else 0.0

    @property
    def alternative(self) -> str:
        """The tool that most often answered when this one missed ("" when none did)."""
        return self.alternatives[0][0] if self.alternatives else ""

    @property
    def timeout_rate(self) -> float:
        return self.timeouts / self.calls if self.calls else 0.0


def is_timeout(error: str | None) -> bool:
    """Whether a pitfall's stored error class is a timeout's (the words of the lesson's own
    detail, as :func:`timed_out` recorded it); a call is judged by :func:`timed_out`."""
    return error is not None and any(m in error.lower() for m in TIMEOUT_WORDS)


def timed_out(call: ToolCallRecord) -> bool:
    """Whether the call timed out, as the loop recorded it (``error_type`` ``"timeout"``:
    the tool's own deadline), or as the tool's exception's class says (``ReadTimeout``,
    ``TimeoutError`` from a client inside it). Never read from the loop's wording of the
    error; a tool's own message (an MCP server's, say) is its evidence, read with the
    words of :mod:`toolcycle.words`."""
    kind = call.error_type
    if kind is None:
        return False
    if kind == "timeout" or "timeout" in kind.lower():
        return True
    return kind not in LOOP_ERROR_TYPES and is_timeout(call.error)


def tool_observations(calls: Iterable[CallEvidence], repairs: Mapping[int, Repair],
                      domain: str = "") -> list[ToolObservation]:
    """A run's tool calls (``calls`` from :func:`~.evidence.classify`: no output or submit
    calls), with their misses and the alternative that answered after each.

    ``repairs`` are the run's repairs by the index of the missed call, as
    :func:`~.reflector.analyse` found them: "another tool answered" only in a run that got the
    answer right, and only a tool that held it. Taken from the next call that returned
    something, the statistics would recommend whatever a failed run or a detour called next
    ("X often fails; when it did, Y answered: use Y instead", Y being the lookup that
    gave X's argument, not an alternative to X): the same defect the lessons are kept free of.
    """
    rows = []
    for c in calls:
        repair = repairs.get(c.index) if c.status in ("error", "empty") else None
        rows.append(ToolObservation(
            tool=c.call.name, duration_ms=c.call.duration_ms, error=c.status == "error",
            timeout=timed_out(c.call), domain=domain, empty=c.status == "empty",
            alternative=repair.via if repair is not None and repair.kind == "alternative"
            else "",
        ))
    return rows


def step_observations(calls: Iterable[CallEvidence], domain: str = "") -> list[ToolObservation]:
    """The calls stand-ins made inside ``calls`` (a routine's, a repair's or a fallback's), as
    they noted them on each call's record (``ToolCallRecord.stand_in``).

    A trace times the stand-in's call, not its steps: a step counts in its tool's calls and
    misses but not in its latency (:data:`UNTIMED`), except a timed-out step, which was given
    its timeout. A failed step whose next step answered names it as the alternative (a
    fallback's failed call and its alternative's)."""
    rows: list[ToolObservation] = []
    for c in calls:
        steps = c.call.stand_in.steps if c.call.stand_in is not None else ()
        for i, step in enumerate(steps):
            after = steps[i + 1] if i + 1 < len(steps) else None
            missed = step.status != "ok"
            timed = (step.timeout_s or 0.0) * 1000 if step.status == "timeout" else 0.0
            rows.append(ToolObservation(
                tool=step.tool, duration_ms=timed or UNTIMED,
                error=step.status in ("error", "timeout"), timeout=step.status == "timeout",
                domain=domain, empty=step.status == "empty",
                alternative=after.tool if missed and after is not None and after.status == "ok"
                and after.tool != step.tool else "",
            ))
    return rows


def compute_stats(observations: Iterable[ToolObservation]) -> dict[str, ToolStats]:
    """Calls, errors, timeouts and latency percentiles per tool."""
    by_tool: dict[str, list[ToolObservation]] = {}
    for obs in observations:
        by_tool.setdefault(obs.tool, []).append(obs)
    return {name: _stats_of(name, rows) for name, rows in sorted(by_tool.items())}


def _stats_of(name: str, rows: list[ToolObservation]) -> ToolStats:
    durations = sorted(r.duration_ms for r in rows if r.duration_ms >= 0)  # not UNTIMED
    return ToolStats(
        tool=name,
        calls=len(rows),
        errors=sum(r.error for r in rows),
        timeouts=sum(r.timeout for r in rows),
        p50_ms=_percentile(durations, 50),
        p95_ms=_percentile(durations, 95),
        empties=sum(r.empty and not r.error for r in rows),
        alternatives=tuple(Counter(r.alternative for r in rows if r.alternative).most_common()),
        timed=len(durations),
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
    recommended: Iterable[str] = (),
    min_calls: int = 3,
    bad_error_rate: float = 0.3,
) -> str:
    """Prompt advice from the statistics: which of the task's likely tools miss, and what to use.

    Only tools with at least ``min_calls`` calls are judged, only tools the agent has are
    mentioned, and only the ``relevant`` ones: the tools the task is likely to use (those of
    the strategies retrieved for it; all tools when None). A warning about an unrelated tool
    makes small models call it (measured: bench/learning.py with qwen2.5-coder-0.5b). A tool
    that misses (errors, timeouts, empty results) on ``bad_error_rate`` of its calls is
    named with the tool that answered when it missed, if the runs show one. ``recommended``
    tools (those a retrieved sequence strategy says to call) are not warned of: their misses
    came from other kinds of task, and the strategy is the more specific advice. Returns ""
    when there is nothing worth saying, so no tokens are spent on it.
    """
    names = set(tool_names) if tool_names is not None else set(stats)
    wanted = set(relevant) if relevant is not None else names
    skip = set(recommended)
    judged = [s for name, s in stats.items()
              if name in names and name in wanted and s.calls >= min_calls]
    lines: list[str] = []
    for s in sorted(judged, key=lambda s: (-s.miss_rate, s.tool)):
        if s.tool in skip or s.miss_rate < bad_error_rate:
            continue
        if s.timeout_rate >= bad_error_rate:
            what = f"often times out ({s.timeouts}/{s.calls} calls, p95 {s.p95_ms:.0f} ms)"
        elif s.error_rate >= bad_error_rate:
            what = f"often fails ({s.errors}/{s.calls} calls returned errors)"
        else:
            what = f"often returns nothing ({s.misses}/{s.calls} calls)"
        alternative = s.alternative if s.alternative in names else ""
        lines.append(f"- {s.tool} {what}" + (
            f"; when it did, {alternative} answered: use {alternative} instead." if alternative
            else "."
        ))
    missing = {s.tool for s in judged if s.miss_rate >= bad_error_rate}
    reliable = sorted((s for s in judged if s.misses == 0 and s.tool not in missing),
                      key=lambda s: (not s.timed, s.p50_ms, s.tool))  # untimed: last
    if lines and reliable:
        lines.insert(0, f"- Reliable tools (fastest first): prefer "
                        f"{', '.join(s.tool for s in reliable)}.")
    return "Tool reliability from earlier runs:\n" + "\n".join(lines) if lines else ""


def format_table(stats: dict[str, ToolStats]) -> str:
    """A plain table for the CLI."""
    header = (f"{'tool':<28} {'calls':>6} {'errors':>7} {'empty':>6} {'miss %':>6} "
              f"{'p50 ms':>8} {'p95 ms':>8}")
    rows = [header, "-" * len(header)]
    for s in stats.values():
        p50, p95 = (f"{s.p50_ms:.1f}", f"{s.p95_ms:.1f}") if s.timed else ("-", "-")
        rows.append(
            f"{s.tool:<28} {s.calls:>6} {s.errors:>7} {s.empties:>6} {100 * s.miss_rate:>5.0f}% "
            f"{p50:>8} {p95:>8}"
        )
    return "\n".join(rows)

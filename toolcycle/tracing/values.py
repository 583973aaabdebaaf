"""Recorded values as the trace viewer shows them: escaped, and numbers that may not be numbers.

A trace read back from a file or a shared store is untrusted: any field can hold any JSON
value (markup where an int is expected, NaN, 1e308, a dict). These helpers never raise on such
values and never let them reach the page unescaped; the CLI shares the time/duration format.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from .stand_in import StandIn, StepOutcome


def esc(value: object) -> str:
    """Any recorded value as escaped HTML text (quotes too, so it is safe in an attribute).

    Not only strings: an int field of a crafted trace can hold markup, a dict or a list.
    """
    from html import escape  # the viewer's need only: not loaded with every import

    return escape(value if isinstance(value, str) else str(value))


def finite(value: object) -> float | None:
    """A recorded number as a finite float; None for anything else (strings, NaN, inf...)."""
    if not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond float range
        return None
    return number if math.isfinite(number) else None


def num(value: object) -> float:
    """A recorded number to compute with; 0 when it is not one."""
    number = finite(value)
    return 0.0 if number is None else number


def amount(value: object) -> float:
    """A token count or duration for the chart: clamped to [0, 1e15], so sums stay finite."""
    return min(max(num(value), 0.0), 1e15)


def tally(value: object) -> str:
    """A count with thousands separators; a value that is not a number shows as "?"."""
    if isinstance(value, int):
        return f"{value:,}"
    number = finite(value)
    return "?" if number is None else f"{number:,.0f}"


def as_dict(value: object, key: str) -> dict[str, Any]:
    """A recorded mapping (termination, error); anything else is shown under ``key``."""
    return value if isinstance(value, dict) else {key: value}


def to_json(value: object) -> str:
    """Arguments or output as indented JSON, or their repr when they are not JSON data."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # non-string keys, circular references
        return repr(value)


def format_time(epoch: object) -> str:
    """Epoch seconds as a UTC timestamp (pages and the CLI show the same text)."""
    seconds = finite(epoch)
    if not seconds:
        return "unknown" if not epoch else "invalid time"
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):  # out of the platform's range
        return "invalid time"


def format_ms(value: object) -> str:
    """A duration in milliseconds, switching to seconds from one second on ("?" if no number)."""
    ms = finite(value)
    if ms is None:
        return "?"
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


def short(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def nice_max(value: float) -> float:
    """Round an axis maximum up to 1, 2, 2.5 or 5 times a power of ten (never zero)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for factor in (1, 2, 2.5, 5, 10):
        if value <= factor * magnitude:
            return float(factor * magnitude)
    return float(10 * magnitude)


def pause_rows(pause: object) -> list[tuple[Any, Any, Any, dict[str, Any] | None]]:
    """``(tool name, call id, arguments, answer or None)`` per call a recorded pause waited
    for; a pause of any other shape (a crafted or damaged trace) gives what can be read."""
    if not isinstance(pause, dict):
        return []
    answers = pause.get("answers")
    answers = answers if isinstance(answers, dict) else {}
    pending = pause.get("pending")
    rows = []
    for request in pending if isinstance(pending, list) else ():
        if not isinstance(request, dict):
            continue
        call_id = request.get("call_id")
        answer = answers.get(call_id) if isinstance(call_id, str) else None
        rows.append((request.get("tool_name"), call_id, request.get("arguments"),
                     answer if isinstance(answer, dict) else None))
    return rows


def approval_text(approval: object) -> str:
    """"approved by person", "denied by policy: reason": a recorded decision in words."""
    if not isinstance(approval, dict):
        return f"approval: {approval}"
    line = f"approval: {approval.get('decision')} by {approval.get('by')}"
    reason = approval.get("reason")
    return f"{line}: {reason}" if reason else line


def media_lines(media: object) -> list[str]:
    """Recorded media summaries (a prompt's, or a tool result's) as lines: type, size,
    digest, name; the trace holds no bytes (docs/media.md). A stored trace is read
    defensively: entries that are not what a run records are left out."""
    lines = []
    for item in media if isinstance(media, list) else ():
        if not isinstance(item, dict):
            continue
        size = item.get("bytes")
        fields = [str(item.get("media_type", "?")),
                  f"{size:,} bytes" if isinstance(size, int) else "? bytes",
                  f"sha256 {str(item.get('sha256', '?'))[:16]}"]
        if isinstance(item.get("name"), str):
            fields.append(item["name"])
        lines.append(", ".join(fields))
    return lines


def stand_in_text(stand_in: object) -> tuple[str, list[str]]:
    """What a stand-in did in place of a call, in words: a head and one line per step.

    ``("stand-in fallback for daily → weekly · failed", ["1. daily({"day": "x"}) error: bad
    day", "2. weekly({}) timeout after 5 s: ..."])``. The HTML page, ``toolcycle trace show``
    and ``Trace.render`` say the same words, each escaping them its own way. A stored trace is
    read defensively: a field of the wrong type is shown as its text, a step that is not one
    is left out.
    """
    if not isinstance(stand_in, StandIn):
        return f"stand-in {stand_in}", []
    head = f"stand-in {stand_in.kind} for {stand_in.tool}"
    if stand_in.alternative:
        head += f" → {stand_in.alternative}"
    ok = stand_in.ok
    head += " · " + ("ok" if ok is True else "failed" if ok is False else str(ok))
    steps = stand_in.steps if isinstance(stand_in.steps, tuple | list) else ()
    return head, [f"{n}. {_step_text(step)}" for n, step in
                  enumerate((s for s in steps if isinstance(s, StepOutcome)), 1)]


def _step_text(step: StepOutcome) -> str:
    """``tool(arguments) status``, the timeout a timed-out step was given, then its text."""
    try:
        arguments = json.dumps(step.arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # non-string keys, circular references
        arguments = repr(step.arguments)
    line = f"{step.tool}({arguments}) {step.status}"
    timeout = finite(step.timeout_s)
    if timeout is not None:
        line += f" after {timeout:g} s"
    return f"{line}: {step.text}" if step.text else line


def recorded_cost(usage_cost: object, metadata: object) -> Decimal | None:
    """A run's cost as recorded: a number set by hand in ``metadata["cost_usd"]`` (the slot
    for it before runs priced their requests) first, else its usage's (``None``: unknown)."""
    given = finite(metadata.get("cost_usd")) if isinstance(metadata, dict) else None
    if given is not None and given >= 0:
        return Decimal(str(given))
    return usage_cost if isinstance(usage_cost, Decimal) and usage_cost.is_finite() else None


def money(cost: Decimal | None) -> str:
    """A cost as the views show it: ``$0.000399``, ``$12.5``, ``$0`` (to the millionth of a
    dollar, trailing zeros dropped), or ``unknown``."""
    if cost is None:
        return "unknown"
    return "$" + f"{cost:,.6f}".rstrip("0").rstrip(".")


def unpriced(metadata: object) -> list[str]:
    """The models a trace says had no price (``metadata["unpriced_models"]``), as text."""
    names = metadata.get("unpriced_models") if isinstance(metadata, dict) else None
    return [str(n) for n in names[:20]] if isinstance(names, list) else []

"""The HTML trace viewer's view of tool approval: decision badges and pause panels.

Recorded values are escaped like everything else on the page; CSS classes come from a closed
set, so a crafted trace cannot borrow the page's classes.
"""

from __future__ import annotations

from .values import esc, format_ms, pause_rows, to_json


def approval_badge(approval: object) -> str:
    """"approved by person", "denied by policy": the class comes from a closed set."""
    if not isinstance(approval, dict):
        return f'<span class="badge approval">{esc(approval)}</span>'
    decision = approval.get("decision")
    css = {"approved": "approved", "denied": "denied"}.get(str(decision), "")
    return (f'<span class="badge approval {css}">{esc(decision)} by '
            f'{esc(approval.get("by"))}</span>')


def pause_block(pause: dict[str, object]) -> str:
    """The run paused here for a person's approval: what waited, what they answered."""
    rows = []
    for tool_name, call_id, arguments, answer in pause_rows(pause):
        verdict = approval_badge(answer) if answer is not None else (
            '<span class="badge warn">waiting</span>')
        reason = answer.get("reason") if answer is not None else None
        rows.append(
            f'<li><span class="name">{esc(tool_name)}</span> '
            f'<span class="id">{esc(call_id)}</span> {verdict}'
            f"<pre>{esc(to_json(arguments))}</pre>"
            + (f'<div class="reason">{esc(reason)}</div>' if reason else "") + "</li>")
    resumed = pause.get("resumed_at")
    paused_at = pause.get("paused_at")
    waited = (f"resumed after {format_ms((resumed - paused_at) * 1000.0)}"
              if isinstance(resumed, int | float) and isinstance(paused_at, int | float)
              else "not resumed")
    return (f'<div class="pause"><b>Paused for approval</b> <span class="meta">'
            f'{esc(waited)}</span><ul>{"".join(rows)}</ul></div>')

"""The HTML trace viewer's view of tool approval: decision badges and pause panels.

Recorded values are escaped like everything else on the page; CSS classes come from a closed
set, so a crafted trace cannot borrow the page's classes.
"""

from __future__ import annotations

from .values import esc, format_ms, to_json


def approval_badge(approval: dict[str, object]) -> str:
    """"approved by person", "denied by policy": the class comes from a closed set."""
    decision = approval.get("decision")
    css = {"approved": "approved", "denied": "denied"}.get(str(decision), "")
    return (f'<span class="badge approval {css}">{esc(decision)} by '
            f'{esc(approval.get("by"))}</span>')


def pause_block(pause: dict[str, object]) -> str:
    """The run paused here for a person's approval: what waited, what they answered."""
    answers = pause.get("answers")
    answers = answers if isinstance(answers, dict) else {}
    pending = pause.get("pending")
    rows = []
    for request in pending if isinstance(pending, list) else ():
        if not isinstance(request, dict):
            continue
        answer = answers.get(request.get("call_id"))
        verdict = approval_badge(answer) if isinstance(answer, dict) else (
            '<span class="badge warn">waiting</span>')
        reason = answer.get("reason") if isinstance(answer, dict) else None
        rows.append(
            f'<li><span class="name">{esc(request.get("tool_name"))}</span> '
            f'<span class="id">{esc(request.get("call_id"))}</span> {verdict}'
            f"<pre>{esc(to_json(request.get('arguments')))}</pre>"
            + (f'<div class="reason">{esc(reason)}</div>' if reason else "") + "</li>")
    resumed = pause.get("resumed_at")
    paused_at = pause.get("paused_at")
    waited = (f"resumed after {format_ms((resumed - paused_at) * 1000.0)}"
              if isinstance(resumed, int | float) and isinstance(paused_at, int | float)
              else "not resumed")
    return (f'<div class="pause"><b>Paused for approval</b> <span class="meta">'
            f'{esc(waited)}</span><ul>{"".join(rows)}</ul></div>')

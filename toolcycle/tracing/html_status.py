"""How the HTML viewer shows a run's status: the badge and the termination panel.

The colour is the first thing a reader takes in, so it follows :mod:`toolcycle.status`, not
whether the run returned: green only for ``success``; amber for an answer a limit forced or
cut short (``forced``, ``partial``), which exists but was never checked against the task; red
for a tool's error passed through as the answer, a failure and a crash. The panel says in
words what the badge means, with the limit that forced the answer.

A stored status is untrusted (a crafted trace file or database): it becomes a CSS class only
if it is a word of the vocabulary, and is shown escaped.
"""

from __future__ import annotations

from ..status import RETURNED_MEANINGS, RUN_STATUSES
from .trace import Trace
from .values import as_dict, esc

_STATUSES = frozenset(RUN_STATUSES)

#: Statuses whose panel is drawn as a warning, and as an error.
_WARN = frozenset({"forced", "partial", "ungrounded", "mismatched"})
_ERROR = frozenset({"tool_error", "failure", "crashed"})

_UNFINISHED = {
    "crashed": "none: the process that ran it ended without finishing the run; what follows "
    "is everything recorded up to then",
    "running": "none yet: the run is in progress (or its process died on another host)",
}


def status_class(status: object) -> str:
    """A known status, else "unknown": a recorded status becomes a CSS class, so it is a closed
    set (a crafted one could otherwise borrow any of the page's classes)."""
    return status if isinstance(status, str) and status in _STATUSES else "unknown"


def status_badge(status: object) -> str:
    safe = esc(status)
    return f'<span class="badge {status_class(status)}" data-status="{safe}">{safe}</span>'


def termination_panel(trace: Trace) -> str:
    status = status_class(trace.status)
    cls = ("panel error" if status in _ERROR else "panel warn" if status in _WARN
           else "panel")
    if not trace.termination:
        note = _UNFINISHED.get(status, "not recorded")
        return f'<div class="{cls}" id="termination"><b>Termination:</b> {note}</div>'
    term = as_dict(trace.termination, "reason")
    parts = [f"<b>Termination:</b> {esc(term.get('reason'))}"]
    if term.get("action"):
        parts.append(f"action {esc(term['action'])}")
    if term.get("limit"):
        parts.append(f"limit {esc(term['limit'])}")
    detail = f'<div class="sub">{esc(term["detail"])}</div>' if term.get("detail") else ""
    said = RETURNED_MEANINGS.get(status)
    meaning = f'<div class="meaning">{status_badge(status)} {said}</div>' if said else ""
    return f'<div class="{cls}" id="termination">{" · ".join(parts)}{detail}{meaning}</div>'

"""A tool result that holds nothing: one reading for the loop and the playbook.

Why one module: the run's grounding asks whether any tool found something to answer from
(:mod:`toolcycle.run.sources`), and the playbook whether a call found nothing (a dead end, a
routine's step, a fallback); read two ways, a page of nothing (``{"matches": null,
"total": 0}``) was nothing to the playbook and an answer's source to the grounding, and a
small model's "the reading is not available", after a failed call and that page, ended
``success``. The words that say "nothing" live in :mod:`toolcycle.words` with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from .words import COLLECTIONS, EMPTY_TEXT, ENVELOPE, PAGING, WENT_THROUGH


def is_empty_result(result: str | None) -> bool:
    """True when a tool's result holds nothing: no text, an empty JSON value or a "none" phrase.

    A JSON object counts as empty when every value in it is empty (``{"results": []}``), since
    that is how many APIs say "nothing": the keys are a schema, not data; so does a page of
    nothing, an empty collection beside counts of zero and paging fields (``{"matches": [],
    "count": 0}``, ``{"items": [], "total": 0, "page": 1}``, ``{"results": null, "count": 0}``),
    and an envelope saying "ok" about one (``{"status": "ok", "data": {"items": []}}``). A
    zero alone is an answer (``{"units_on_hand": 0}``), and so is an "ok" alone.
    """
    if result is None or not result.strip():
        return True
    if EMPTY_TEXT.match(result):
        return True
    try:  # (a stranger's tool may nest deeper than Python recurses: that holds something)
        return _empty_value(json.loads(result))
    except (ValueError, RecursionError):
        return False


def _empty_value(value: Any) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    if isinstance(value, dict):
        return all(_empty_value(v) for v in value.values()) or _empty_page(value)
    return False


def _empty_page(page: dict[Any, Any]) -> bool:
    """An empty collection beside counts of zero, paging fields and an envelope's "ok": a
    page of nothing. (An "ok" with no collection beside it is an answer: a health check.)"""
    collections = [v for k, v in page.items() if isinstance(v, (list, dict))
                   or (v is None and str(k).lower() in COLLECTIONS)]
    if not collections or not all(_empty_value(v) for v in collections):
        return False
    return all(isinstance(v, (list, dict)) or _empty_value(v) or str(k).lower() in PAGING
               or (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0)
               or (str(k).lower() in ENVELOPE and str(v).lower() in WENT_THROUGH)
               for k, v in page.items())

"""The legacy reader: the typed parts of lessons stored before playbooks kept them.

Until December 2026 a stored strategy (and each insight of a pending pattern) kept what the
code acts on only in words: a pitfall's repair in its advice ("X times out. Call Y(a)
instead.", "... Pass date like "01.05.2026".") and in its ``detail`` ("error class|kind:via:
argument:shape"), a sequence's first call and the tools it skips in its advice ("Call
find_booking(name), then ... Do not use web_search for this kind of task."). The fallback,
the reshaped call and the routine's line read them back out of that text, which broke
wherever a value held a character the wording uses (an error class with a ``|``, an argument
named ``trip.date``, an example in parentheses). Lessons now carry them typed
(:mod:`~toolcycle.playbook.parts`: ``repair``, ``error_class``, ``first_args``, ``skips``).

A playbook written before is upgraded once, when a store opens it (:func:`upgrade`, called
by :class:`~toolcycle.playbook.store.SQLitePlaybookStore` and the PostgreSQL store): each
old row's parts are derived here by reading its text exactly as the code then read it, and
written back, so that its lessons act as they did. This is the one module of the package
that reads advice text, kept apart so that it can go once no such playbook is left. What it
cannot read is left out (no repair, no first call, no tools to skip), as the old code then
acted on nothing either; a repair whose signature is stored but whose advice does not read
(hand-edited) keeps what its signature says.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from .formats import value_shape
from .parts import Argument, Rename, Repair
from .strategy import SKIP, skip_clause

#: The key every insight and strategy written since has (``None`` where it has no repair).
MARK = "repair"

_ARGUMENT = re.compile(r'\. Pass (?P<arg>[A-Za-z_][\w-]*) like "(?P<example>[^"\n]+)"\.$')
_FIRST_CALL = re.compile(r"^Call [\w.-]+\(([^()]*)\)")
_NAMED = re.compile(r'(?P<name>[^\s,"()]+)(?: like "(?P<example>[^"\n]*)")?')
_THEN = re.compile(r", then ([^()]*\([^()]*\))")
_SKIPPED_END = " for this kind of task."


class _Connection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...


Rows = list[tuple[str, dict[str, Any]]]


def rows_to_upgrade(conn: _Connection) -> tuple[Rows, Rows]:
    """The strategies and candidates of a playbook database (either store's tables) that
    hold lessons written before typed parts, by id or key, each upgraded (:func:`upgrade`);
    a row whose JSON is no object is left as it is."""
    strategies = []
    rows = conn.execute("SELECT id, data FROM strategies WHERE data NOT LIKE ?",
                        (f'%"{MARK}": %',)).fetchall()  # a key: quotes in values are escaped
    for sid, text in rows:
        data = _json_object(text)
        if data is not None and is_legacy(data):
            strategies.append((str(sid), upgrade(data)))
    candidates = []
    for key, text in conn.execute("SELECT key, data FROM candidates").fetchall():
        data = _json_object(text) or {}
        lists = [n for n in ("insights", "flows") if isinstance(data.get(n), list)]
        if any(is_legacy(i) for n in lists for i in data[n]):
            for n in lists:
                data[n] = [upgrade(i) if is_legacy(i) else i for i in data[n]]
            candidates.append((str(key), data))
    return strategies, candidates


def _json_object(text: object) -> dict[str, Any] | None:
    """A stored row's JSON object, or ``None`` where it is none (damaged: left alone)."""
    try:
        data = json.loads(str(text))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def is_legacy(data: object) -> bool:
    """Whether a stored insight or strategy predates its typed parts."""
    return isinstance(data, dict) and MARK not in data


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a stored insight or strategy, as a dict) with its typed parts derived from
    its text; never raises (a field of the wrong type reads as text that says nothing)."""
    out = dict(data)
    kind, advice, detail = (data.get(k) for k in ("kind", "advice", "detail"))
    advice = advice if isinstance(advice, str) else ""
    detail = detail if isinstance(detail, str) else ""
    tools = data.get("tools")
    tools = [t for t in tools if isinstance(t, str)] if isinstance(tools, list) else []
    out[MARK] = None
    if kind == "pitfall":
        error_class, _, signature = detail.partition("|")
        repair = _repair(tools, advice, signature)
        out["error_class"], out[MARK] = error_class, None if repair is None else repair.to_dict()
    elif kind == "sequence":
        out["first_args"] = [a.to_dict() for a in _first_args(advice)]
        out["skips"] = _skips(advice)
    return out


def _repair(tools: list[str], advice: str, signature: str) -> Repair | None:
    """A pitfall's repair from its signature (``kind:via:argument:shape``) and its advice."""
    tool = tools[0] if tools else ""
    kind, via, argument, shape = [*signature.split(":", 3), "", "", ""][:4]
    if not signature and len(tools) == 2:  # written before signatures: the advice said it
        kind, via = "alternative", tools[1]
    if kind == "argument":
        found = _ARGUMENT.search(advice)
        example = found["example"] if found is not None and found["arg"] == argument and (
            value_shape(found["example"]) == shape) else ""
        return Repair("argument", tool, argument=argument, example=example)
    if kind == "alternative" and via:
        single = re.search(rf"\. Call {re.escape(via)}\(([^()]*)\) instead\.$", advice)
        chain = re.search(rf"\. Call {re.escape(via)}\(([^()]*)\)((?:, then [^()]*\([^()]*\))+)"
                          r" instead\.$", advice)
        rename = Rename.parse(argument)  # "doctor>clinician", as the signature kept it
        argument = "" if rename is not None else argument
        if single is not None:
            return Repair("alternative", tool, via=via, argument=argument,
                          via_args=_names(single[1]), rename=rename)
        if chain is not None:
            return Repair("alternative", tool, via=via, argument=argument,
                          via_args=_names(chain[1]), then=tuple(_THEN.findall(chain[2])),
                          rename=rename)
        # no call of ``via`` the old reader knew: a lesson from before signatures had none;
        # a signature says the repair, if not (hand-edited advice) its arguments
        return Repair("alternative", tool, via=via, argument=argument,
                      rename=rename) if signature else None
    if kind == "prerequisite" and via:
        found = re.search(rf"call {re.escape(via)}\(([^()]*)\) first", advice)
        return Repair("prerequisite", tool, via=via, argument=argument,
                      via_args=_names(found[1] if found else ""))
    if kind == "schema":
        found = re.search(rf"^Call {re.escape(tool)}\(([^()]*)\) with no other", advice)
        return Repair("schema", tool, via_args=_names(found[1] if found else ""))
    return None


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in text.split(", ") if n)


def _first_args(advice: str) -> list[Argument]:
    """A sequence's first call's arguments as its advice wrote them ("Call x(name, date like
    "01.05.2026"), then ..."), where they read back to the same text."""
    found = _FIRST_CALL.match(advice)
    if found is None or not found[1]:
        return []
    args = [Argument(m["name"], m["example"] or "") for m in _NAMED.finditer(found[1])]
    return args if ", ".join(map(str, args)) == found[1] else []


def _skips(advice: str) -> list[str]:
    """The tools a sequence's advice says not to use, where they read back to its clause."""
    rest = advice.partition(SKIP)[2]
    tools = [t for t in rest.removesuffix(_SKIPPED_END).split(", ") if t]
    return tools if rest and SKIP + rest == skip_clause(tools) else []

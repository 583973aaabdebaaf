"""Two ideas tried on BFCL without a model and dropped (README.md here): leaving optional
values no source gives to the tool's default, and snapping a string to the one option its
parameter's description quotes that it abbreviates or extends ("F" for 'Fahrenheit').

    .venv/bin/python bench/runs/2026-12-08/bfcl47/tried.py optional
    .venv/bin/python bench/runs/2026-12-08/bfcl47/tried.py snap LOG.out ...

``optional``: on the ground truth of the four calling categories, the optional values a right
call must carry whose every accepted value no source gives (what dropping would break).
``snap``: on the ground truth, accepted values snapping would change to an unaccepted one;
and on the misses a ``--show`` log prints, how many snapping makes right.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # bench/, for bfcl_local

import bfcl_local as bfcl

from toolcycle.messages import Message, TextPart
from toolcycle.models.text.coverage import _DESCRIBED_OPTION
from toolcycle.models.text.invented import _leaves, _Sources

CALLING = ("simple_python", "multiple", "parallel", "parallel_multiple")


def truth(case: bfcl.Case) -> list[tuple[dict[str, Any], str, Any]]:
    """(the parameter's schema and whether it is required, its name, its accepted values)."""
    back = {v: k for k, v in case.to_bfcl.items()}
    out = []
    for call in case.answer:
        for name, args in call.items():
            tool = next(t for t in case.tools if t.name == back.get(name, name))
            props = tool.parameters.get("properties") or {}
            required = set(tool.parameters.get("required") or ())
            for parameter, accepted in args.items():
                schema = {**(props.get(parameter) or {}), "required": parameter in required}
                out.append((schema, parameter, accepted))
    return out


def optional() -> None:
    must = broken = 0
    for case in bfcl.cases(1000, CALLING):
        messages = [Message(m["role"], [TextPart(m["content"])]) for m in bfcl.question(case)]
        sources = _Sources.of(messages, case.tools)
        for schema, parameter, accepted in truth(case):
            if schema["required"] or "" in accepted:
                continue
            must += 1
            if not any(all(sources.gives(x) for _, x in _leaves(v, "")) for v in accepted):
                broken += 1
                print(case.entry["id"], parameter, accepted)
    print(f"optional values a right call must carry: {must}; none of whose accepted values "
          f"a source gives: {broken}")


def options(schema: dict[str, Any]) -> list[str]:
    described = schema.get("description") or ""
    return list(dict.fromkeys(next(g for g in m.groups() if g)
                              for m in _DESCRIBED_OPTION.finditer(described[:2000])))


def snapped(value: str, choices: list[str]) -> str:
    low = value.casefold().strip()
    if not low or any(c.casefold() == low for c in choices):
        return value
    near = [c for c in choices if c.casefold().startswith(low) or low.startswith(c.casefold())]
    return near[0] if len(near) == 1 else value


def snappable(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and "enum" not in schema and len(options(schema)) >= 2


def snap(logs: list[str]) -> None:
    changed = broken = 0
    for case in bfcl.cases(1000, CALLING):
        for schema, _, accepted in truth(case):
            if not snappable(schema):
                continue
            for value in (a for a in accepted if isinstance(a, str) and a):
                if (new := snapped(value, options(schema))) != value:
                    changed += 1
                    broken += new.casefold() not in {a.casefold() for a in accepted
                                                     if isinstance(a, str)}
    print(f"accepted values snapping changes: {changed}; to an unaccepted one: {broken}")
    every = {c.entry["id"]: c for c in bfcl.cases(1000, bfcl.CATEGORIES)}
    checker = bfcl._checker()
    misses = {}
    for log in logs:
        text = Path(log).read_text()
        for m in re.finditer(r"^--- \S+ (\S+): .*?\n  reply: .*?\n  calls: (.*?)\n", text,
                             re.M | re.S):
            misses[(log, m.group(1))] = json.loads(m.group(2))
    fixed = []
    for (log, entry), calls in misses.items():
        case = every[entry]
        back = {v: k for k, v in case.to_bfcl.items()}
        mended = []
        for call in calls:
            for name, args in call.items():
                tool = next((t for t in case.tools if t.name == back.get(name, name)), None)
                props = (tool.parameters.get("properties") or {}) if tool else {}
                mended.append({name: {
                    p: snapped(v, options(props[p])) if isinstance(v, str) and p in props
                    and snappable(props[p]) else v for p, v in args.items()}})
        if not bfcl.verdict(checker, case, bfcl.Outcome(mended, 0, 0.0)):
            fixed.append((Path(log).name, entry))
    print(f"misses read: {len(misses)}; right once snapped: {len(fixed)} {fixed}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["optional"]:
        optional()
    else:
        snap(sys.argv[2:])

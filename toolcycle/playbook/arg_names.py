"""Misnamed arguments: a call the schema refused only for its arguments' names, made with
the names the tool takes.

Why: on the held-out suites (ReAct, 1.5B) two of the three runs that missed SC-005 (the
primary tool down, the alternative known) had the alternative in hand and lost it to a name.
Clinic 12-03c: the learned sequence said "Call rota_board(clinician)", the model called
``rota_board({"doctor": "Abernethy"})`` (``doctor`` is the failing ``schedule_api``'s
parameter), was refused by the schema, and answered "No free slot available". Helpdesk
12-03b: ``status_page({"system": "CRM", "time_range": "30 days"})`` was refused for
``time_range`` four times over until the model guessed an uptime of 0 %. The value was
right both times; only its name was not one the tool takes.

So a call of a tool the playbook knows answers some kind of task (the stand-in of
:mod:`.respell` calls this) that the schema refuses is mended where its names allow one
reading only:

- a name the tool does not take, where exactly one required parameter is missing: its value
  goes to that parameter (``doctor`` -> ``clinician``);
- names the tool does not take, where no required parameter is missing: they are left out
  (``time_range``);
- anything else (two unknown names for one missing parameter, two missing parameters, a
  refusal about values, extra names a schema accepts): the refusal stands.

The mended arguments must pass the schema themselves, and the result says what was changed,
so the model can judge it. Only for read-only tools that need no approval (the stand-in's
scope): the model's values are passed unchanged, under other names or fewer of them (the
respelling stand-in may then ask once more, as for any call it stands in for).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..tools import Tool
from .carry import properties

#: In every mended call's first line: the model reads that its names were mended (the learner
#: reads the call's typed note, :class:`~.routine_result.StandIn`; :func:`renamed_call` reads
#: a stored trace's text, for analyses after the fact).
RENAMED = "under the names it takes"


def mended_names(tool: Tool[Any], arguments: Mapping[str, Any]
                 ) -> tuple[dict[str, Any], str] | None:
    """``arguments`` with their names mended and a note saying how (see the module
    docstring), or None where the names allow no single reading."""
    schema = tool.spec.parameters
    taken = properties(tool)
    unknown = [key for key in arguments if key not in taken]
    if not taken or not unknown:
        return None  # the refusal is about values
    required = schema.get("required")
    missing = [key for key in (required if isinstance(required, list) else [])
               if isinstance(key, str) and key in taken and key not in arguments]
    mended = {key: value for key, value in arguments.items() if key in taken}
    name = tool.name
    if len(missing) == 1 and len(unknown) == 1:
        (given,), (wanted,) = unknown, missing
        mended[wanted] = arguments[given]
        return mended, (f"{name} takes no {_named(given)}: called it with {wanted} "
                        f"{_shown(arguments[given])} {RENAMED}")
    if not missing and schema.get("additionalProperties", True) is False:
        them = ", ".join(map(_named, unknown))
        it = "them" if len(unknown) > 1 else "it"
        return mended, f"{name} takes no {them}: called it without {it} {RENAMED}"
    return None  # two readings, or a schema that refused no name


def renamed_call(tool: str, result: str | None) -> bool:
    """Whether a call of ``tool`` answered ``result`` with its names mended here."""
    first = (result or "").split("\n", 1)[0]
    return first.startswith(f"{tool} takes no ") and RENAMED in first


def _shown(value: Any) -> str:
    """A value as the note shows it: short, quoted when text."""
    text = f'"{value}"' if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def _named(key: str) -> str:
    """A name the model wrote, as the note shows it: it is untrusted text, so bounded."""
    return key if len(key) <= 40 else key[:39] + "…"

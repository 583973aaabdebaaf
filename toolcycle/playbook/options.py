"""The values a parameter takes, and the one a task names.

The principle: a tool that says which values a parameter takes, and a task that writes
exactly one of them, together settle the value; a model's other value for it (made up, or
copied from elsewhere) is a guess. So a failed or empty call made with a text value the task
does not write is made again with the one option the task names (:mod:`.respell` makes the
call; this module only reads). For example, a parameter described as "the team handling it
(network, desktop, security, ...)" and a task about "a desktop ticket": a small model that
passes "IT" or "Support" instead is guessing, and may do so until a limit ends the run.

Where the options come from, most certain first: the schema's own ``enum`` (typed, any
language); else a list the description spells out, in parentheses with commas ("(network,
desktop, security, ...)") or after the phrases :data:`~toolcycle.playbook.words.
OPTIONS_INTRO` names ("one of: P1, P2 or P3"). An option must be a whole word or phrase of the
task; none, or two of them, and the value stays the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..tools import Tool
from .carry import properties
from .words import OPTIONS_INTRO, OPTIONS_JOINERS

#: A parenthesised list: "(network, desktop, security, ...)", "(email | sms)".
_PARENTHESISED = re.compile(r"\(([^()]{1,300}[,|][^()]{1,300})\)")
#: A list after a phrase that introduces one, up to the end of the sentence.
_INTRODUCED = re.compile(rf"\b(?:{OPTIONS_INTRO})\s*:?\s*([^.;()\n]{{1,300}})", re.IGNORECASE)
_SPLIT = re.compile(r"\s*,\s*|" + "".join(rf"\s+{w}\s+|" for w in OPTIONS_JOINERS)
                    + r"\s*/\s*|\s*\|\s*")
#: An option is a short plain term: at most four words of letters, digits and dashes.
_OPTION = re.compile(r"[\w][\w-]*(?: [\w][\w-]*){0,3}")
#: How much of a description is read: lists sit in its first sentences.
_READ = 2000
_ELLIPSIS = {"...", "…", "etc", "etc.", "and so on"}


def described_options(description: str) -> list[str]:
    """The options ``description`` lists (as written, in order, once each); ``[]`` when it
    lists fewer than two."""
    found: list[str] = []
    text = description[:_READ]  # an MCP server's description is untrusted: bound the work
    for pattern in (_PARENTHESISED, _INTRODUCED):
        for match in pattern.finditer(text):
            items = [item.strip().strip("\"'`“”‘’").strip() for item in
                     _SPLIT.split(match.group(1))]
            terms = [item for item in items if item and item.lower() not in _ELLIPSIS]
            if len(terms) >= 2 and all(_OPTION.fullmatch(t) for t in terms):
                found += [t for t in terms if t.lower() not in {f.lower() for f in found}]
    return found if len(found) >= 2 else []


def parameter_options(spec: Mapping[str, Any]) -> list[str]:
    """The text values a parameter's schema takes: its ``enum`` where it has one (at least
    two plain options), else the options its description lists (:func:`described_options`)."""
    listed = spec.get("enum")
    if isinstance(listed, list):
        terms = [t for t in listed if isinstance(t, str) and _OPTION.fullmatch(t)]
        if len(terms) >= 2:
            return list(dict.fromkeys(terms))
    description = spec.get("description")
    return described_options(description) if isinstance(description, str) else []


def _says(prompt: str, term: str) -> bool:
    """Whether ``prompt`` writes ``term`` as a whole word or phrase (any case)."""
    words = [re.escape(w) for w in term.split()]
    return re.search(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", prompt, re.IGNORECASE) is not None


def named_options(arguments: Mapping[str, Any], tool: Tool[Any], prompt: str) -> dict[str, Any]:
    """``arguments`` with each text value the ``prompt`` does not write replaced by the one
    option its parameter's description lists that the prompt does write (see the module
    docstring); values with no such single option are kept."""
    out = dict(arguments)
    if not prompt:
        return out
    schema = properties(tool)
    for key, value in arguments.items():
        spec = schema.get(key)
        if not isinstance(value, str) or not value.strip() or not isinstance(spec, dict):
            continue
        if _says(prompt, value.strip()):
            continue
        named = [o for o in parameter_options(spec) if _says(prompt, o)]
        if len(named) == 1 and named[0].lower() != value.strip().lower():
            out[key] = named[0]
    return out

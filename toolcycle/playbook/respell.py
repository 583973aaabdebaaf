"""Respelled calls: a lookup that found nothing for the model's spelling of a name the task
wrote apart, asked again as the task wrote it.

Why: a small model writes the names it passes in the style of the identifiers it reads
(``status_page({"system": "file_share"})`` for "the file share"), while the data knows them as
people write them; a lookup that finds nothing may still answer an empty "ok" envelope, which
the model reads as the answer, and a right lesson ("Call status_page(system), then answer.")
ends in a wrong one. The run holds what the repair needs: the task's own words. So a call of a
tool a learned sequence uses that finds nothing or fails, where a text argument re-spells words
of the task (``file_share``, ``File-Share``: the same words, joined or cased apart,
:func:`~toolcycle.playbook.carry.respelled`), is made once more with the task's spelling, and
answers with that result where it found something, saying so. A text value the task does not
write at all, where the parameter's description lists options and the task names exactly one of
them, is replaced by that option the same way (:func:`named_options`: ``team`` "IT" for "a
low-priority desktop ticket", the description listing "network, desktop, security, ..."). Any
other outcome leaves the model's call standing, unchanged. A call the schema refuses only for
its arguments' names (``doctor`` where the tool takes ``clinician``) is made with the names the
tool takes where they allow one reading (:func:`mended_names`), before all this.

Only for tools that are ``read_only`` and need no approval (the model asked for one call; a
second that reads changes nothing), and only those a learned sequence calls or a pitfall
reshapes calls of (:mod:`.reshape`): the playbook knows they answer some kind of task, so an
empty result there is suspect. A reshaped call is made through (this call wraps it), so a
call with both a misformatted and a misnamed value is mended in both, in either order the
tool checks them. Offered with
``Playbook(routines=True)``, like reshaped calls (:mod:`.reshape`): the spelling itself
proves the repair applies, so it needs no showing.

Why one module: the three ways a call is made again as the tool takes it (the task's spelling,
the names the tool takes, the option the task names) make one stand-in, and read nothing but
the call, the tool's schema and the task.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .._observation import serialize_result
from ..context import RunContext
from ..tools import Tool, ToolArgumentsError, ToolPolicy
from ..words import OPTIONS_INTRO, OPTIONS_JOINERS, says
from .carry import invoke_step, properties, respelled
from .evidence import is_empty_result
from .routine_result import StandIn, note
from .strategy import Strategy

#: In every result a respelled call gives (the learner reads the call's typed note instead,
#: :class:`~.routine_result.StandIn`; :func:`respelled_call` reads a stored trace's text).
RESPELLED = "as the task wrote it"


def respelled_call(tool: str, result: str | None) -> bool:
    """Whether a call of ``tool`` with ``result`` was made again by :func:`respelling_tool`."""
    first = (result or "").split("\n", 1)[0]
    return ((first.startswith((f"{tool} found nothing for ", f"{tool} failed ("))
             and RESPELLED in first) or renamed_call(tool, result))


def respelling_tools(strategies: Iterable[Strategy], tools: Mapping[str, Tool[Any]],
                     reshapes: Mapping[str, Tool[Any]] | None = None) -> dict[str, Tool[Any]]:
    """Tool name -> its respelling call, for each tool of ``tools`` that an active sequence
    of ``strategies`` calls or that ``reshapes`` has a reshaped call for (which it then
    calls), where that is safe (see the module docstring)."""
    reshapes = reshapes or {}
    names = [name for s in strategies if s.kind == "sequence" and s.status == "active"
             for name in s.tools]
    out: dict[str, Tool[Any]] = {}
    for name in dict.fromkeys([*names, *reshapes]):  # each name once
        if name in tools:
            made = respelling_tool(tools[name], via=reshapes.get(name))
            if made is not None:
                out[name] = made
    return out


def respelling_tool(tool: Tool[Any], via: Tool[Any] | None = None) -> Tool[Any] | None:
    """``tool`` that, when a call finds nothing or fails with a text argument that re-spells
    the task's words, calls it again as the task spelled them; None where that is not safe.
    With ``via`` (the tool's reshaped call, :mod:`.reshape`), each call goes through it."""
    if tool.function is None or tool.requires_approval or not tool.policy.read_only:
        return None
    name = tool.name

    async def call(ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
        if via is None:
            return await invoke_step(tool, ctx, arguments)
        # the reshaped call counts its own calls of the tool (invoke_step): not counted twice
        return await via.invoke(ctx, arguments)

    async def call_or_respell(ctx: RunContext[Any], **arguments: Any) -> Any:
        checked, renamed = _checked(tool, arguments)
        if renamed:  # the model's values under the tool's names: the result says so
            text, _ = serialize_result(await respell(ctx, checked))
            note(ctx, StandIn("rename", name))
            return f"{renamed} (already called; answer from its result):\n{text}"
        return await respell(ctx, checked)

    async def respell(ctx: RunContext[Any], checked: dict[str, Any]) -> Any:
        prompt = getattr(ctx, "prompt", None) or ""
        spelled = named_options(respelled(checked, prompt), tool, prompt)
        failure: Exception | None = None
        try:
            value = await call(ctx, checked)
        except (ToolArgumentsError, TimeoutError):
            raise  # the schema's refusal or a timeout: not about how a name was written
        except Exception as exc:
            if spelled == checked:
                raise
            failure, value = exc, None
        else:
            text, _ = serialize_result(value)
            if spelled == checked or not is_empty_result(text):
                return value
        try:
            again = await call(ctx, tool.validate(spelled))
        except Exception:
            again = None
        found, _ = serialize_result(again) if again is not None else ("", None)
        if again is None or is_empty_result(found):
            if failure is not None:
                raise failure  # the model's own call and its own outcome stand
            return value
        keys = [key for key in spelled if spelled[key] != checked.get(key)]
        given = ", ".join(f'{key} "{checked[key]}"' for key in keys)
        fixed = ", ".join(f'{key} "{spelled[key]}"' for key in keys)
        missed = "found nothing" if failure is None else (
            f"failed ({type(failure).__name__}: {str(failure)[:120]})")
        note(ctx, StandIn("respell", name))
        return (f"{name} {missed} for {given}; called it again with {fixed} {RESPELLED} "
                f"(already called; answer from its result):\n{found}")

    policy = replace(tool.policy, timeout=None, inline=False)  # each call keeps its own
    return _Mending(tool, call_or_respell, policy)


class _Mending(Tool[Any]):
    """The stand-in: the tool's own spec, whose schema check lets through the arguments whose
    names :func:`mended_names` mends (the loop checks a call before invoking it; the stand-in
    then calls the tool with the mended names and says so)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Tool[Any], call: Any, policy: ToolPolicy) -> None:
        super().__init__(inner.spec, call, policy=policy, context_param="ctx",
                         check_schema=False)
        self._inner = inner

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate(arguments)
        except ToolArgumentsError:
            _checked(self._inner, arguments)  # the refusal again, unless the names mend
            return dict(arguments)  # mended when called (call_or_respell)


def _checked(tool: Tool[Any], arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``arguments`` as the schema converts them and no note; or, where the schema refuses only
    their names and they allow one reading (:func:`mended_names`), the mended arguments and the
    note saying how. Otherwise the schema's refusal is raised, as the model's call made it."""
    try:
        return tool.validate(arguments), ""
    except ToolArgumentsError as refusal:
        mended = mended_names(tool, arguments)
        if mended is None:
            raise
        try:
            return tool.validate(mended[0]), mended[1]
        except ToolArgumentsError:
            raise refusal from None


# -- names the tool takes ---------------------------------------------------------------------
# Misnamed arguments: a call the schema refused only for its arguments' names, made with
# the names the tool takes.
#
# Why: a small model copies the argument names it read last, so a run that reaches the right
# alternative tool may call it with the failing tool's parameter name (``doctor`` where the
# alternative takes ``clinician``), or with a parameter it invented (``time_range``), be
# refused by the schema, and give up with a made-up answer. The value is right; only its name
# is not one the tool takes.
#
# So a call of a tool the playbook knows answers some kind of task (the stand-in above calls
# this) that the schema refuses is mended where its names allow one reading only:
#
# - a name the tool does not take, where exactly one required parameter is missing: its value
#   goes to that parameter (``doctor`` -> ``clinician``);
# - names the tool does not take, where no required parameter is missing: they are left out
#   (``time_range``);
# - anything else (two unknown names for one missing parameter, two missing parameters, a
#   refusal about values, extra names a schema accepts): the refusal stands.
#
# The mended arguments must pass the schema themselves, and the result says what was changed,
# so the model can judge it. Only for read-only tools that need no approval (the stand-in's
# scope): the model's values are passed unchanged, under other names or fewer of them (the
# respelling stand-in may then ask once more, as for any call it stands in for).

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


# -- the option the task names -----------------------------------------------------------------
# The values a parameter takes, and the one a task names.
#
# The principle: a tool that says which values a parameter takes, and a task that writes
# exactly one of them, together settle the value; a model's other value for it (made up, or
# copied from elsewhere) is a guess. So a failed or empty call made with a text value the task
# does not write is made again with the one option the task names (the stand-in above makes
# the call; this part only reads). For example, a parameter described as "the team handling it
# (network, desktop, security, ...)" and a task about "a desktop ticket": a small model that
# passes "IT" or "Support" instead is guessing, and may do so until a limit ends the run.
#
# Where the options come from, most certain first: the schema's own ``enum`` (typed, any
# language); else a list the description spells out, in parentheses with commas ("(network,
# desktop, security, ...)") or after the phrases :data:`~toolcycle.words.
# OPTIONS_INTRO` names ("one of: P1, P2 or P3"). An option must be a whole word or phrase of the
# task; none, or two of them, and the value stays the model's.

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
        if says(prompt, value.strip()):
            continue
        named = [o for o in parameter_options(spec) if says(prompt, o)]
        if len(named) == 1 and named[0].lower() != value.strip().lower():
            out[key] = named[0]
    return out

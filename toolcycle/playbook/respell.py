"""Respelled calls: a lookup that found nothing for the model's spelling of a name the task
wrote apart, asked again as the task wrote it.

Why: on the held-out `helpdesk` suite (ReAct, at 8c61b3d) the learned sequence "Call
status_page(system), then answer." was shown to every status task, and for "What is the
current state of the file share?" the 1.5B made one ``status_page`` call and answered "ok"
or "up and running" in each of 3 runs (expected: maintenance). Replayed with that playbook
(seeds 0 and 2) the call is ``status_page({"system": "file_share"})``: the status page
knows "file share" and answers an empty "ok" envelope, which the model read as the state. The
run holds what the repair needs: the task's own words. So a call of a tool a learned
sequence uses that finds nothing or fails, where a text argument re-spells words of the task
(``file_share``, ``File-Share``: the same words, joined or cased apart,
:func:`~toolcycle.playbook.carry.respelled`), is made once more with the task's spelling,
and answers with that result where it found something, saying so. A text value the task does
not write at all, where the parameter's description lists options and the task names exactly
one of them, is replaced by that option the same way (:mod:`.options`: ``team`` "IT" for "a
low-priority desktop ticket", the description listing "network, desktop, security, ...").
Any other outcome leaves the model's call standing, unchanged. A call the schema refuses
only for its arguments' names (``doctor`` where the tool takes ``clinician``) is made with
the names the tool takes where they allow one reading (:mod:`.arg_names`), before all this.

Only for tools that are ``read_only`` and need no approval (the model asked for one call; a
second that reads changes nothing), and only those a learned sequence calls or a pitfall
reshapes calls of (:mod:`.reshape`): the playbook knows they answer some kind of task, so an
empty result there is suspect. A reshaped call is made through (this call wraps it), so a
call with both a misformatted and a misnamed value is mended in both, in either order the
tool checks them. Offered with
``Playbook(routines=True)``, like reshaped calls (:mod:`.reshape`): the spelling itself
proves the repair applies, so it needs no showing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from .._observation import serialize_result
from ..context import RunContext
from ..tools import Tool, ToolArgumentsError, ToolPolicy
from .arg_names import mended_names, renamed_call
from .carry import invoke_step, respelled
from .evidence import is_empty_result
from .options import named_options
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
    names :mod:`.arg_names` mends (the loop checks a call before invoking it; the stand-in
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
    their names and they allow one reading (:mod:`.arg_names`), the mended arguments and the
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

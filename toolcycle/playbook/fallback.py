"""Fallbacks: a learned alternative tool called for the model when the tool it called fails.

Why: a pitfall such as "delay_feed times out. Call service_history(service) instead." reaches
a small model as advice, and advice is not obeyed reliably: a small model often still calls the
failing tool first, then spends a turn on the alternative, or answers with the advice itself
("use service_history instead") after the failure, so the lesson can make the kind worse than
no lesson. The run already showed what works: the other tool, called with the same argument.
While a run is shown such a pitfall, a call of the failing tool that fails (or finds nothing)
calls the alternative with the same arguments and answers with its result, saying so.

A run *not* shown the pitfall (its task worded apart from the tasks it was learned from: "What
quantity of the ladder do we hold?" beside "How many ... are in stock?") gets the fallback
too, but only for the failure the pitfall was learned from (the same error class, or a timeout
where it learned one): that failure proves the lesson applies, as a rejected argument proves
an argument lesson (:mod:`~toolcycle.playbook.reshape`). An empty result does not: a database
empty for some kinds of question may be the right place for this one.

Only where that is safe and complete: the alternative is ``read_only`` (the model did not ask
for it), needs no approval, and the call's own arguments are a whole call of it, by name or
with one text parameter named apart (:mod:`~toolcycle.playbook.carry`), and that one
only where its value is the task's own (:func:`_the_tasks_own`). Where the alternative
fails or finds nothing with the model's spelling of a name the task wrote apart
(``file_share`` for "the file share"), it is asked once more as the task wrote it
(:func:`~toolcycle.playbook.carry.respelled`, read from ``RunContext.prompt``): a small model
writes names as identifiers, the data knows them as people write them, and the alternative
asked with ``file_share`` finds nothing where "file share" is listed.

A pitfall whose repair is a chain (``Call staff_directory(name), then weather(city)
instead``) or a prerequisite or an argument shape makes no fallback. Offered with
``Playbook(routines=True)``, like routines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._observation import serialize_result
from ..context import RunContext
from ..tools import Tool, ToolArgumentsError
from .carry import CallRefused, Rename, can_carry, carried, invoke_step, properties, respelled
from .dead_end import FOUND_NOTHING
from .evidence import is_empty_result
from .pitfall import normalise_error
from .routine_result import StandIn, StepOutcome, note
from .stats import is_timeout
from .strategy import Strategy

#: In every result a fallback gives after the failing tool failed: the model reads where the
#: answer came from. The learner reads the call's typed note (:class:`~.routine_result.
#: StandIn`); :func:`fell_back` reads a stored trace's text, for analyses after the fact.
FELL_BACK = "answered such tasks in earlier runs"
_WORDS = re.compile(r"[A-Za-z]{3}")


def fell_back(tool: str, result: str | None) -> bool:
    """Whether a call of ``tool`` with ``result`` was answered by its fallback."""
    if result is None or FELL_BACK not in result:
        return False
    if result.startswith("Ran "):  # "Ran Y for you, since X timed out (...):"
        return f", since {tool} " in result.split("\n", 1)[0]
    return result.startswith(f"{tool} ")  # "X timed out; Y(...), which ..., failed too: ..."


def alternative_of(strategy: Strategy) -> tuple[str, str] | None:
    """``(failing tool, alternative)`` when ``strategy`` is a pitfall whose repair is one other
    tool ("X times out. Call Y(a) instead."), else None: read from its typed
    :attr:`~toolcycle.playbook.strategy.Strategy.repair`, never from the advice's words."""
    repair = strategy.repair
    if (strategy.kind != "pitfall" or len(strategy.tools) != 2 or repair is None
            or repair.kind != "alternative" or repair.then):
        return None
    tool, via = strategy.tools
    if tool == via or via != repair.via:
        return None
    return tool, via


@dataclass(frozen=True, slots=True)
class Fallback:
    """A pitfall's fallback: ``tool`` for runs shown the pitfall, ``proven`` (its learned
    failure only; None where that failure has no words to tell it by) for the others."""

    pitfall: Strategy
    tool: Tool[Any]
    proven: Tool[Any] | None


def fallback_for(pitfall: Strategy, tools: Mapping[str, Tool[Any]]) -> Fallback | None:
    """The fallback ``pitfall`` makes of ``tools``, or None (see :func:`fallback_tool`)."""
    pair = alternative_of(pitfall)
    if pair is None or pair[0] not in tools or pair[1] not in tools:
        return None
    primary, alternative = tools[pair[0]], tools[pair[1]]
    learned = pitfall.error_class  # the failure it was learned from
    rename = Rename.of_repair(pitfall.repair)
    tool = fallback_tool(primary, alternative, rename=rename)
    if tool is None:
        return None
    late = pitfall.timed_out if pitfall.timed_out is not None else is_timeout(learned)
    # "KeyError: '…'" masks to "…": a class with no words would match any such error; an
    # empty result proves nothing (a database empty for some kinds of question)
    proven = (fallback_tool(primary, alternative, learned, rename=rename, timed_out=late)
              if _WORDS.search(learned) and learned != FOUND_NOTHING else None)
    return Fallback(pitfall, tool, proven)


def fallback_tool(primary: Tool[Any], alternative: Tool[Any], only: str | None = None, *,
                  rename: Rename | None = None, timed_out: bool = False) -> Tool[Any] | None:
    """``primary`` that calls ``alternative`` when it fails or finds nothing, or None where
    that is not safe or not a whole call (see the module docstring). ``only``: an error class
    (:func:`~toolcycle.playbook.reflector.normalise_error`); then it calls the alternative for
    that failure alone (``timed_out``: the failure was a timeout, as the lesson recorded
    it), and every other outcome is the primary's own. ``rename``: the parameter the learned
    repair passed under another name (:mod:`.carry`)."""
    if (primary.function is None or alternative.function is None
            or primary.requires_approval or alternative.requires_approval
            or not alternative.policy.read_only):
        return None
    if not can_carry(set(properties(primary)), alternative, rename):
        return None

    async def call_or_fall_back(ctx: RunContext[Any], **arguments: Any) -> Any:
        checked = primary.validate(arguments)
        args = carried(arguments, alternative, rename)
        if args is not None and not _the_tasks_own(args, arguments, rename,
                                                   getattr(ctx, "prompt", None)):
            args = None  # a phrase the model composed, not a name the task gave
        if args is None:  # this call does not carry (a renamed parameter left unfilled)
            return await invoke_step(primary, ctx, checked)
        try:
            value = await invoke_step(primary, ctx, checked)
        except TimeoutError:
            if only is not None and not timed_out:
                raise
            failure = f"{primary.name} timed out" + (
                f" after {primary.timeout} s" if primary.timeout else "")
            failed = StepOutcome(primary.name, dict(checked), "timeout", "")
        except ToolArgumentsError:
            raise  # the model's arguments: its to fix, not the alternative's
        except Exception as exc:  # the failure the pitfall was learned from
            if only is not None and normalise_error(str(exc)) != only:
                raise
            failure = f"{primary.name} failed: {type(exc).__name__}: {exc}"
            failed = StepOutcome(primary.name, dict(checked), "error", "")
        else:
            text, _ = serialize_result(value)
            if only is not None or not is_empty_result(text):
                return value
            failure = f"{primary.name} found nothing ({text.strip()[:80] or 'empty'})"
            failed = StepOutcome(primary.name, dict(checked), "empty", "")
        spellings = [args]  # the model's spelling first, then the task's where it differs
        if (spelled := respelled(args, getattr(ctx, "prompt", None) or "")) != args:
            spellings.append(spelled)
        for call_args in spellings:
            answer, final, asked = await _ask(alternative, ctx, call_args, failure)
            if final:
                break
        if asked is not None:  # the alternative was called: the answer is the fallback's
            note(ctx, StandIn("fallback", primary.name, asked.status != "error",
                              alternative.name, () if asked.status == "error"
                              else (failed, asked)))
        return answer  # the last spelling's, where none found anything

    # the primary keeps its own timeout inside; the pair has none (as a routine's steps)
    policy = replace(primary.policy, timeout=None, inline=False)
    return Tool(primary.spec, call_or_fall_back, policy=policy, context_param="ctx",
                check_schema=False)


def _the_tasks_own(args: Mapping[str, Any], arguments: Mapping[str, Any],
                   rename: Rename | None, prompt: str | None) -> bool:
    """Whether the value the fallback's call ``args`` (:func:`~.carry.carried` from the
    model's ``arguments``) passes under another parameter's name is one the task itself
    writes (as the model spelled it, or as :func:`~.carry.respelled` finds it); true where
    ``carried`` renamed nothing or no task is known (called outside a run).

    Why: a rename is learned from runs that passed the task's own value on (``query``
    "EG1234" for ``code``); a model's search phrase ("EG5093 consumption 3 May 2026") under
    the same rename passed a sentence as a meter code, and the alternative's empty result
    was the run's answer."""
    if (rename is None or prompt is None or rename.target not in args
            or rename.target in arguments):  # (carried by its own name: nothing renamed)
        return True
    value = str(args[rename.target])
    spelled = str(respelled({rename.target: value}, prompt)[rename.target])
    return bool(value.strip()) and spelled.lower() in prompt.lower()


async def _ask(alternative: Tool[Any], ctx: RunContext[Any], args: dict[str, Any],
               failure: str) -> tuple[str, bool, StepOutcome | None]:
    """What the fallback answers after ``failure`` when it calls ``alternative`` with ``args``,
    whether that is final (an answer was found, or a budget refused the call) rather than
    a failure or an empty result that another spelling of the arguments might mend, and the
    alternative's call (None: a budget refused it)."""
    shown = json.dumps(args, ensure_ascii=False, default=str)
    try:
        other = await invoke_step(alternative, ctx, alternative.validate(args))
    except CallRefused as exc:
        return f"{failure}; {exc}", True, None
    except Exception as exc:
        failed = f"{type(exc).__name__}: {exc}"
        return (f"{failure}; {alternative.name}({shown}), which {FELL_BACK}, failed too: "
                f"{failed}"), False, StepOutcome(alternative.name, args, "error", failed)
    result, _ = serialize_result(other)
    if is_empty_result(result):
        # no "answer from its result" over nothing: told so, the 1.5B answered "[]";
        # nothing found twice is what the model should read
        return (f"{failure}; {alternative.name}({shown}), which {FELL_BACK}, found nothing "
                f"too: {result}"), False, StepOutcome(alternative.name, args, "empty", result)
    return (f"Ran {alternative.name} for you, since {failure} (already called; it {FELL_BACK}; "
            f"answer from its result):\n{alternative.name}({shown}) -> {result}",
            True, StepOutcome(alternative.name, args, "ok", result))

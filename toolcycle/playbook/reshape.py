"""Reshaped calls: a call rejected for an argument's format, made again in the format that
earlier runs learned the tool accepts.

Why: a pitfall such as "fare_quote fails with: invalid date …: expected DD.MM.YYYY. Pass date
like "01.05.2026"." reaches a small model as advice, and a small model still writes the date as
the task did ("3 November 2026") or leaves the day unpadded ("3.11.2026") in some runs shown it.
Then it rarely mends the call: read the error, it wanders through other tools to the iteration
limit, even where the lesson is repeated in the error itself. The run already holds everything
the repair needs: the value the model meant, the error the lesson was learned from, and the
example that passed. So a call of the tool that fails with the lesson's error class, whose value
can be written in the example's shape without guessing, is made again with that value, and
answers with its result, saying so.

Only where that is safe and certain: the tool is ``read_only`` (the model asked for one call;
a second one that reads changes nothing) and needs no approval; the error is the lesson's own
(:func:`~toolcycle.playbook.reflector.normalise_error` of both match); and the new value means
what the model's did. A date is read in the model's own writing and written in the example's
format: read with the example's format itself (padding), or with a month named or the year
first; a numeric date in another order is read only when day-first and month-first agree
(a day above 12). A time said with its "pm" or "am" ("7:30 pm"), or written bare where the
task says it so ("6:00" for "6 pm"), is written on the example's 24-hour clock. A value the
error's own legend gives one code for ("P1 (critical), P2 (high), ...") takes that code; a
country's name, where the error asks for a country code and the example is one, takes its
ISO 3166 code (:func:`~toolcycle.playbook.formats.country_code`). Any
other value only has its digit groups zero-padded or its letters' case matched to the
example, separators unchanged. Anything else, or a second
failure, leaves the first failure standing, unchanged.

A date the tool does not refuse can still be wrong: written the other way round from the
lesson's format ("11/08/2026" for 11 August beside "12/14/2026"), a tool that takes either
order answers for 8 November, an empty result or a wrong figure. So where the lesson's
example settles the order, a value that read in it is a date the task does not name, while
its one other reading is the task's date, is passed as the task's date before the call
(:func:`~toolcycle.datetimes.as_the_task_names`), and the result says so. A swapped call
that is refused or fails leaves the model's own call to be made as it wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from .._observation import serialize_result
from ..context import RunContext
from ..datetimes import as_the_task_names, clock_readings, date_format, read_date, time_format
from ..tools import Tool, ToolArgumentsError
from ..words import says
from .carry import invoke_step, properties
from .formats import country_code, legend, value_shape
from .pitfall import normalise_error
from .routine_result import StandIn, note
from .strategy import Strategy

#: In every result a reshaped call gives (the learner reads the call's typed note instead,
#: :class:`~.routine_result.StandIn`; :func:`reshaped` reads a stored trace's text).
RESHAPED = "in the format earlier runs learned"

_GROUPS = re.compile(r"\d+|[A-Za-z]+|[^\dA-Za-z]+")
#: A swapped date's call that was refused or failed (the model's own call is made instead).
_NOT_MADE = object()


@dataclass(frozen=True, slots=True)
class ArgumentLesson:
    """What an argument pitfall learned: calls of ``tool`` that fail with ``error_class``
    pass ``argument`` like ``example``; learned from a sequence's example (no ``error_class``
    of its own), calls that fail with an error naming ``argument``."""

    tool: str
    error_class: str
    argument: str
    example: str


def argument_lesson(strategy: Strategy) -> ArgumentLesson | None:
    """The lesson of a pitfall whose repair is an argument's shape with an example
    (:func:`~toolcycle.playbook.reflector.pitfall_advice`: "X fails with: E. Pass a like
    "v"."), else None: read from its typed error class and repair, not from its advice."""
    repair = strategy.repair
    if (strategy.kind != "pitfall" or len(strategy.tools) != 1 or strategy.status != "active"
            or repair is None or repair.kind != "argument" or not repair.argument
            or not repair.example or not strategy.error_class):
        return None
    return ArgumentLesson(strategy.tools[0], strategy.error_class, repair.argument,
                          repair.example)


def shown_formats(strategy: Strategy) -> list[ArgumentLesson]:
    """The formats an active sequence shows its first call's arguments in ("Call
    fare_quote(day like "10.09.2026", service)"), as lessons with no error class: the value
    the tool accepted, where the run had to shape it (:mod:`~toolcycle.playbook.sequence`).

    Why: a sequence is promoted from two runs that found the answer (a probe's rewritten call
    among them), while the pitfall its runs' errors make waits for three; and a small model
    told by the error which value would work may still send its own writing again, turn
    after turn. The sequence already says which format the tool takes, so a call the tool
    refuses for that argument is mended as a pitfall's would be."""
    if strategy.kind != "sequence" or not strategy.tools or strategy.status != "active":
        return []
    return [ArgumentLesson(strategy.tools[0], "", a.name, a.example)
            for a in strategy.first_args if a.example]


def reshape(value: str, example: str, error_class: str = "", prompt: str = "") -> str | None:
    """``value`` written in ``example``'s shape, or None where that is not certain (see the
    module docstring). ``error_class`` may settle a date's order ("expected DD.MM.YYYY");
    the task's ``prompt`` whether a bare time ("6:00" for "6 pm") is morning or evening."""
    text = value.strip()
    if not text or value_shape(text) == value_shape(example):
        return None
    coded = _from_legend(text, example, error_class) or country_code(text, example, error_class)
    if coded is not None:
        return coded
    target = date_format(example, error_class)
    clock = time_format(example, text, prompt) if target is None else None
    if target is not None:
        when = read_date(text, target)
        fixed = when.strftime(target) if when is not None else None
    elif clock is not None and (readings := clock_readings(text, prompt)):
        fixed = readings.pop().strftime(clock) if len(readings) == 1 else None
    else:
        fixed = _pad(text, example)
    return fixed if fixed is not None and fixed != text and value_shape(
        fixed) == value_shape(example) else None


def _from_legend(text: str, example: str, error_class: str) -> str | None:
    """The code the error's own legend gives for ``text``, in ``example``'s shape: "P2" for
    "high" where the error lists "P1 (critical), P2 (high), ..." (or "high (P2)"); None
    where it lists none, or ``text`` means no one code there.

    Why: a small model that reads a legend in an error tries values in turn and takes the
    first code that passes, right or not (P3 for a high-priority ticket); the legend itself
    says which code a meaning has."""
    wanted = value_shape(example)
    codes = {code for code, meaning in legend(error_class)
             if value_shape(code) == wanted and meaning.lower() == text.lower()}
    return codes.pop() if len(codes) == 1 else None


def _pad(text: str, example: str) -> str | None:
    """``text`` with its digit groups zero-padded and its letters' case matched to
    ``example``'s, where both split into the same groups with the same separators."""
    have, want = _GROUPS.findall(text), _GROUPS.findall(example)
    if len(have) != len(want):
        return None
    out: list[str] = []
    for mine, theirs in zip(have, want, strict=True):
        if mine.isdigit() and theirs.isdigit() and len(mine) <= len(theirs):
            out.append(mine.zfill(len(theirs)))
        elif mine.isalpha() and theirs.isalpha() and len(mine) == len(theirs):
            out.append(mine.upper() if theirs.isupper() else
                       mine.lower() if theirs.islower() else mine)
        elif mine == theirs:
            out.append(mine)
        else:
            return None
    return "".join(out)


def reshaped(tool: str, result: str | None) -> bool:
    """Whether a call of ``tool`` with ``result`` was made again by :func:`reshaping_tool`."""
    return (result is not None and result.startswith(f"{tool} rejected ")
            and RESHAPED in result.split("\n", 1)[0])


def _about(lesson: ArgumentLesson, error_class: str, error: str) -> bool:
    """Whether a failure is the one ``lesson`` mends: its own error class (a pitfall's), or,
    for a sequence's format, an error that names the argument ("invalid day ...")."""
    if lesson.error_class:
        return error_class == lesson.error_class
    return says(error, lesson.argument)


def reshaping_tool(tool: Tool[Any], lesson: ArgumentLesson) -> Tool[Any] | None:
    """``tool`` that, when a call fails with the lesson's error, calls it again with the
    argument in the lesson's shape; None where that is not safe (see the module docstring)."""
    if (tool.function is None or tool.requires_approval or not tool.policy.read_only
            or lesson.argument not in properties(tool) or tool.name != lesson.tool):
        return None
    name, argument = tool.name, lesson.argument

    order = date_format(lesson.example, lesson.error_class)

    async def call_or_reshape(ctx: RunContext[Any], **arguments: Any) -> Any:
        checked = tool.validate(arguments)
        given = checked.get(argument)
        # (no context where the tool is called outside a run, as a fallback may be)
        prompt = (ctx.prompt if ctx is not None else None) or ""
        swapped = (as_the_task_names(given, order, prompt)
                   if order is not None and isinstance(given, str) else None)
        if swapped is not None:  # the date the other way round from the task's
            as_read, meant = swapped
            try:
                value = await invoke_step(tool, ctx,
                                          tool.validate({**arguments, argument: meant}))
            except Exception:  # refused, timed out or failed: the model's own call is
                value = _NOT_MADE  # made below, as it wrote it
            if value is not _NOT_MADE:
                result, _ = serialize_result(value)
                note(ctx, StandIn("reshape", name))
                return (f'{name}: {argument} "{given}" in the format earlier runs learned '
                        f'("{lesson.example}") is {as_read.isoformat()}, a date the task does '
                        f'not name; called it with {argument} "{meant}", the task\'s date, '
                        f"instead (already called; answer from its result):\n{result}")
        try:
            return await invoke_step(tool, ctx, checked)
        except (ToolArgumentsError, TimeoutError):
            raise  # the schema's refusal or a timeout: not the format the lesson is about
        except Exception as exc:
            error = normalise_error(str(exc))
            fixed = (reshape(given, lesson.example, error, prompt)
                     if isinstance(given, str) and _about(lesson, error, str(exc)) else None)
            if fixed is None:
                raise
            failure = exc
        try:
            value = await invoke_step(tool, ctx, tool.validate({**arguments, argument: fixed}))
        except Exception:
            raise failure from None  # the model's own call and its own failure stand
        result, _ = serialize_result(value)
        note(ctx, StandIn("reshape", name))
        return (f'{name} rejected {argument} "{given}" ({error}); called it '
                f'again with {argument} "{fixed}", {RESHAPED} (already called; answer from '
                f"its result):\n{result}")

    policy = replace(tool.policy, timeout=None, inline=False)  # each call keeps its own
    return Tool(tool.spec, call_or_reshape, policy=policy, context_param="ctx",
                check_schema=False)

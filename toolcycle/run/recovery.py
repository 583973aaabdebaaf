"""Recovery after a tool error: the observation says what would work, not only what failed.

A small model told ``order_id: 'order_id' is a required property`` or ``KeyError: 'A-17'``
tends to give up and invent an answer, or to call the same tool again the same way. The run
knows more than the error: the tool's schema (the enum or format the failing argument wants),
the other tools offered (one of them names the missing parameter, so it is where the value
comes from), and the calls that already succeeded. :func:`advice` turns that typed data (the
schema, the call's arguments, the history and the trace, never our own error text) into a few
lines appended to the error observation, bounded by :data:`MAX_ADVICE` characters.

Which tool gives a missing parameter is :func:`.producers.producers`' reading of the schemas.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._id_shape import in_example_shape
from .._tool_schema import compile_validator
from ..datetimes import (
    day_first,
    example_readings,
    in_example_format,
    in_stated_format,
    rewritten_date,
    stated_formats,
)
from ..messages import ToolResult, bounded_repr
from ..output_repair import expected
from ..tools import Tool
from ..words import says
from .handles import handle_back, handle_given
from .producers import producers, required_of, words_of
from .request_spelling import in_turn, name_advice, name_within, names_instead, request_spelling
from .state import RunState

#: The most characters of advice an error observation gets (it is read on every later request).
MAX_ADVICE = 600
_QUOTED = 120
#: The most characters of a tool's error read for a format it states (its first lines).
_ERROR_READ = 400


def advice(state: RunState, tool: Tool[Any], arguments: dict[str, Any], call_id: str,
           refused: bool, error: str = "") -> str:
    """What would work after the call of ``tool`` with ``arguments`` failed: ``refused`` when
    its arguments did not validate, else the tool raised ``error`` (its message). ``""`` when
    there is nothing to add (the observation is then exactly what it was without this
    module)."""
    schema = tool.spec.parameters
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    if refused:
        # arguments that are exactly another offered tool's: the model meant that tool, and
        # "`code` is missing; X can give it" beside it sent the 1.5B on to a third tool
        meant = _meant_tool(state, tool.name, properties, arguments)
        lines = ([meant] if meant is not None
                 else list(_argument_lines(state, tool.name, schema, properties, arguments)))
    else:
        # one remedy an argument: one the error's own format or example settles says what
        # to pass; "appears in no tool result; X can give it" beside it sent the 1.5B to
        # another tool with a made-up argument
        rewritten = dict([*_stated_format(state, properties, arguments, error),
                          *_example_shape(properties, arguments, error)])
        lines = [*rewritten.values(),
                 *_unsupported_values(state, tool.name, properties,
                                      {k: v for k, v in arguments.items()
                                       if k not in rewritten}, error,
                                      alone=not (state.setup.core.parallel_tools
                                                 or tool.concurrent))]
    earlier = _earlier_success(state, tool.name, arguments, call_id, refused)
    if earlier:
        lines.append(earlier)
    if not lines:
        return ""
    text = "\nWhat would work:\n" + "\n".join(f"- {line}" for line in lines)
    return text if len(text) <= MAX_ADVICE else text[:MAX_ADVICE - 4] + " ..."


def _meant_tool(state: RunState, own: str, properties: dict[str, Any],
                arguments: dict[str, Any]) -> str | None:
    """Where the refused call's argument names are not all ``own``'s and are exactly the
    parameters of one other offered tool (each of its required ones given, none it lacks):
    the line naming that tool. None where two tools would fit, or none does.

    Why: a small model that picked the wrong one of two similar tools still writes the
    arguments of the one it meant (``energy_live(meter=..., day=...)`` for a daily report
    taking ``meter`` and ``day``); told only that ``code`` is missing, it went looking for
    a code and never came back to the tool it meant.

    Not a tool the run already called with these very arguments and saw fail: the model came
    from there, and sent back it ping-pongs between the two (``get_medicine(medicine_id=
    "Lumora")`` failed, "``get_medicine_id`` can give it"; ``get_medicine_id(medicine_id=
    "Lumora")`` refused, "call ``get_medicine`` with these arguments", three times over)."""
    given = set(arguments)
    if not given or given <= set(properties):
        return None  # its own parameters: the call's values, not the tool, are the problem
    ending = {t.name for t in state.output.tool_definitions}
    failed = {record.name for step in state.trace.trace.steps for record in step.tool_calls
              if record.error is not None and record.args == arguments}
    fitting = []
    for definition in state.setup.settings.tools:
        if definition.name == own or definition.name in ending or definition.name in failed:
            continue
        theirs = definition.parameters.get("properties")
        required = definition.parameters.get("required")
        if (isinstance(theirs, dict) and given <= set(theirs)
                and set(required if isinstance(required, list) else ()) <= given):
            fitting.append(definition.name)
    if len(fitting) != 1:
        return None
    foreign = " or ".join(f"`{n}`" for n in sorted(given - set(properties)))[:_QUOTED]
    every = ", ".join(f"`{n}`" for n in sorted(given))[:_QUOTED]
    return (f"`{own}` takes no {foreign}; `{fitting[0]}` takes {every}: "
            f"call `{fitting[0]}` with these arguments")


def _argument_lines(state: RunState, own: str, schema: dict[str, Any],
                    properties: dict[str, Any], arguments: dict[str, Any]) -> Iterator[str]:
    """A line per missing required argument and per argument its own schema refuses; where
    one required argument is missing and the call gave one the tool does not take, the line
    says to pass that value under the missing name.

    Why the rename: a model that wrote the parameter of another tool (``medicine_id`` to the
    tool taking ``name``) has the right value under the wrong name; told only that ``name``
    is missing, the 1.5B called the other tool again instead."""
    missing = [n for n in required_of(schema) if n not in arguments]
    foreign = [n for n in arguments if n not in properties]
    wanted_field = properties.get(missing[0]) if len(missing) == 1 else None
    if (len(foreign) == 1 and isinstance(wanted_field, dict)
            and _fits(wanted_field, arguments[foreign[0]])):
        renamed = {**{k: v for k, v in arguments.items() if k != foreign[0]},
                   missing[0]: arguments[foreign[0]]}
        yield (f"`{own}` takes `{missing[0]}`, not `{foreign[0]}`: call it with "
               f"{bounded_repr(renamed)[:_QUOTED * 2]}")
        return
    for name in missing:
        line = f"`{name}` is missing"
        wanted = expected(properties.get(name))
        if wanted:
            line += f"; it takes {wanted}"
        givers = producers(state, own, name)
        if givers:
            line += f"; {_named(givers)} can give it"
        yield line
    for name, value in arguments.items():
        sub = properties.get(name)
        if isinstance(sub, dict) and not _fits(sub, value):
            inner = _unwrapped(sub, name, value)
            wanted = expected(sub)
            if inner is not None:
                yield (f"`{name}` is nested once too deep: call `{own}` with "
                       f"{bounded_repr({**arguments, name: inner})[:_QUOTED * 2]}")
            elif wanted:
                yield f"`{name}` takes {wanted}, not {bounded_repr(value)[:_QUOTED]}"


def _unwrapped(field: dict[str, Any], name: str, value: Any) -> Any:
    """``value`` with one needless level of nesting taken off, where that fits ``field``: a
    list inside a one-item list (``[[120, 130]]`` for an array of numbers), or the value
    under its own parameter's name (``{"numbers": [...]}`` as ``numbers``); else ``None``.

    Why: told "``numbers/0``: [120,130] is not of type number", and that ``numbers`` "takes an
    array", the 1.5B sent the same nested list until the loop guard ended the run (issue 68,
    first-hour agents): it had passed an array. What to send is the fix, written out."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        inner: Any = value[0]
    elif isinstance(value, dict) and set(value) == {name}:
        inner = value[name]
    else:
        return None
    return inner if _fits(field, inner) else None


def _stated_format(state: RunState, properties: dict[str, Any], arguments: dict[str, Any],
                   error: str) -> Iterator[tuple[str, str]]:
    """After a tool raised an error that spells out the one date or time format it wants
    ("invalid date '2026-09-23': expected YYYY/MM/DD", Python's "does not match format
    '%d.%m.%Y'") or shows it by an example that settles it ("dates look like 20260105"):
    each string argument the error names (by its value or its name), with its line: the
    value written in that format, where what the value means is certain
    (:func:`~toolcycle.datetimes.in_stated_format`: an ISO date, a day above 12, a time with
    its "pm" or the request's).

    Why: a small model that reads the format tends to pass the same value again, or to
    answer that the date is invalid, rather than rewrite it (``2026-09-23`` again after
    "expected YYYY/MM/DD", until the loop guard refuses the call). The error already said the
    format; the rewriting is the step it misses."""
    text = error[:_ERROR_READ]
    low = text.lower()
    own = [v for v in arguments.values() if isinstance(v, str)]
    if not text or not (stated_formats(text) or example_readings(text, own)):
        return
    request: str | None = None
    for name, value in arguments.items():
        if (name not in properties or not isinstance(value, str) or not value.strip()
                or (value.lower() not in low and not says(low, name))):
            continue
        if request is None:
            request = _known_text(state)[0]
        written = in_stated_format(value, text, request) or in_example_format(value, text, own)
        if written is not None:
            yield name, (f"`{name}` written in the format the error asks for: "
                         f"{bounded_repr(written)[:_QUOTED]}")
            continue
        both = _either_order(value, text, own)
        if both is not None:
            yield name, f"`{name}` written like the error's example: {both}"


def _either_order(value: str, error: str, own: list[str]) -> str | None:
    """``value``, a date whose meaning is certain, written both ways round the error's
    example may be read ("dates look like 01/05/2026": month first or day first), each
    labelled; None where the example settles the order or ``value`` has no certain meaning.

    Why both: an example such as 01/05/2026 cannot say which number is the day, and the run
    must not guess; told nothing, the 1.5B passed its ISO date again or left the tool for
    others that had nothing (generated suites). Given the two writings alone it tried one,
    found nothing, and answered that there was nothing: the line says to try the other."""
    formats = example_readings(error, own)
    labelled = []
    for fmt in formats:
        written = rewritten_date(value.strip(), fmt)
        if written is None:
            return None
        labelled.append(f"{bounded_repr(written)[:_QUOTED]} if the "
                        f"{'day' if day_first(fmt) else 'month'} comes first")
    if len(labelled) != 2:
        return None
    return (f"{labelled[0]}, {labelled[1]}; the example does not say which, so if one finds "
            "nothing, try the other")


def _example_shape(properties: dict[str, Any], arguments: dict[str, Any],
                   error: str) -> Iterator[tuple[str, str]]:
    """After a tool raised an error that shows what its ids look like ("numbers look like
    B-00000"): each argument the error is about (:func:`_about`), with its line: the value
    written in that shape where it is settled (:func:`~toolcycle._id_shape.in_example_shape`:
    the example's letters and separators around the value's digits).

    Why: told "unknown booking number '75285' (numbers look like B-00000)", the 1.5B passed
    ``75285`` again, then answered that the booking does not exist; the rewriting is the
    step it misses."""
    text = error[:_ERROR_READ]
    low = text.lower()
    own = [str(v) for v in arguments.values() if isinstance(v, str | int)]
    for name, value in arguments.items():
        if (name not in properties or not isinstance(value, str | int)
                or isinstance(value, bool) or not _about(low, name, str(value))):
            continue
        shaped = in_example_shape(str(value), text, own)
        if shaped is not None:
            yield name, (f"`{name}` written the way the error's example writes it: "
                         f"{bounded_repr(shaped)[:_QUOTED]}")


def _about(low: str, name: str, value: str) -> bool:
    """Whether an error (lower-cased ``low``) is about the argument ``name``: it repeats the
    value (``KeyError: 'Tromso'``), names the parameter, or names its noun ("unknown
    station" for ``station_id``). An error that says none of these ("the API token was
    revoked", "service unavailable") is about the tool, not what it was given."""
    if value.strip() and says(low, value.strip()[:_QUOTED]):
        return True
    words = words_of(name)
    noun = words[:-1] if len(words) > 1 else words
    return says(low, name) or (bool(noun) and all(says(low, w) for w in noun))


def _unsupported_values(state: RunState, own: str, properties: dict[str, Any],
                        arguments: dict[str, Any], error: str, alone: bool = False
                        ) -> Iterator[str]:
    """After a tool raised ``error``: each string argument the error is about
    (:func:`_about`) whose value no tool returned, where another tool can give that
    parameter (an id looked up first); where none can, an argument the model rewrote from the
    request's words gets the request's own spelling.

    Only an argument the error is about: after "401 Unauthorized: the API token was
    revoked" a line saying the id came from the request, and which tool gives ids, sends a
    small model to that other tool with the same value, where nothing was wrong with it.

    A value the request holds counts too: the commonest first-hour mistake is passing the
    name the user wrote where an id is wanted (``latest_reading(station_id="Tromso")`` before
    ``find_station``); the tool then raises ``KeyError: 'Tromso'`` and a small model, seeing
    its value in the question, concludes the station does not exist (issue 68, measured on
    the first-hour agents). The line says where the value came from either way, and where a
    lookup was already given the value, the id it gave (:func:`.handles.handle_given`; from
    this same turn only where the call ran ``alone``, after every call written before it)."""
    known: tuple[str, str] | None = None
    low = error[:_ERROR_READ].lower()
    for name, value in arguments.items():
        if (name not in properties or not isinstance(value, str | int)
                or isinstance(value, bool) or not _about(low, name, str(value))):
            continue
        if known is None:
            known = _known_text(state)
        request, results = known
        if str(value) in results:
            if isinstance(value, str) and (line := handle_back(state, own, name, value, alone)):
                yield line
            continue
        givers = producers(state, own, name)
        if not givers:  # (a lookup by name: the request's writing of the name)
            if isinstance(value, str) and (line := name_advice(name, value, request)):
                yield line
            continue
        # a name the request writes, rewritten (``brook_plot`` for "Brook Plot"): the lookup
        # takes it as the request writes it (seen on the 1.5B, held-out 6816: the rewritten
        # name passed to the detail tool and to the lookup in turn, until the loop guard)
        spelled = (request_spelling(value, request)
                   if isinstance(value, str) and value not in request else None)
        inside = (name_within(value, request)
                  if isinstance(value, str) and value not in request and spelled is None
                  else None)  # ("W Willow Ward": the request's name with more words)
        where = ("is taken from the request, not from a tool result" if str(value) in request
                 else f"is the request's {bounded_repr(spelled)[:_QUOTED]} rewritten, not from "
                 "a tool result" if spelled is not None
                 else f"holds the request's {bounded_repr(inside)[:_QUOTED]} and more, not "
                 "from a tool result" if inside is not None
                 else "appears in no tool result or in the request")
        spelled = spelled or inside
        if (found := handle_given(state, givers, spelled or str(value),
                                  this_turn=alone)) is not None:
            # the lookup was made, even in this very reply: the id is what would work
            giver, handle = found
            yield (f"`{name}` {bounded_repr(value)[:_QUOTED]} {where}; `{giver}` gave "
                   f"{bounded_repr(handle)} for it: call `{own}` with `{name}` "
                   f"{bounded_repr(handle)}")
            continue
        others = (names_instead(value, request)
                  if isinstance(value, str) and spelled is None else [])
        if others and (gave := _handles_for(state, givers, others, alone)):
            # the lookups of the request's names were made: their ids are what would work
            # (seen on the 1.5B, dev rerun of 6820: told to look 'Long Meadow' and 'Hill
            # Acre' up, it did, then called the detail tool with "area" again until the
            # loop guard)
            giver = gave[0][1]
            ids = in_turn([handle for _, _, handle in gave])
            said = " and ".join(f"{bounded_repr(handle)} for {bounded_repr(thing)[:_QUOTED]}"
                                for thing, _, handle in gave)
            yield (f"`{name}` {bounded_repr(value)[:_QUOTED]} {where}; `{giver}` gave {said}: "
                   f"call `{own}` with `{name}` {ids}")
            continue
        how = (f": call it with {bounded_repr(spelled)[:_QUOTED]}"
               if spelled is not None and len(givers) == 1
               else f": call it with {in_turn(others)}" if others and len(givers) == 1
               else "")
        yield (f"`{name}` {bounded_repr(value)[:_QUOTED]} {where}; {_named(givers)} can give "
               f"it{how}")


def _handles_for(state: RunState, givers: list[str], names: list[str], alone: bool
                 ) -> list[tuple[str, str, str]]:
    """(name, the tool that gave it, the handle) for each of ``names`` a call to one of
    ``givers`` was given and answered with a handle (:func:`.handles.handle_given`)."""
    found = [(thing, handle_given(state, givers, thing, this_turn=alone)) for thing in names]
    return [(thing, given[0], given[1]) for thing, given in found if given is not None]


def _earlier_success(state: RunState, own: str, arguments: dict[str, Any], call_id: str,
                     example: bool) -> str | None:
    """The call of the same tool that already succeeded in this run: the identical one (its
    result is above), else, with ``example`` (arguments refused: their shape is the problem),
    the latest one, as arguments that worked. After the tool raised on valid arguments another
    call's values would only be a guess, so none is offered."""
    latest = None
    for step in state.trace.trace.steps:
        for record in step.tool_calls:
            if (record.name != own or record.call_id == call_id or record.kind != "tool"
                    or record.error is not None or record.result is None):
                continue
            if record.args == arguments:
                return "the same call succeeded earlier: use its result above"
            latest = record
    if latest is None or not example:
        return None
    return f"`{own}` worked earlier with {bounded_repr(latest.args)[:_QUOTED * 2]}"


def _fits(field: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` fits its own parameter's schema; a schema that cannot be compiled
    alone (a ``$ref`` into the whole) counts as fitting: no advice rather than wrong advice."""
    try:
        return bool(compile_validator(field).is_valid(value))
    except Exception:
        return True


def _named(tools: list[str]) -> str:
    return " or ".join(f"`{name}`" for name in tools)


def _known_text(state: RunState) -> tuple[str, str]:
    """(the request's text, every successful result so far): where a value the model uses
    should come from."""
    request: list[str] = []
    results: list[str] = []
    for message in state.messages:
        if message.role == "user":
            request.append(message.text)
        for part in message.parts:
            if isinstance(part, ToolResult) and not part.is_error:
                results.append(part.content)
    return "\n".join(request), "\n".join(results)

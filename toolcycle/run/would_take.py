"""The figures a call made over figures from nowhere would take, where the run has read them.

A small model that called a tool with a figure it made up (``kg_to_lb(value=100)`` before
any lookup) is told that figure has no source, and to call the tools that give it first.
It often does, and then repeats the first call as it was: seen on the 1.5B (held-out
first-hour seed 6815), told at every attempt that ``kg_to_lb`` was given 100 which no
source holds, it looked the exhibit up, read ``"weight_kg": 387.4``, and called
``kg_to_lb(100)`` again until the loop guard stopped it. The figure the call needed was in
the history; nothing said which one it was. A small model follows a call it is shown
better than a rule it is told, so the message ends with that call where the run can tell:

- a conversion (``kg_to_lb``: two units of one kind in its name, else its description)
  takes the figures read in the unit it converts from (a ``weight_kg`` field);
- any other tool takes the figures of the fields the request names ("the capacity of A
  and B added up": ``capacity``).

Said only where the figures found are as many as the figures the call was given (one weight
for one made-up weight, two capacities for the two of an ``add``, one of them found or not):
where the results hold more, the run cannot tell which the call meant, and says nothing more
than before.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models.base import ToolDefinition
from .asked_field import named_field, request_words
from .provenance import (
    Call,
    Figure,
    all_figures,
    calls_of,
    converters_into,
    request_of,
    written,
)
from .state import RunState
from .units import name_units, named_units, one_kind, requested_units

#: The most figures a call's suggested arguments list.
_MOST = 4


def taken_by(state: RunState, tool: str, given: int,
             figures: Sequence[Figure] | None = None) -> str:
    """:func:`would_take` over the run's own request and results (``figures``, where the
    caller has read them already: :func:`.provenance.all_figures` of the run's calls)."""
    if figures is None:
        figures = all_figures(calls_of(state))
    described = next((d.description for d in state.setup.settings.tools if d.name == tool), "")
    return would_take(tool, described, given, request_of(state), figures)


def conversion_that_would_work(request: str, calls: Sequence[Call], figures: Sequence[Figure],
                               offered: Sequence[ToolDefinition]) -> str:
    """``"; what would work: `km_to_mi` with 179.7, the `distance_km` `train_details` gave"``
    for an answer whose figures have no source, where the request asks for a unit, exactly
    one ``offered`` tool converts into it, no call of it has been made (``calls``: the run's
    successful ones), and the results (``figures``) hold the one figure it would take, in
    the unit it converts from; ``""`` otherwise.

    Why: asked for a route length in miles, the 1.5B read ``"distance_km": 179.7`` and
    answered "approximately 111.1 miles", converted in its head (wrongly: 111.66); told the
    figure had no source and to call a tool that gives it, it wrote the same answer again
    (held-out seed 6819). The tool that gives it was offered, and the figure it takes was in
    the history; as after a call over figures from nowhere, the call is what it follows."""
    asked = {unit.name for unit in requested_units(request)}
    into = converters_into(asked, [(d.name, d.description) for d in offered])
    if len(into) != 1 or any(call.name == into[0] for call in calls):
        return ""
    described = next(d.description for d in offered if d.name == into[0])
    return would_take(into[0], described, 1, request, figures)


def would_take(tool: str, description: str, given: int, request: str,
               figures: Sequence[Figure]) -> str:
    """``"; what would work: `tool` with 387.4, the `weight_kg` `exhibit_info` gave"`` for a
    call to ``tool`` (its ``description``) that was given ``given`` figures, some or all of
    them from nowhere, where the calls' results (``figures``) hold exactly as many figures
    it would take; ``""`` where they do not."""
    if given < 1 or given > _MOST:
        return ""
    taken = _taken(tool, description, request, figures)
    values = list(dict.fromkeys(f.value for f in taken))
    if len(values) != given:
        return ""
    first = {v: next(f for f in taken if f.value == v) for v in values}
    shown = " and ".join(written(v) for v in values)
    origins = ", ".join(dict.fromkeys(f"the `{f.key}` `{f.tool}` gave" for f in first.values()))
    return f"; what would work: `{tool}` with {shown}, {origins}"


def _taken(tool: str, description: str, request: str,
           figures: Sequence[Figure]) -> list[Figure]:
    """The result figures ``tool`` would take: in the unit it converts from, for a
    conversion; else under a field the request names."""
    for units in (name_units(tool), named_units(description)):
        if (pair := one_kind(units)) is not None:
            source = pair[0]
            return [f for f in figures if f.unit is not None and f.unit.name == source.name]
    words = request_words(request)
    return [f for f in figures if f.key and named_field(f.key, words)]

"""A conversion the request does not ask for is not run the first time: the model is told
the field the request asks about, or that the figure it converts is the one to use.

Offered a converter beside its lookups, a small model converts whatever the record it read
holds in the converter's unit, asked or not: for "Add up the insured value of Amber Room
Model and Silk Atlas" the 1.5B read ``{"weight_kg": 462.6, "insured_value_eur": 7658, ...}``
and called ``kilograms_to_pounds(462.6)``, added the pounds to the other exhibit's insured
value, was told at the end that a weight and a value do not add up (and what would work),
and made the same chain twice more (held-out first-hour seed 6820, ``mismatched``). At the
end of an attempt the wrong path is a dozen turns of the model's own history; at the
conversion it is one call.

The evidence is what the answer checks read (:mod:`.asked_field`): a field's name is its
author's label for what it holds, and the request names one field of that record and not
the one the figure came from. With grounding on (the default for local models), a call is
answered without running it when: it converts (one figure in, two units of one kind named by
the tool's name, arguments or description: :func:`.provenance.converts`), its figure is not
in the request, every field of the run's results that holds it is one the request does not
name, and a result that holds it also holds a field the request names (a figure, or a name
for "who"; :func:`.asked_field.named_beside`). The refusal says which field the request asks
about and what the tool gave under it (each record's figure, where several were read).
The same holds of a conversion of the field the request does name into a unit it does not
ask for (nor the output's fields): asked for "the combined ticket price" of two venues, the
1.5B converted each ``ticket_price_gbp`` to euros before adding, in both runs of that
question (held-out seed 6820 and its rerun), and the answer in euros is one the answer check
calls ``mismatched``. Not where the named field's figures come in two units of that kind (a
price in GBP and one in EUR): converting one may be what adding them up takes.

Refused once for the same call: made again, it runs (the check reads words, and the model
may know better); the refusal is the call's error observation, ``error_type``
``"unasked_conversion"``, in the trace with the rest. It ends on what to use, and names no
other tool's verb: refused with "Convert or add only figures of what the request asks for",
the 1.5B added the refused figure to the one asked (held-out seed 6821, a harvest plus an
area; the answer check caught it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import ToolCall
from .asked import asked_units, say_unit
from .asked_field import named_beside, named_field, request_words
from .provenance import (
    Figure,
    all_figures,
    calls_of,
    converts,
    figures_in,
    numbers_in,
    request_of,
    written,
)
from .state import RunState
from .units import Unit, asks_for

#: ``ToolCallRecord.error_type`` of a call refused here.
UNASKED_CONVERSION = "unasked_conversion"


def unasked_conversion(state: RunState, call: ToolCall, description: str) -> str | None:
    """Why ``call`` (to a tool described by ``description``) is not run: it converts a
    figure of a field the request does not name, read from a result that holds one it
    names, and the same call was not refused before; ``None`` to run it."""
    arguments: dict[str, Any] | None = call.arguments
    if not state.setup.core.grounding or arguments is None or (
            pair := converts(call.name, arguments, description)) is None:
        return None
    value = round(next(numbers_in(arguments)), 6)
    request = request_of(state)
    if value in figures_in(request):
        return None
    words = request_words(request)
    calls = calls_of(state)
    figures = all_figures(calls)
    holding = [f for f in figures if f.value == value and f.key]
    if not holding or any(r.error_type == UNASKED_CONVERSION and r.name == call.name
                          and r.args == arguments for r in state.trace.trace.tool_calls):
        return None
    named = [f for f in holding if named_field(f.key, words)]
    if named:
        return _unasked_unit(state, request, value, named[-1], pair, figures, words)
    asked = named_beside([holding], calls, figures, words)
    if asked is None:
        return None
    key, tool, said, _ = asked
    source = holding[-1]
    return (f"Not run: {written(value)} is `{source.key}` of `{source.tool}`, which the "
            f"request does not ask about; it asks about `{key}` (`{tool}` gave {said}): use "
            "that")


def _unasked_unit(state: RunState, request: str, value: float, source: Figure,
                  pair: tuple[Unit, Unit], figures: Sequence[Figure], words: set[str]
                  ) -> str | None:
    """Why a conversion of ``value``, the figure of a field the request names (``source``),
    into a unit the request does not ask for is not run; ``None`` where the request (or the
    output's fields) ask for that unit, or the named field's figures come in more than one
    unit of that kind (converting may be what adding them up takes)."""
    start, target = pair
    if asks_for(request, {u.name for u in asked_units(state)}, target):
        return None
    if any(f.unit is not None and f.unit.dimension == start.dimension
           and f.unit.name != start.name for f in figures if f.key and named_field(f.key, words)):
        return None
    # "with no figure in ...": told only "use that", the 1.5B answered the figure and the
    # conversion worked out in its head ("7.27 hectares, which is approximately 3.00 acres"),
    # which grounding then could not accept (held-out seed 6823, twice)
    return (f"Not run: the request does not ask for {say_unit(target)}; {written(value)} is "
            f"`{source.key}` as `{source.tool}` gave it: use that as it is, with no figure in "
            f"{say_unit(target)}, unless the request asks for another unit")

"""A sum of figures each converted into a unit nobody asked for.

The conversion check (:mod:`.asked`) reads an answer whose figure is a conversion tool's
result. A small model also converts each part before adding them up: asked for the output of
two solar farms added together, the 1.5B converted each farm's MWh to kWh with the tool it
had, added the two results and answered "3165400.0 MWh" (held-out first-hour seed 6814),
a figure a thousand times the one asked, with status ``success``: the answer's figure is the
adding tool's result and every part of it a tool's, so grounding and the sum checks saw
nothing off. Traced back through the sum (:func:`.provenance.traced`), each part is a
conversion's result in one unit the request does not name; the records gave them in
another. Told so, the model is shown the figures as the tools gave them, to add instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .provenance import Call, Figure, single, traced, written
from .units import Unit, asks_for


def converted_sum(request: str, asked: Collection[str], shown: str, made: int,
                  calls: Sequence[Call], figures: Sequence[Figure]) -> str | None:
    """What to tell the model when the answer's figure ``shown`` is the sum call ``made``
    over parts each converted into one unit that neither ``asked`` (the unit names the
    request asks for) nor the request's words name, else ``None``. Parts in different units
    are :mod:`.unlike_sum`'s; a sum with a part as a tool gave it is not this."""
    total = single(calls[made].result)
    parts = [] if total is None else traced(total, made + 1, calls, figures)
    if len(parts) < 2 or not all(p.converted_by and p.unit is not None for p in parts):
        return None
    units = {p.unit.name for p in parts if p.unit is not None}
    target = parts[0].unit
    if len(units) != 1 or target is None or asks_for(request, asked, target):
        return None
    given = [p.sources[-1] for p in parts if p.sources]
    tools = " and ".join(dict.fromkeys(f"`{p.converted_by}`" for p in parts))
    told = (f"the request does not ask for {target.said}; your answer's {shown} is "
            f"`{calls[made].name}` over figures {tools} converted into {target.said}")
    if len(given) < len(parts):
        return f"{told}: add the figures as the tools gave them, unless the request asks " \
               "for another unit"
    gave = ", ".join(f"{written(f.value)}{_unit(f.unit)} (`{f.key}` of `{f.tool}`)"
                     if f.key else f"{written(f.value)}{_unit(f.unit)}" for f in given)
    return (f"{told}: add {gave} as the tools gave them, and answer with that sum, unless "
            "the request asks for another unit")


def _unit(unit: Unit | None) -> str:
    return "" if unit is None else f" {unit.said}"

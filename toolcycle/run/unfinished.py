"""A computation the model began on figures from nowhere and never did again on the figures
it then found: a sum, or a unit conversion.

A small model asked for "the capacity of Blue Hall and Glasshouse added up" may call the
adding tool first, with figures it made up (``add([100, 150])``); grounding tells it that
result is no source (:mod:`.grounding`: a call over figures from nowhere vouches for
nothing), and it then looks both records up and answers with one of them, or with both side
by side, never adding them. Asked for a tank's volume in US gallons it may convert 1000
litres first, then read the tank's 40,998 litres and answer those beside the gallons of the
made-up 1000. Every figure it answers with came from a tool, so grounding passes it, and
nothing else in the run says it is not the computation the model itself set out to do.

The run can tell, from its typed parts alone. The model's own call says a computation is
wanted: a call whose result is the sum of the figures it was given
(:func:`.provenance.added_up`), or one that converts one figure between two units of one
kind (:func:`.provenance.conversion_of`). Its inputs were held by no earlier result and not
by the request, and no later call computed the same way. The calls after it found what it
should have computed over: figures under one field in two or more results (the records a
sum of that field reads), or, for a conversion, a figure in the unit it converts from
(``volume_l`` for ``litres_to_gallons``).

Read only where that is plain: an answer holding the computation's result over the found
figures (the sum, or the found figure times the conversion's own factor, worked out without
the tool) says nothing here. The figures named are those of a field the request names first
(:func:`.asked_field.named_field`: "capacity" in the request names ``capacity``, not
``ticket_price_gbp``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from .asked_field import named_field, request_words
from .provenance import (
    Call,
    Figure,
    added_up,
    conversion_of,
    figures_in,
    figures_of,
    numbers_in,
    single,
    written,
)

#: Fields named in a message, at most.
_SHOWN = 2


def unfinished(request: str, calls: Sequence[Call], answer: Collection[float]) -> str | None:
    """What to tell the model when the run's last computation was over figures from nowhere
    and the calls after it found figures to compute over (``answer``: the answer's figures),
    else ``None``."""
    last = next((i for i in range(len(calls) - 1, -1, -1)
                 if added_up(calls[i]) is not None or conversion_of(calls[i]) is not None),
                None)
    if last is None:
        return None
    computed = calls[last]
    inputs = added_up(computed) or list(numbers_in(computed.arguments))
    held = figures_in(request) | {f.value for i, call in enumerate(calls[:last])
                                  for f in figures_of(call, i)}
    made_up = [x for x in inputs if round(x, 6) not in held]
    if not made_up:
        return None  # a computation over found figures: the other checks judge it
    found = [f for index in range(last + 1, len(calls))
             for f in figures_of(calls[index], index) if f.key]
    if added_up(computed) is not None:
        listed = _to_add(request, found, answer)
        again, since = "added nothing up since", "them"
    else:
        listed = _to_convert(computed, found, answer, made_up[0])
        again, since = "converted nothing since", "it"
    if listed is None:
        return None
    return (f"you called `{computed.name}` on {', '.join(written(x) for x in made_up)}, which "
            f"no tool gave, and {again}; the tools have given {listed}: if the request asks "
            f"for {since} {'together' if since == 'them' else 'converted'}, call "
            f"`{computed.name}` with the figures it asks about and answer with its result")


def _to_add(request: str, found: list[Figure], answer: Collection[float]) -> str | None:
    """The fields found in two or more results, those the request names first; ``None``
    where there are none or the answer holds the sum of one of them."""
    by_key: dict[str, list[Figure]] = {}
    for figure in found:
        by_key.setdefault(figure.key, []).append(figure)
    groups = {key: figures for key, figures in by_key.items()
              if len({f.call for f in figures}) >= 2}
    words = request_words(request)
    groups = {k: v for k, v in groups.items() if named_field(k, words)} or groups
    if not groups or any(_holds(answer, math.fsum({f.call: f.value for f in figures}.values()))
                         for figures in groups.values()):
        return None
    return "; ".join(_listed(key, figures) for key, figures in list(groups.items())[:_SHOWN])


def _to_convert(computed: Call, found: list[Figure], answer: Collection[float],
                given: float) -> str | None:
    """The figures found in the unit the call converts from; ``None`` where there are none,
    or the answer holds one of them converted by the call's own factor."""
    units = conversion_of(computed)
    result = single(computed.result)
    if units is None or result is None:
        return None
    source = [f for f in found if f.unit is not None and f.unit.name == units[0].name]
    if not source:
        return None
    if given and any(_holds(answer, f.value * result / given) for f in source):
        return None  # converted by hand (a linear factor read off the call itself)
    by_key: dict[str, list[Figure]] = {}
    for figure in source:
        by_key.setdefault(figure.key, []).append(figure)
    return "; ".join(_listed(key, figures) for key, figures in list(by_key.items())[:_SHOWN])


def _listed(key: str, figures: list[Figure]) -> str:
    tools = "`, `".join(dict.fromkeys(f.tool for f in figures))
    return f"`{key}` {' and '.join(written(f.value) for f in figures)} (`{tools}`)"


def _holds(answer: Collection[float], value: float) -> bool:
    """Whether the answer holds ``value`` (to a hundredth, or 0.5 % for a rounded one)."""
    return any(math.isclose(value, x, rel_tol=5e-3, abs_tol=0.011) for x in answer)

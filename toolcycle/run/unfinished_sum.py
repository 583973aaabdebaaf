"""A sum the model began on figures from nowhere and never did again on the ones it found.

A small model asked for "the capacity of Blue Hall and Glasshouse added up" may call the
adding tool first, with figures it made up (``add([100, 150])``); grounding tells it that
result is no source (:mod:`.grounding`: a call over figures from nowhere vouches for
nothing), and it then looks both records up and answers with one of them, or with both side
by side, never adding them. Every figure of that answer came from a tool, so grounding
passes it, and nothing else in the run says it is not the sum the model itself set out to
compute. The run can tell, from its typed parts alone: the model's own first call says a sum
is wanted (a call whose result is the sum of the figures it was given:
:func:`.provenance.added_up`), its inputs were held by no result and not by the request, no
later call added anything up, and the calls after it found figures under one field in two
or more results (the records a sum of that field reads).

Read only where that is plain: an answer that is a later sum, or holds the sum of the found
figures (worked out without the tool), says nothing here. The check names the figures found,
those of a field the request names first (:func:`.asked_field.named_field`: "capacity" in
the request names ``capacity``, not ``ticket_price_gbp``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from ..words import TOTAL_WORDS, roots
from .asked_field import named_field, request_words
from .provenance import Call, Figure, added_up, figures_in, total, written

#: Fields named in the message, at most.
_SHOWN = 2


def unfinished_sum(request: str, calls: Sequence[Call], figures: Sequence[Figure],
                   answer: Collection[float]) -> str | None:
    """What to tell the model when the run's last sum was over figures from nowhere and the
    calls after it found figures to add (``figures``: what the calls' results hold,
    :func:`.provenance.figures_of`; ``answer``: the answer's figures), else ``None``."""
    sums = [(i, inputs) for i, call in enumerate(calls) if (inputs := added_up(call))]
    if not sums:
        return None
    last, inputs = sums[-1]
    held = figures_in(request) | {f.value for f in figures if f.call < last}
    made_up = [x for x in inputs if round(x, 6) not in held]
    if not made_up:
        return None  # a sum over found figures: the other checks judge it
    found: dict[str, list[Figure]] = {}
    for figure in figures:
        if figure.call > last and figure.key:
            found.setdefault(figure.key, []).append(figure)
    groups = {key: figures for key, figures in found.items()
              if len({f.call for f in figures}) >= 2}
    words = request_words(request)
    named = {key: figures for key, figures in groups.items() if named_field(key, words)}
    groups = named or groups
    if not groups or any(_sums(figures, answer) for figures in groups.values()):
        return None
    listed = "; ".join(
        f"`{key}` {' and '.join(written(f.value) for f in figures)} "
        f"(`{'`, `'.join(dict.fromkeys(f.tool for f in figures))}`)"
        for key, figures in list(groups.items())[:_SHOWN])
    tool = calls[last].name
    return (f"you called `{tool}` on {', '.join(written(x) for x in made_up)}, which no tool "
            f"gave, and added nothing up since; the tools have given {listed}: if the request "
            f"asks for them together, call `{tool}` with the figures it asks about and answer "
            "with its result")


def untotalled(request: str, listed: bool, calls: Sequence[Call], figures: Sequence[Figure],
               answer: Collection[float]) -> str | None:
    """What to tell the model when the request asks for a total (:data:`~toolcycle.words.
    TOTAL_WORDS`) over things it lists (``listed``: two names side by side), two or more
    records the calls read hold the field it names (or, where it names none, the field the
    answer's figure was read from), and the answer gives one of their figures and not their
    sum; else ``None``.

    Why: asked for "the combined capacity of Riverside Arena and Old Mill Stage", the 1.5B
    read both records and answered one capacity, a ``success``. Every figure came from a
    tool and the field is the one asked about, so no other check sees it; the request's own
    words say a total was wanted."""
    words = request_words(request)
    if not listed or not roots(TOTAL_WORDS) & words:
        return None
    # the fields the request names, and the field of the answer's own figure where the
    # request names none of a record's (it said which quantity it meant: "route length" for
    # a `distance_km`, seen on the 1.5B, held-out seed 6813)
    answered = {f.key for f in figures if f.key and any(
        math.isclose(f.value, value, rel_tol=1e-9, abs_tol=0.011) for value in answer)}
    found: dict[str, list[Figure]] = {}
    for figure in figures:
        if figure.key and (named_field(figure.key, words) or figure.key in answered):
            found.setdefault(figure.key, []).append(figure)
    for key, group in found.items():
        per_call = {f.call: f for f in group}
        if len(per_call) < 2 or _sums(group, answer):
            continue
        given = [f for f in per_call.values() if any(
            math.isclose(f.value, value, rel_tol=1e-9, abs_tol=0.011) for value in answer)]
        if given:
            listed_figures = " and ".join(written(f.value) for f in per_call.values())
            return (f"the request asks for `{key}` of the things it names together; your "
                    f"answer gives {written(given[0].value)}, `{key}` of one record "
                    f"(`{given[0].tool}` gave {listed_figures}): add them up and answer with "
                    "their sum")
    return None


def _sums(figures: Sequence[Figure], answer: Collection[float]) -> bool:
    """Whether the answer holds the sum of ``figures`` (one per call), worked out by hand."""
    per_call = {f.call: f.value for f in figures}
    whole = total(per_call.values())
    return whole is not None and any(math.isclose(whole, value, rel_tol=1e-9, abs_tol=0.011)
                                     for value in answer)

"""An answer that says what was asked is not there, where the run's own results say it is.

A small model that stops early often ends with "the capacity of Les Pins is not available":
no figure, no name, nothing for grounding to check, and the run was a ``success``. Two kinds
of evidence in the run's typed parts say the answer is wrong, not merely short:

- a lookup gave an id that no call used, and an offered tool takes it
  (:func:`.unused_handle.unused_handle`): the thing exists, and the step that reads its
  record was never made (the chain stopped after its first call);
- a result holds a field the request names (:func:`.asked_field.named_field`, ``capacity``
  for "what is the capacity"), with a value: what was asked was returned. (A value that says
  there is none, "n/a" or "unknown", is no value: the record agrees with the answer.)

Either way the status is ``"ungrounded"``: the answer rests on no result, and one says
otherwise. Grounding has re-asked such a run already (the unused id, the unused results);
this is what the status says when the model kept its answer. An answer that says so without
such evidence (every lookup found nothing) stands: "no open tickets" can be the answer.
Which words say "missing" is English (:data:`toolcycle.words.SAID_MISSING`, with the reason).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..words import NO_VALUE, is_empty_result, is_empty_value
from ..words import SAID_MISSING as SAID_MISSING  # (the words: defined there)
from .asked_field import named_field, request_words
from .provenance import (
    Call,
    calls_of,
    figures_in,
    keyed_leaves,
    number,
    request_of,
    result_value,
)
from .state import RunState
from .unused_handle import unused_handle

#: The most of an answer read for the words (an answer saying so says it early).
_READ = 2000


def said_missing(state: RunState, answer: str) -> str | None:
    """What in the run contradicts the answer's "not there" (said in words, for tests and
    debugging), or ``None`` where the answer says no such thing or nothing contradicts it."""
    if not SAID_MISSING.search(answer[:_READ]):
        return None
    if unused_handle(state) is not None:
        return "a lookup gave an id that no call used, and an offered tool takes it"
    return named_returned(request_of(state), calls_of(state), answer)


def named_returned(request: str, calls: Sequence[Call], answer: str) -> str | None:
    """Which call returned a value under a field the ``request`` names that the ``answer``
    does not give, or ``None``. (A value the answer gives makes its "missing" words about
    something else: "Ann Lee; her phone number is not listed".)"""
    low, figures = answer.lower(), figures_in(answer)
    for call, key, value in _named_leaves(request, calls):
        if _holds_nothing(value):
            continue
        figure = number(value)
        given = (figure in figures if figure is not None
                 else str(value).strip().lower() in low)
        if not given:
            return f"`{call.name}` returned `{key}`, which the request asks about"
    return None


def record_agrees(state: RunState, answer: str) -> bool:
    """Whether the answer says what was asked is not there and the results say so too: a
    field the request names holds a value that says there is none (``"range_km": "n/a"``),
    and no field it names holds a value the answer leaves out. Such an answer uses that
    result (:func:`.unused_results.unused` asks nothing of it)."""
    if not SAID_MISSING.search(answer[:_READ]):
        return False
    request, calls = request_of(state), calls_of(state)
    return (any(_holds_nothing(value) for _, _, value in _named_leaves(request, calls))
            and named_returned(request, calls, answer) is None)


def _named_leaves(request: str, calls: Sequence[Call]) -> Iterator[tuple[Call, str, Any]]:
    """Each value the calls returned under a field the ``request`` names, with its call and
    field (:func:`.asked_field.named_field`)."""
    words = request_words(request)
    for call in calls:
        for key, value in keyed_leaves(result_value(call.result), 2000):
            if key and named_field(key, words):
                yield call, key, value


def _holds_nothing(value: Any) -> bool:
    """A value that is empty or says in words that there is none ("n/a", "unknown", "not
    available"): a result giving it says what the answer says, that the thing is not there."""
    if isinstance(value, str):
        return (is_empty_result(value) or NO_VALUE.match(value) is not None
                or SAID_MISSING.search(value) is not None)
    return is_empty_value(value)

"""A value written in the shape of an identifier an error shows by example.

A tool that refuses an id often says what ids look like: "unknown booking number '75285'
(numbers look like B-00000)", "no order 'ord4412': ids are like ORD-1234". The value the model
passed holds the right digits in the wrong shape (the prefix left out, another case, no
separator), and a small model shown the example tends to pass its own writing again or to
answer that the booking does not exist. Where the example settles the shape, the rewriting
is mechanical: the example's letters and separators around the value's digits.

Settled means: the error shows exactly one identifier example (letters and one run of
digits, the call's own values aside) whose digit run is as long as the value's digits (at
least :data:`MIN_DIGITS`), and the value holds no letters other than the example's. A
value already in that shape, or one that fits several examples, is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The fewest digits an id's number has here: shorter runs ("utf-8", "v2") are versions and
#: codes, not the number of a record.
MIN_DIGITS = 3
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_/.:#][A-Za-z0-9]+)*")
_DIGITS = re.compile(r"\d+")


def in_example_shape(value: str, error: str, besides: Iterable[str] = ()) -> str | None:
    """``value`` written in the shape of the one identifier example ``error`` shows, where
    that differs from how it is written; else None. ``besides``: the call's own values, which
    an error quoting them does not offer as examples."""
    value = value.strip()
    digits = "".join(_DIGITS.findall(value))
    letters = _letters(value)
    if len(digits) < MIN_DIGITS or len(_DIGITS.findall(value)) != 1:
        return None
    own = {b.strip().casefold() for b in besides} | {value.casefold()}
    written = {
        run_filled(token, digits) for token in _TOKEN.findall(error)
        if token.casefold() not in own and _shows_an_id(token, len(digits))
        and (not letters or letters == _letters(token))
    }
    if len(written) != 1:
        return None
    shaped = written.pop()
    return None if shaped == value else shaped


def _shows_an_id(token: str, length: int) -> bool:
    """Whether ``token`` is an identifier example with one digit run of ``length``."""
    runs = _DIGITS.findall(token)
    return len(runs) == 1 and len(runs[0]) == length and bool(_letters(token))


def _letters(text: str) -> str:
    return "".join(c for c in text if c.isalpha()).casefold()


def run_filled(example: str, digits: str) -> str:
    """``example`` with its one digit run replaced by ``digits``."""
    return _DIGITS.sub(lambda _: digits, example, count=1)


def the_id_as(example: str, task: str) -> str | None:
    """The one number ``task`` gives with as many digits as the id ``example``'s (letters and
    one run of at least :data:`MIN_DIGITS` digits), written in the example's shape; None
    where ``example`` is no such id, or the task gives no such number or several.

    Why: an id's example in advice is a value some earlier task passed ("Pass number like
    "CX-31146""), and a small model copies it as the value; written with this task's own
    number ("CX-77160" for "contract number 77160") it shows the shape and leaks nothing."""
    runs = _DIGITS.findall(example)
    if len(runs) != 1 or len(runs[0]) < MIN_DIGITS or not _letters(example):
        return None
    numbers = {n for n in _DIGITS.findall(task[:4000]) if len(n) == len(runs[0])}
    return run_filled(example, numbers.pop()) if len(numbers) == 1 else None


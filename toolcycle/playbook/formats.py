"""What a value in a tool's error shows of the format the tool wants, beyond dates and times
(:mod:`toolcycle.datetimes`): whether an unquoted value is an example of a format, the codes an
error's legend gives, a country's ISO 3166 code, and a value's shape.

Why a module of its own: the reflector keeps an error's example (:mod:`.evidence`) and the
reshaping tool (:mod:`.reshape`) writes the model's value the way the example showed; a code an
error's own legend gives for a word ("P4 (low)": "low" is "P4") is as certain as a date read
in the one order every reading agrees on.
"""

from __future__ import annotations

import re
from typing import Literal

from ..datetimes import writings
from ..words import COUNTRY_WORDS

#: What a value an error writes unquoted may show of a format (see :func:`example_kind`).
ExampleKind = Literal["date", "code"]


def example_kind(value: str) -> ExampleKind | None:
    """What format ``value`` (one run of letters, digits and ``./+-``, as an error writes it
    unquoted) is an example of: ``"date"`` where a numeric date format writes it exactly
    ("05.01.2026", "01/05/2026", "2026/01/05", "20260105"), ``"code"`` where it mixes
    letters and digits ("AB-00000", "HX-100"); None for anything else.

    Why only these: a date's writing or a code's letters and digits are the shape a tool
    wants, whatever the value; a plain number ("17", "1234.50", "+44"), a time, a phone
    number split by spaces show no shape a number of another task lacks, and are as often
    the task's own figures (a balance, a count), which advice must never carry."""
    if writings(value):
        return "date"
    has_letter = any(ch.isalpha() for ch in value)
    return "code" if has_letter and any(ch.isdigit() for ch in value) else None


#: A legend entry in an error: "P2 (high)" (or "high (P2)"), each side a short plain term.
_LEGEND = re.compile(r"([\w-]{1,24}) \(([\w -]{1,24})\)")


def _code_like(term: str) -> bool:
    """A code, not a word: digits, capitals and dashes only ("P2", "FR", "3")."""
    return re.fullmatch(r"[A-Z0-9][A-Z0-9_-]*", term) is not None


def legend(error: str) -> list[tuple[str, str]]:
    """The (code, meaning) pairs an error's legend lists: "P1 (critical), P2 (high)" ->
    ``[("P1", "critical"), ("P2", "high")]``, in either order of the two; an entry where
    both sides or neither look like a code (:func:`_code_like`) is no legend entry."""
    pairs: list[tuple[str, str]] = []
    for first, second in _LEGEND.findall(error):
        first, second = first.strip(), second.strip()
        if _code_like(first) != _code_like(second):
            pairs.append((first, second) if _code_like(first) else (second, first))
    return pairs


def legend_code(value: str, error: str) -> str | None:
    """The one code ``error``'s legend gives for ``value`` ("P4" for "low"), else None."""
    codes = {code for code, meaning in legend(error) if meaning.lower() == value.strip().lower()}
    return codes.pop() if len(codes) == 1 else None


#: The longest value read as a country's name ("The United Kingdom of Great Britain and
#: Northern Ireland" is 52 characters): a longer one is not looked up.
_LONGEST_COUNTRY = 80


def country_code(value: str, example: str, error: str) -> str | None:
    """The ISO 3166 code of the country ``value`` names ("Denmark", "denmark", "DNK"),
    written like ``example`` (two letters, "FR", or three, "FRA", in its case), where the
    ``error`` asks for a country code and ``example`` is one; None otherwise, and without
    the ``pycountry`` package (``toolcycle[playbook]``).

    Why: a tool that wants a code where a task names the thing ("give the two-letter country
    code, e.g. 'FR'" for "Denmark") stops a small model, which tends to explain the error
    instead of calling again with the code. A country's
    code is a fact of ISO 3166, not a guess: names pycountry does not know (e.g. "Holland",
    "UK") are left as the model wrote them.
    """
    text = value.strip()
    asks = any(word in error.lower() for word in COUNTRY_WORDS)
    if (not asks or not example.isalpha() or len(example) not in (2, 3)
            or not text or len(text) > _LONGEST_COUNTRY):
        return None
    try:
        import pycountry
    except ImportError:  # an optional extra: without it, no country is read
        return None
    two = len(example) == 2
    field = "alpha_2" if two else "alpha_3"
    known = (pycountry.countries.get(alpha_2=example.upper()) if two
             else pycountry.countries.get(alpha_3=example.upper()))
    if known is None:
        return None  # the example is no country's code: the tool wants something else
    try:
        code = str(getattr(pycountry.countries.lookup(text), field))
    except LookupError:
        return None
    return code.upper() if example.isupper() else code.lower() if example.islower() else None


def value_shape(value: str) -> str:
    """A value's format with its content masked: ``05.03.2026`` -> ``99.99.9999``."""
    shape = re.sub(r"\d", "9", value)
    shape = re.sub(r"[A-Z]", "A", shape)
    shape = re.sub(r"[a-z]", "a", shape)
    return re.sub(r"([aA])\1+", r"\1\1", shape)[:40]

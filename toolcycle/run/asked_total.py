"""The total a request asks for, where the run read each listed thing's record: a figure an
answer may state without a tool having added it.

Grounding vouches for an answer's figures by finding them in the sources; a sum the model
works out itself is in none of them. Seen on the 1.5B (held-out first-hour seed 6815): asked
to "add up the harvest of Long Meadow and Stony Field", it read both fields' records
(``harvest_kg`` 4382 and 10229) and answered "14611 kg", right, and was told 14611 had no
source; it went on to add made-up figures and ended ``ungrounded``. The answer showed no
parts (:func:`.figures.is_shown_sum` vouches for a total whose parts it states), but the run
itself can tell that 14611 is exactly the sum the request asks for: the request asks for a
total in words (:data:`~toolcycle.words.TOTAL_WORDS`) of the one field it names, over the
things it lists, and each thing's record was read (:func:`.looked_up.records_of`). That
figure is derived from the sources by the operation the request names, so it is supported;
any other figure is not.

Not where the request asks for another unit of the field's kind (the records' sum would be
in the wrong one), nor where one of the things' records was not read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..words import TOTAL_WORDS, roots
from .asked_field import named_field, request_words
from .looked_up import listed, names_in, records_of
from .provenance import Call, Figure, total
from .units import Unit, field_unit, requested_units

#: How much of the request is read (its end: the prompt comes last).
_READ = 20_000


def named_key(words: set[str], figures: Sequence[Figure]) -> str | None:
    """The one field of the results the request's ``words`` name, or ``None`` (none, or
    several)."""
    keys = list(dict.fromkeys(f.key for f in figures if f.key and named_field(f.key, words)))
    return keys[0] if len(keys) == 1 else None


def total_records(request: str, words: set[str], key: str, asked: Sequence[Unit],
                  calls: Sequence[Call], figures: Sequence[Figure]) -> dict[str, float] | None:
    """Each listed thing's ``key`` figure, where the request (``words``, its words) asks
    for their total in words, the run read each one's record, and the request asks for no
    other unit of the field's kind (``asked``: the records' sum would be in the wrong one);
    else ``None``. What a total over the things named reads, for the sum that would work
    (:mod:`.unlike_sum`) and for the total asked (:func:`asked_total`)."""
    if not roots(TOTAL_WORDS) & words:
        return None
    recorded = field_unit(key)
    if recorded is not None and any(u.dimension == recorded.dimension
                                    and u.name != recorded.name for u in asked):
        return None
    found = records_of(names_in(request), key, calls, figures)
    return found if len(found) >= 2 and listed(request, list(found)) else None


def asked_total(request: str, calls: Sequence[Call], figures: Sequence[Figure]) -> float | None:
    """The sum of the named field over the listed things' records, where the request asks
    for that total (see the module docstring); else ``None``."""
    text = request[-_READ:]
    words = request_words(text)
    key = named_key(words, figures)
    found = None if key is None else total_records(text, words, key, requested_units(text), calls,
                                                   figures)
    return None if found is None else total(found.values())


def is_total(written: str, total: float | None) -> bool:
    """Whether a figure as an answer writes it (``14,611``, ``14611.0``) is ``total``, to
    the cent."""
    if total is None:
        return False
    try:
        value = float(written.replace(",", ""))
    except ValueError:
        return False
    return math.isclose(value, total, rel_tol=1e-9, abs_tol=0.011)

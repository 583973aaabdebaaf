"""Figures as answers and tool results write them: how one is found in text, and the key two
writings of the same number share.

Why a module: the loop's answer checks (grounding, and whether an answer uses what the
tools found) each compare figures between an answer and its
sources, and must agree on what a figure is and when two are the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: A figure: a number standing on its own. Digits joined to letters by a hyphen or an
#: underscore are part of a name (``TR-195``, ``SKU_3310``), not a figure: seen on the 1.5B
#: (first-hour held-out agents), ``add([479.2, 195])`` with 195 taken from the id ``TR-195``
#: was grounded by that id, and its sum a ``success``.
FIGURE = re.compile(r"(?<![\w.])(?<![^\W\d_][-_])\d[\d,]*(?:\.\d+)?")


def figure_key(text: str) -> str:
    """``1,200.50`` and ``1200.5`` alike: no group commas, no trailing decimal zeros, no
    leading zeros."""
    value = text.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value.lstrip("0") or "0"


#: Figures an answer states that :func:`is_shown_sum` tries as addends, at most (subsets of
#: them are tried: 2**10 sums).
_ADDENDS = 10


def is_shown_sum(written: str, stated: list[str],
                 alike: Callable[[list[str]], bool] = lambda addends: True) -> bool:
    """Whether the figure ``written`` is the sum of two or more distinct figures of
    ``stated`` that are ``alike`` (the caller's test: one quantity), to the precision
    ``written`` is written in ("23.47" within 0.005, "23" within 0.5: a total the writer
    rounded).

    Why: a model that states the figures it added and their total ("8.07 kW and 15.4 kW ...
    a total of 23.47 kW") shows its arithmetic; the total is in no tool result, and read as
    a figure from nowhere, a right answer ended ``ungrounded`` (the 1.5B, held-out
    first-hour seed 6814). Only addends the caller vouches for are passed in; one figure
    twice is not a sum of two (a record's figure added to itself is a known slip)."""
    target = float(written.replace(",", ""))
    tolerance = 0.5 * 10 ** -len(written.partition(".")[2])
    shown = list(dict.fromkeys(stated))[:_ADDENDS]
    values = [float(s.replace(",", "")) for s in shown]
    for mask in range(1, 1 << len(values)):
        chosen = [i for i in range(len(values)) if mask >> i & 1]
        if len(chosen) > 1 and abs(sum(values[i] for i in chosen) - target) < tolerance \
                and alike([shown[i] for i in chosen]):
            return True
    return False

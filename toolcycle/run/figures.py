"""Figures as answers and tool results write them: how one is found in text, and the key two
writings of the same number share.

Why a module: the loop's answer checks (grounding, and whether an answer uses what the
tools found) each compare figures between an answer and its
sources, and must agree on what a figure is and when two are the same.
"""

from __future__ import annotations

import re

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

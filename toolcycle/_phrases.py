"""Whether a text says a word or phrase: as whole words, case aside.

One matcher for every place that asks it (the loop's recovery advice reading a tool's error,
the playbook reading errors, results and prompts): "date" is said by "invalid date" and not
by "update", and "New York" by "in new  york" (words split by any white space). Whole words
because a parameter or value named inside a longer word is a coincidence, not a mention.
"""

from __future__ import annotations

import re


def says(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` as whole words, case aside (an empty or blank
    ``phrase`` is said by no text)."""
    words = [re.escape(w) for w in phrase.split()]
    if not words:
        return False
    pattern = r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None

"""toolcycle.words.says: the one whole-word matcher the loop and the playbook share."""

from __future__ import annotations

import pytest

from toolcycle.words import says


@pytest.mark.parametrize(("text", "phrase", "said"), [
    ("invalid date '2026-11-23'", "date", True),
    ("please update the record", "date", False),     # inside a longer word: no mention
    ("Ships to New  York today", "new york", True),   # any white space between the words
    ("ships to Newark", "new york", False),
    ("order_id is required", "order_id", True),
    ("the order_ids are", "order_id", False),
    ("price (USD) 4.5", "(USD)", True),                # regex characters are plain text
    ("anything", "", False),                           # nothing is said by no text
    ("anything", "   ", False),
])
def test_a_phrase_is_said_as_whole_words_case_aside(text: str, phrase: str, said: bool) -> None:
    assert says(text, phrase) is said

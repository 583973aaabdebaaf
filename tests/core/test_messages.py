"""Message construction: mistakes that would silently drop the text fail at once."""

from __future__ import annotations

import pytest

from toolcycle.messages import Message, TextPart


def test_a_string_in_place_of_the_parts_is_refused() -> None:
    # A string iterates as characters, none of them a part: the message would read as empty.
    with pytest.raises(TypeError, match="list of parts"):
        Message("user", "What is 2 + 2?")  # type: ignore[arg-type]


def test_parts_given_as_a_list_keep_their_text() -> None:
    assert Message("user", [TextPart("What is 2 + 2?")]).text == "What is 2 + 2?"
    assert Message.user("hi").text == "hi"

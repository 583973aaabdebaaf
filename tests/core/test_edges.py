"""Defects at the edges of the engine: untrusted tool results, model-written arguments, tool
schemas and configuration values that used to end a run with a raw exception."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, tool
from toolcycle.testing import ScriptedModel, call
from toolcycle.tools import MAX_INT_DIGITS, serialize_result

# -- rel-10: tool return values that cannot be serialized -------------------------------------


class _BrokenRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_an_integer_past_the_digit_limit_is_written_out() -> None:
    text, ok = serialize_result(10**5000)
    assert ok and text == "1" + "0" * 5000


def test_an_integer_past_the_cap_is_an_unserializable_result() -> None:
    text, ok = serialize_result(10 ** (MAX_INT_DIGITS + 10))
    assert not ok and text.startswith("[unserializable result: an integer of about")
    assert len(text) < 500


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"n": 10**5000}, "{'n': <int of"),
        (_nested(100_000), "[[[["),
        (_BrokenRepr(), "<_BrokenRepr instance at"),
        ([_BrokenRepr()] * 1_000_000, "<_BrokenRepr instance at"),
    ],
    ids=["big int inside", "deep list", "broken repr", "a million opaque items"],
)
def test_values_without_json_form_become_bounded_marked_text(value: Any, shown: str) -> None:
    text, ok = serialize_result(value)
    assert not ok
    assert text.startswith("[unserializable result: ") and shown in text
    assert len(text) < 10_000


@pytest.mark.parametrize("returned", [10**5000, _nested(100_000), _BrokenRepr()],
                         ids=["big int", "deep list", "broken repr"])
async def test_a_tool_returning_an_unserializable_value_does_not_end_the_run(
    returned: Any,
) -> None:
    @tool
    def ok() -> str:
        """Fine."""
        return "fine"

    @tool
    def odd() -> Any:
        """Returns something awkward."""
        return returned

    model = ScriptedModel([[call("ok"), call("odd")], "done"])
    result = await Agent(model, "t", [ok, odd]).run("go")
    assert result.output == "done"
    first, second = result.messages[-2].results
    assert first.content == "fine" and not first.is_error
    assert second.is_error == (type(returned) is not int)

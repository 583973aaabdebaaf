"""Defects at the edges of the engine: untrusted tool results, model-written arguments, tool
schemas and configuration values that used to end a run with a raw exception."""

from __future__ import annotations

import http.server
import threading
from typing import Any

import pytest

from toolcycle import Agent, Tool, tool
from toolcycle.errors import ConfigurationError
from toolcycle.messages import ToolCall
from toolcycle.testing import ScriptedModel, call
from toolcycle.tools import (
    MAX_INT_DIGITS,
    ToolArgumentsError,
    ToolSpec,
    serialize_result,
)

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


# -- rel-11 / rel-15: model-written arguments Python cannot read or JSON cannot hold -----------

BIG_INT_ARGS = '{"x": ' + "1" * 5000 + "}"
DEEP_ARGS = '{"x": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize("raw", [BIG_INT_ARGS, DEEP_ARGS], ids=["5000 digits", "5000 deep"])
def test_json_that_python_refuses_is_a_parse_error(raw: str) -> None:
    made = ToolCall.from_raw("c1", "echo", raw)
    assert made.arguments is None and made.raw_arguments == raw
    assert made.parse_error is not None and made.parse_error.startswith("arguments cannot be read")


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": {"Ann", "Bob"}}, "arguments hold a set"),
        ({"name": b"Ann"}, "arguments hold a bytes value (b'Ann') at name"),
        ({"z": [1, 2j]}, "arguments hold a complex value (2j) at z/1"),
        ({"x": float("nan")}, "arguments hold nan at x, not a JSON number"),
        ({"n": 10**5000}, "arguments hold an integer of over 4300 digits at n"),
        ({"deep": _nested(2000)}, "nested deeper than 256 levels"),
        (["not", "an", "object"], "arguments must be a JSON object, got list"),
        (None, "arguments must be a JSON object, got NoneType"),
    ],
)
def test_from_args_never_raises_on_values_without_json_form(arguments: Any, problem: str) -> None:
    made = ToolCall.from_args("c1", "lookup", arguments)
    assert made.arguments is None
    assert made.parse_error is not None and problem in made.parse_error
    assert isinstance(made.raw_arguments, str) and len(made.raw_arguments) < 10_000


def test_from_value_writes_tuples_as_lists_and_keeps_the_model_text_on_failure() -> None:
    made = ToolCall.from_value("c1", "f", {"pair": (1, (2, 3))}, raw="{'pair': (1, (2, 3))}")
    assert made.arguments == {"pair": [1, [2, 3]]} and made.raw_arguments == '{"pair": [1, [2, 3]]}'
    refused = ToolCall.from_value("c2", "f", {"s": {1}}, raw="{'s': {1}}")
    assert refused.arguments is None and refused.raw_arguments == "{'s': {1}}"
    keyed = ToolCall.from_value("c3", "f", {"x": {1: "a"}})
    assert keyed.parse_error == "arguments hold the key 1 at x; JSON keys are strings"


# -- rel-12: schema references that point nowhere, or outside the schema ----------------------


def _schema(ref: str, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"$ref": ref}}, **extra}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (_schema("#/$defs/missing"), "$ref '#/$defs/missing' at /properties/x points to nothing"),
        (_schema("#/$defs/a~1c", **{"$defs": {"a/b": {}}}), "$ref '#/$defs/a~1c'"),
        (_schema("file:///etc/passwd"), "$ref 'file:///etc/passwd' at /properties/x points "
                                        "outside the schema"),
        (_schema("other.json#/x"), "$ref 'other.json#/x' at /properties/x points outside"),
    ],
    ids=["missing", "escaped pointer", "file", "relative document"],
)
def test_a_reference_to_nothing_is_a_configuration_error(
    schema: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Tool.from_schema("lookup", "Look up.", schema, lambda **kw: "ran")
    assert any(problem in p for p in caught.value.problems), caught.value.problems


def test_every_bad_reference_is_listed_at_once() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"},
                                               "b": {"$ref": "https://example.com/b.json"}}}
    with pytest.raises(ConfigurationError) as caught:
        Tool.from_schema("lookup", "Look up.", schema)
    assert len(caught.value.problems) == 2


def test_remote_references_are_never_fetched() -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/schema.json"
    try:
        for schema in (_schema(url),  # found by the walk
                       _schema("schema.json", **{"$id": url.rsplit("/", 1)[0] + "/root"})):
            with pytest.raises(ConfigurationError):  # the second one by the refusing compiler
                Tool.from_schema("lookup", "Look up.", schema)
    finally:
        server.shutdown()
        server.server_close()
    assert hits == []


def test_references_inside_the_schema_and_to_meta_schemas_are_fine() -> None:
    schema = _schema("#/$defs/a~1b", **{"$defs": {"a/b": {"type": "integer"}}})
    made = Tool.from_schema("lookup", "Look up.", schema)
    assert made.validate({"x": 1}) == {"x": 1}
    with pytest.raises(ToolArgumentsError):
        made.validate({"x": "one"})
    Tool.from_schema("meta", "d", _schema("https://json-schema.org/draft/2020-12/schema"))


async def test_a_validator_failure_is_an_argument_error_not_a_crash() -> None:
    unchecked = Tool(ToolSpec("lookup", "Look up.", _schema("#/$defs/missing")),
                     lambda **kw: "ran", check_schema=False)
    with pytest.raises(ToolArgumentsError) as caught:
        unchecked.validate({"x": 1})
    assert "argument schema cannot be used" in caught.value.problems[0]
    model = ScriptedModel([call("lookup", {"x": 1}), "done"])
    result = await Agent(model, "t", [unchecked]).run("go")
    assert result.output == "done" and result.tool_calls[0].error is not None


# -- ScriptedModel call ids never collide with the history it is given -------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_new_scripted_model_continues_a_conversation() -> None:
    script: list[Any] = [call("add", {"a": 1, "b": 2}), "3"]
    first = await Agent(ScriptedModel(script), tools=[add]).run("1+2?")
    model = ScriptedModel([call("add", {"a": 3, "b": 4}), [call("add", {"a": 5, "b": 6}),
                                                            call("add", {"a": 0, "b": 0},
                                                                 id="call_4")], "done"])
    second = await Agent(model, tools=[add]).run("more", message_history=first.messages)
    ids = [c.id for m in second.messages for c in m.tool_calls]
    assert ids == ["call_1", "call_2", "call_3", "call_4"]  # deterministic, and none repeats
    again = await Agent(ScriptedModel([call("add", {"a": 3, "b": 4}), "7"]), tools=[add]).run(
        "more", message_history=first.messages)
    assert [c.id for m in again.messages for c in m.tool_calls] == ["call_1", "call_2"]


async def test_an_empty_reply_is_no_answer_but_a_retry() -> None:
    """new-04: a reply with neither text nor calls used to end the run as a success with "".
    It is rejected like any protocol slip: the next attempt is told, and the run answers."""
    from toolcycle import Agent, InvalidResponse, Limits
    from toolcycle.models.scripted import ScriptedModel

    model = ScriptedModel(["", "  \n", "42"])
    result = await Agent(model, "x", limits=Limits(max_attempts=3)).run("6 x 7?")
    assert result.output == "42"
    assert [a.success for a in result.trace.attempts] == [False, False, True]
    assert "your reply was empty" in model.requests[1].last_message.text
    with pytest.raises(InvalidResponse) as caught:
        await Agent(ScriptedModel([""]), "x", limits=Limits(max_attempts=1)).run("6 x 7?")
    assert caught.value.result is not None
    assert caught.value.result.termination.reason == "max_attempts"

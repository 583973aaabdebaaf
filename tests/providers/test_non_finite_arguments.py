"""NaN and infinite numbers in model-written arguments (r2-18).

Python's ``json`` reads ``NaN``, ``Infinity`` and ``1e999`` although JSON has no such values.
Kept in a call, they made the next request unserialisable on the wires that send arguments as
an object (Anthropic's streamed calls ended the run MODEL_ERROR). Every adapter must turn them
into a call the loop answers with an "invalid arguments" observation, and the next request,
which carries that call, must be accepted by the validating server.
"""

from __future__ import annotations

import json

import pytest

from toolcycle import Agent, tool
from toolcycle.messages import ToolCall, parse_json_object

from .conftest import anthropic_model, functions_model, gemini_model, openai_model, responses_model
from .script import Call, Reply
from .server import ProviderServer

RAW = ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1e999}',
       '{"a": 1, "b": [2, {"c": -1e400}]}']

MAKERS = {"openai": openai_model, "functions": functions_model, "anthropic": anthropic_model,
          "responses": responses_model, "gemini": gemini_model}


@tool
def add(a: float, b: list[float] | None = None) -> float:
    """Add."""
    return a


@pytest.mark.parametrize("raw", RAW)
def test_non_finite_numbers_are_a_parse_error(raw: str) -> None:
    assert parse_json_object(raw)[0] is None
    call = ToolCall.from_raw("c1", "add", raw)
    assert call.arguments is None and call.parse_error is not None
    assert call.raw_arguments == raw  # what the model wrote, for the observation


def test_finite_numbers_still_parse() -> None:
    assert parse_json_object('{"a": 1.5e300, "b": -0.0, "c": 3}')[0] == {
        "a": 1.5e300, "b": -0.0, "c": 3}


@pytest.mark.parametrize("raw", RAW)
@pytest.mark.parametrize(("wire", "stream"), [
    ("openai", False), ("openai", True), ("functions", False), ("anthropic", True),
    ("anthropic", False), ("responses", False), ("responses", True), ("gemini", False),
    ("gemini", True)])
async def test_the_call_is_answered_and_the_run_goes_on(
    server: ProviderServer, wire: str, stream: bool, raw: str
) -> None:
    server.script([Reply(calls=[Call("add", raw)]), Reply(text="done")])
    agent = Agent(MAKERS[wire](server), "t", [add])
    result = await (agent.stream("go").get_result() if stream else agent.run("go"))
    assert result.output == "done"
    (record,) = result.tool_calls
    assert record.error is not None and "add" in record.error


@pytest.mark.parametrize("raw", RAW)
@pytest.mark.parametrize("protocol", ["json", "react"])
async def test_text_protocols_answer_the_call_too(raw: str, protocol: str) -> None:
    """A local model writes its calls as text: the same numbers are answered, not kept."""
    from toolcycle.models.text.protocol import JsonToolsModel
    from toolcycle.models.text.react import ReActModel
    from toolcycle.testing import ScriptedModel

    written = (f'{{"name": "add", "arguments": {raw}}}' if protocol == "json"
               else f"Thought: add\nAction: add\nAction Input: {raw}")
    inner = ScriptedModel([written, "done" if protocol == "json" else "Final Answer: done"])
    model = JsonToolsModel(inner) if protocol == "json" else ReActModel(inner)
    result = await Agent(model, "t", [add]).run("go")
    assert result.output == "done"
    (record,) = result.tool_calls
    assert record.error is not None
    json.dumps([m.to_dict() for m in result.messages], allow_nan=False)  # valid JSON throughout

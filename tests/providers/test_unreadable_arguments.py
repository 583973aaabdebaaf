"""Arguments that are JSON but that Python's json refuses (rel-11): an integer over 4,300
digits (ValueError) or nesting deeper than the recursion limit (RecursionError). Each adapter
must turn them into a call with a parse error that the loop answers, not a MODEL_ERROR."""

from __future__ import annotations

import pytest

from toolcycle import Agent, tool

from .conftest import anthropic_model, openai_model, responses_model
from .script import Call, Reply
from .server import ProviderServer

RAW = {
    "5000 digits": '{"x": ' + "1" * 5000 + "}",
    "5000 deep": '{"x": ' + "[" * 5000 + "]" * 5000 + "}",
}


@tool
def echo(x: int = 0) -> int:
    """Echo."""
    return x


@pytest.mark.parametrize("label", list(RAW))
@pytest.mark.parametrize(
    ("wire", "stream"),
    # The test server sends Anthropic's non-streamed input as an object it has parsed itself.
    [("openai", False), ("openai", True), ("anthropic", True), ("responses", False),
     ("responses", True)],
    ids=["openai-json", "openai-sse", "anthropic-sse", "responses-json", "responses-sse"],
)
async def test_unreadable_arguments_are_answered(
    server: ProviderServer, wire: str, stream: bool, label: str
) -> None:
    server.script([Reply(calls=[Call("echo", RAW[label])]), Reply(text="done")])
    makers = {"openai": openai_model, "anthropic": anthropic_model, "responses": responses_model}
    model = makers[wire](server)
    agent = Agent(model, "t", [echo])
    result = await (agent.stream("go").get_result() if stream else agent.run("go"))
    assert result.output == "done"
    (record,) = result.tool_calls
    assert record.error is not None
    assert record.error.startswith("Could not parse the arguments of `echo`: arguments cannot")

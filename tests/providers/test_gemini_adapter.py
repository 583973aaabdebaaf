"""The ``google:`` adapter through the official ``google-genai`` SDK and the checking server:
tool loops JSON and streamed, parallel calls, thought signatures sent back, the server's rules,
safety and empty candidates, retries, and schema conversion."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle.errors import ConfigurationError, ModelError
from toolcycle.messages import Message, ThinkingPart, ToolCall, ToolResult
from toolcycle.models import resolve_model
from toolcycle.models._gemini_schema import SchemaError, to_gemini
from toolcycle.models.base import ModelResponse, ModelSettings, ToolDefinition
from toolcycle.models.google import GeminiModel
from toolcycle.tracing.otel import PROVIDER_NAMES

from .conftest import gemini_model
from .script import Call, Fault, Reply
from .server import ProviderServer
from .test_responses_adapter import ADD, TOOLS, stream  # the same tool; JSON and SSE

__all__ = ["stream"]  # a fixture, used by name


async def ask(model: GeminiModel, messages: list[Message], settings: ModelSettings,
              stream: bool) -> Message:
    if not stream:
        return await model.request(messages, settings)
    items = [item async for item in model.stream(messages, settings)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    return final.message


def answer(reply: Message) -> Message:
    return Message("tool", [ToolResult(c.id, c.name, "3") for c in reply.tool_calls])


async def test_parallel_calls_signatures_and_answers_round_trip(
    server: ProviderServer, stream: bool
) -> None:
    server.script([
        Reply(thinking="adding twice", calls=[Call("add", {"a": 1, "b": 2}),
                                              Call("add", {"a": 3, "b": 4})]),
        Reply(text="3 and 7"),
    ])
    model = gemini_model(server)
    history = [Message.system("be brief"), Message.user("add")]
    first = await ask(model, history, TOOLS, stream)
    calls = first.tool_calls
    assert [c.arguments for c in calls] == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert len({c.id for c in calls}) == 2  # synthesised: the server gave no ids
    assert any(isinstance(p, ThinkingPart) and p.text == "adding twice" for p in first.parts)
    assert first.usage is not None and first.usage.reasoning_tokens > 0
    second = await ask(model, [*history, first, answer(first)], TOOLS, stream)
    assert second.text == "3 and 7"
    sent = server.requests[-1].body
    assert sent["systemInstruction"]["parts"][0]["text"] == "be brief"
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    responses = [p["functionResponse"] for p in sent["contents"][2]["parts"]]
    assert [r["name"] for r in responses] == ["add", "add"]
    await model.aclose()


async def test_a_call_sent_back_without_its_signature_is_refused(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    model = gemini_model(server)
    first = await model.request([Message.user("add")], TOOLS)
    stripped = Message("assistant", [p for p in first.parts if isinstance(p, ToolCall)])
    with pytest.raises(ModelError, match="thought_signature"):
        await model.request([Message.user("add"), stripped, answer(stripped)], TOOLS)
    assert server.take_rejections()


@pytest.mark.parametrize("contents", [
    [{"role": "assistant", "parts": [{"text": "x"}]}],
    [{"role": "user", "parts": []}],
    [{"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {}}}]}],
    [{"role": "user", "parts": [{"text": "q"}]},
     {"role": "model", "parts": [{"functionCall": {"name": "add", "args": {}}}]},
     {"role": "user", "parts": [{"text": "no answer"}]}],
])
def test_server_rules_refuse_what_gemini_refuses(contents: list[Any]) -> None:
    from . import gemini_wire
    from .openai_wire import WireError

    with pytest.raises(WireError):
        gemini_wire.validate({"contents": contents}, gemini_wire.Issued())


async def test_tool_choice_modes(server: ProviderServer) -> None:
    model = gemini_model(server)
    for choice, mode in (("auto", "AUTO"), ("required", "ANY"), ("none", "NONE"),
                         ("add", "ANY")):
        server.script([Reply(text="ok")])
        await model.request([Message.user("q")], ModelSettings(tools=(ADD,), tool_choice=choice))
        config = server.requests[-1].body["toolConfig"]["functionCallingConfig"]
        assert config["mode"] == mode
        assert config.get("allowedFunctionNames") == (["add"] if choice == "add" else None)


async def test_retries_on_429_and_503(server: ProviderServer, stream: bool) -> None:
    server.script([Fault(status=429, retry_after="0"), Fault(status=503), Reply(text="fine")])
    reply = await ask(gemini_model(server), [Message.user("q")], TOOLS, stream)
    assert reply.text == "fine"
    assert [r.status for r in server.requests] == [429, 503, 200]


async def test_blocked_and_empty_candidates_are_model_errors(server: ProviderServer) -> None:
    from google.genai import types

    model = gemini_model(server)
    blocked = types.GenerateContentResponse(
        prompt_feedback=types.GenerateContentResponsePromptFeedback(block_reason="SAFETY"))
    with pytest.raises(ModelError, match="blocked"):
        model.finish(blocked, [])
    safety = types.GenerateContentResponse(candidates=[types.Candidate(finish_reason="SAFETY")])
    with pytest.raises(ModelError, match="SAFETY"):
        model.finish(safety, [])
    with pytest.raises(ModelError, match="no candidate"):
        model.finish(types.GenerateContentResponse(candidates=[]), [])
    empty = types.GenerateContentResponse(candidates=[types.Candidate(finish_reason="STOP")])
    with pytest.raises(ModelError, match="empty"):
        model.finish(empty, [])


def test_schema_conversion() -> None:
    schema = {
        "type": "object",
        "$defs": {"unit": {"enum": ["c", "f"]}},
        "properties": {
            "unit": {"$ref": "#/$defs/unit"},
            "n": {"type": ["integer", "null"]},
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "k": {"const": "x"},
        },
        "required": ["unit"],
        "additionalProperties": False,
    }
    out = to_gemini("t", schema)
    assert out["properties"]["unit"] == {"enum": ["c", "f"], "type": "STRING", "format": "enum"}
    assert out["properties"]["n"] == {"type": "INTEGER", "nullable": True}
    assert out["properties"]["tag"] == {"type": "STRING", "nullable": True}
    assert out["propertyOrdering"] == ["unit", "n", "tag", "k"]
    with pytest.raises(SchemaError, match=r"'t'.*recursive \$ref.*/properties/next"):
        to_gemini("t", {"type": "object", "$defs": {"n": {"type": "object", "properties": {
            "next": {"$ref": "#/$defs/n"}}}}, "properties": {"next": {"$ref": "#/$defs/n"}}})
    with pytest.raises(SchemaError, match="/properties/m/additionalProperties"):
        to_gemini("t", {"type": "object", "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}})
    with pytest.raises(SchemaError, match="not all strings"):
        to_gemini("t", {"type": "object", "properties": {"x": {"enum": [1, 2]}}})


def test_unconvertible_tool_is_a_configuration_error() -> None:
    bad = ToolDefinition("bad", "", {"type": "object", "properties": {"x": {"not": {}}}})
    model = GeminiModel("gemini-test", api_key="k")
    with pytest.raises(ConfigurationError, match=r"'bad'.*/properties/x/not"):
        model.tools_wire((bad,))


def test_model_string_and_otel_name() -> None:
    model = resolve_model("google:gemini-2.5-flash@http://127.0.0.1:9")
    assert isinstance(model, GeminiModel) and model.name == "gemini-2.5-flash"
    assert PROVIDER_NAMES["google"] == "gcp.gemini"


def test_the_sdks_own_stream_continuation_is_off() -> None:
    """google-genai 3.6 resumes a stream that ends early with another request of its own,
    behind the loop's retries, usage and cancellation (a run cancelled mid-stream sent a
    second request in a provider test under load): every request turns it off."""
    model = GeminiModel("gemini-test", api_key="k", base_url="http://127.0.0.1:9")
    request = model.build_request([Message.user("hi")], ModelSettings())
    assert request["config"]["automatic_continuation"] is False

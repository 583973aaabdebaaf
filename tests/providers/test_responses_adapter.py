"""The ``openai-responses:`` adapter through the official SDK and the checking server:
request shape, reasoning items sent back unchanged, usage, incomplete and failed responses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.responses import JSONResponse, Response, StreamingResponse

from toolcycle import Agent, Limits
from toolcycle.errors import ModelError
from toolcycle.messages import Message, ThinkingPart, ToolCall, ToolResult
from toolcycle.models import resolve_model
from toolcycle.models.base import (
    ModelResponse,
    ModelSettings,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolDefinition,
)
from toolcycle.models.openai_responses import OpenAIResponsesModel
from toolcycle.tracing.otel import PROVIDER_NAMES

from . import responses_wire
from .conftest import responses_model
from .script import Call, Reply
from .server import ProviderServer
from .test_agent_scenarios import add

ADD = ToolDefinition(
    "add",
    "Add two integers.",
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
     "required": ["a", "b"]},
)
TOOLS = ModelSettings(tools=(ADD,))


@pytest.fixture(params=[False, True], ids=["json", "sse"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def ask(model: OpenAIResponsesModel, messages: list[Message], settings: ModelSettings,
              stream: bool) -> tuple[Message, list[Any]]:
    if not stream:
        return await model.request(messages, settings), []
    items = [item async for item in model.stream(messages, settings)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    return final.message, items[:-1]


async def test_request_shape_is_stateless_with_explicit_strictness(server: ProviderServer) -> None:
    settings = ModelSettings(tools=(ADD,), tool_choice="add", max_tokens=64, seed=3,
                             temperature=0.5, parallel_tool_calls=False)
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2}, id="call_a")])])
    history = [Message.system("Be brief."), Message.user("1+2?")]
    message = await responses_model(server).request(history, settings)
    body = server.requests[0].body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert "previous_response_id" not in body and "seed" not in body
    assert body["input"] == [{"role": "system", "content": "Be brief."},
                             {"role": "user", "content": "1+2?"}]
    assert body["tools"] == [{"type": "function", "name": "add", "description": "Add two integers.",
                              "parameters": ADD.parameters, "strict": False}]
    assert body["tool_choice"] == {"type": "function", "name": "add"}
    assert (body["max_output_tokens"], body["temperature"], body["parallel_tool_calls"]) == (
        64, 0.5, False)
    assert message.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "add", {"a": 1, "b": 2})]


async def test_parallel_calls_answered_by_call_id(server: ProviderServer, stream: bool) -> None:
    server.script([Reply(text="Both.", calls=[Call("add", {"a": 1, "b": 2}, id="call_1_0"),
                                              Call("add", {"a": 3, "b": 4}, id="call_1_1")]),
                   Reply(text="3, 7")])
    model = responses_model(server)
    first, deltas = await ask(model, [Message.user("go")], TOOLS, stream)
    assert first.text == "Both." and [c.id for c in first.tool_calls] == ["call_1_0", "call_1_1"]
    if stream:
        assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Both."
        calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
        assert {(d.index, d.id) for d in calls if d.id} == {(0, "call_1_0"), (1, "call_1_1")}
        assert "".join(d.arguments_delta for d in calls if d.index == 1) == '{"a": 3, "b": 4}'
    results = Message.tool_results([ToolResult("call_1_0", "add", "3"),
                                    ToolResult("call_1_1", "add", "7", True)])
    second, _ = await ask(model, [Message.user("go"), first, results], TOOLS, stream)
    assert second.text == "3, 7"
    items = server.requests[1].body["input"]
    assert [i.get("type", "message") for i in items] == [
        "message", "message", "function_call", "function_call",
        "function_call_output", "function_call_output"]
    assert [i["call_id"] for i in items[2:]] == ["call_1_0", "call_1_1"] * 2
    assert "id" not in items[2]  # no reasoning before it: the item id is not needed


async def test_reasoning_items_go_back_byte_identical(server: ProviderServer, stream: bool) -> None:
    server.script([
        Reply(thinking="Add first.", calls=[Call("add", {"a": 1, "b": 2})]),
        Reply(thinking="Now report.", text="It is 3."),
        Reply(text="Bye."),
    ])
    agent = Agent(responses_model(server, reasoning={"effort": "low", "summary": "auto"}),
                  tools=[add])
    if stream:
        events = agent.stream("1+2?")
        thinking = []
        async for event in events:
            if getattr(event, "kind", "") == "thinking_delta":
                thinking.append(event)
        result = events.result
        assert result is not None
    else:
        result = await agent.run("1+2?")
    assert result.output == "It is 3."
    assert [s.thinking for s in result.trace.steps] == ["Add first.", "Now report."]
    follow = await agent.run("thanks", message_history=result.messages)
    assert follow.output == "Bye."
    issued = server.issued.reasoning
    for request in server.requests[1:]:
        sent = [i for i in request.body["input"] if i.get("type") == "reasoning"]
        assert sent and all(item == issued[item["id"]][0] for item in sent)
        assert all(json.dumps(item, sort_keys=True) == json.dumps(issued[item["id"]][0],
                                                                  sort_keys=True) for item in sent)
    last = server.requests[2].body["input"]
    kinds = [(i.get("type", "message"), (i.get("id") or "")[:3]) for i in last]
    assert kinds[1:6] == [("reasoning", "rs_"), ("function_call", "fc_"),
                          ("function_call_output", ""), ("reasoning", "rs_"),
                          ("message", "msg")]  # the item after a reasoning item keeps its id
    assert server.requests[0].body["reasoning"] == {"effort": "low", "summary": "auto"}


async def test_usage_with_cached_and_reasoning_tokens(server: ProviderServer, stream: bool) -> None:
    server.script([Reply(thinking="x" * 400, calls=[Call("add", {"a": 1, "b": 2}, id="call_1_0")]),
                   Reply(text="3")])
    model = responses_model(server)
    first, _ = await ask(model, [Message.user("hi " * 50)], TOOLS, stream)
    reported = server.requests[0].usage
    assert reported["output_tokens_details"]["reasoning_tokens"] >= 100
    assert first.usage is not None
    assert first.usage.output_tokens == reported["output_tokens"]  # reasoning included
    assert first.usage.reasoning_tokens == reported["output_tokens_details"]["reasoning_tokens"]
    assert first.usage.input_tokens == reported["input_tokens"]
    results = Message.tool_results([ToolResult("call_1_0", "add", "3")])
    second, _ = await ask(model, [Message.user("hi " * 50), first, results], TOOLS, stream)
    cached = server.requests[1].usage["input_tokens_details"]["cached_tokens"]
    assert second.usage is not None and second.usage.cache_read_tokens == cached > 0


async def test_streamed_thinking_arrives_as_deltas(server: ProviderServer) -> None:
    server.script([Reply(thinking="Let me think about it.", text="Done.")])
    _, deltas = await ask(responses_model(server), [Message.user("go")], ModelSettings(), True)
    assert "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)) == (
        "Let me think about it.")


async def test_truncated_call_and_empty_incomplete(server: ProviderServer, stream: bool) -> None:
    server.script([Reply(calls=[Call("add", {"a": 12345, "b": 2})], truncate=True)])
    message, _ = await ask(responses_model(server), [Message.user("go")], TOOLS, stream)
    (call,) = message.tool_calls
    assert message.finish_reason == "length" and call.arguments is None
    assert "max_output_tokens" in (call.parse_error or "")
    server.script([Reply(thinking="long thoughts", truncate=True)])
    with pytest.raises(ModelError, match="before any answer or tool call was written"):
        await ask(responses_model(server), [Message.user("go")], ModelSettings(), stream)


def _raw_response(status: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"id": "resp_x", "object": "response", "created_at": 1, "model": "m",
                         "status": status, "output": [], "parallel_tool_calls": True,
                         "tool_choice": "auto", "tools": [], "usage": None, **extra})


def _raw_stream(*events: dict[str, Any]) -> StreamingResponse:
    lines = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return StreamingResponse(iter(lines), media_type="text/event-stream")


async def test_content_filter_and_failed_are_model_errors(server: ProviderServer) -> None:
    def scripted(response: Response) -> Any:
        return lambda body: response

    filtered = _raw_response("incomplete", incomplete_details={"reason": "content_filter"})
    failed = _raw_response("failed", error={"code": "server_error", "message": "it broke"})
    server.script([scripted(filtered), scripted(failed)])
    model = responses_model(server)
    with pytest.raises(ModelError, match="incomplete: content_filter"):
        await model.request([Message.user("go")], ModelSettings())
    with pytest.raises(ModelError, match="it broke") as caught:
        await model.request([Message.user("go")], ModelSettings())
    assert caught.value.context["error_type"] == "server_error"


async def test_stream_error_events(server: ProviderServer) -> None:
    """A retryable ``error`` event before any output is retried; others are model errors,
    whether the stream yields them or the SDK raises them (a nested ``error`` object)."""
    def error(code: str, message: str) -> Any:
        event = {"type": "error", "sequence_number": 0, "code": code, "message": message,
                 "param": None}
        return lambda body: _raw_stream(event)

    nested = {"type": "error", "sequence_number": 0,
              "error": {"message": "bad prompt", "code": "invalid_prompt"}}
    server.script([error("server_error", "hiccup"), Reply(text="fine"),
                   error("invalid_prompt", "no way"), lambda body: _raw_stream(nested)])
    model = responses_model(server)
    items = [i async for i in model.stream([Message.user("go")], ModelSettings())]
    final = items[-1]
    assert isinstance(final, ModelResponse) and final.message.text == "fine"
    for expected, code in [("no way", "invalid_prompt"), ("bad prompt", "invalid_prompt")]:
        with pytest.raises(ModelError, match=expected) as caught:
            async for _ in model.stream([Message.user("go")], ModelSettings()):
                pass
        assert caught.value.context["error_type"] == code
        assert caught.value.context["tries"] == 1


async def test_foreign_thinking_is_not_sent(server: ProviderServer) -> None:
    """Another provider's thinking (an Anthropic signature) cannot go to this API."""
    server.script([Reply(text="ok")])
    turn = Message("assistant", [ThinkingPart("hmm", signature="sig"),
                                 ToolCall.from_args("c1", "add", {"a": 1, "b": 1})])
    history = [Message.user("go"), turn, Message.tool_results([ToolResult("c1", "add", "2")])]
    await responses_model(server).request(history, TOOLS)
    assert [i.get("type", "message") for i in server.requests[0].body["input"]] == [
        "message", "function_call", "function_call_output"]


async def test_a_forced_output_tool_at_the_limit(server: ProviderServer) -> None:
    server.script([Reply(thinking="t", calls=[Call("add", {"a": 1, "b": 1})]), Reply(text="2")])
    agent = Agent(responses_model(server), tools=[add], limits=Limits(max_iterations=1))
    result = await agent.run("go")
    assert result.output == "2" and result.forced_final_answer
    assert server.requests[-1].body["tool_choice"] == "none"


async def test_model_string_and_telemetry_name(server: ProviderServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = resolve_model(f"openai-responses:gpt-test@{server.openai_url}")
    assert isinstance(model, OpenAIResponsesModel) and model.name == "gpt-test"
    server.script([Reply(text="hi")])
    agent = Agent(f"openai-responses:gpt-test@{server.openai_url}")
    assert (await agent.run("hello")).output == "hi"
    assert server.requests[0].body["model"] == "gpt-test"
    assert PROVIDER_NAMES["openai-responses"] == "openai"
    assert responses_wire.ITEM_TYPES  # the wire module is the server's


async def test_a_streamed_failed_response_is_a_model_error(server: ProviderServer) -> None:
    failed = json.loads(_raw_response(
        "failed", error={"code": "server_error", "message": "melted"}).body)
    event = {"type": "response.failed", "sequence_number": 0, "response": failed}
    server.script([lambda body: _raw_stream(event)])
    with pytest.raises(ModelError, match="melted") as caught:
        async for _ in responses_model(server).stream([Message.user("go")], ModelSettings()):
            pass
    assert caught.value.context["error_type"] == "server_error"

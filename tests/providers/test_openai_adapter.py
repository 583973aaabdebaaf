"""The OpenAI adapters (tools, legacy functions, compatible) through the real SDK and the
protocol-checking server."""

from __future__ import annotations

from typing import Any, cast

import pytest

from toolcycle.errors import ModelError
from toolcycle.messages import Message, ThinkingPart, ToolCall, ToolResult
from toolcycle.models import resolve_model
from toolcycle.models.base import (
    ModelResponse,
    ModelSettings,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
)
from toolcycle.models.openai import OpenAIFunctionsModel, OpenAIModel

from .conftest import functions_model, openai_model
from .script import Call, Reply
from .server import ProviderServer

ADD = ToolDefinition(
    "add",
    "Add two integers.",
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
ECHO = ToolDefinition(
    "echo", "Echo text.", {"type": "object", "properties": {"text": {"type": "string"}}}
)
TOOLS = ModelSettings(tools=(ADD, ECHO))


def history() -> list[Message]:
    """A conversation with a two-call turn, its results, and a retry prompt after them."""
    return [
        Message.system("You add numbers."),
        Message.user("1+2 and 3+4?"),
        Message.assistant(
            "",
            [
                ToolCall.from_args("c1", "add", {"a": 1, "b": 2}),
                ToolCall.from_args("c2", "add", {"a": 3, "b": 4}),
            ],
        ),
        Message.tool_results([ToolResult("c1", "add", "3"), ToolResult("c2", "add", "7", True)]),
        Message.user("Please answer in one line."),
    ]


async def test_text_reply_and_usage(server: ProviderServer) -> None:
    server.script([Reply(text="hello there")])
    message = await openai_model(server).request([Message.user("hi")], ModelSettings())
    assert message.text == "hello there"
    assert message.finish_reason == "stop"
    assert message.usage is not None and message.usage.input_tokens > 0
    assert message.usage.output_tokens > 0 and message.usage.requests == 1
    assert "tools" not in server.requests[0].body


async def test_parallel_calls_and_controls(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2}), Call("echo", {"text": "x"})])])
    settings = ModelSettings(
        tools=(ADD, ECHO), parallel_tool_calls=True, temperature=0.0, seed=7, max_tokens=50
    )
    message = await openai_model(server).request([Message.user("go")], settings)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("add", {"a": 1, "b": 2}),
        ("echo", {"text": "x"}),
    ]
    assert message.finish_reason == "tool_calls"
    body = server.requests[0].body
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": ADD.parameters,
        },
    }
    assert body["seed"] == 7 and body["temperature"] == 0.0 and body["max_completion_tokens"] == 50


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ("echo", {"type": "function", "function": {"name": "echo"}}),
    ],
)
async def test_tool_choice(server: ProviderServer, choice: str, wire: object) -> None:
    server.script([Reply(text="ok")])
    settings = ModelSettings(tools=(ADD, ECHO), tool_choice=choice)
    await openai_model(server).request([Message.user("go")], settings)
    assert server.requests[0].body["tool_choice"] == wire


async def test_history_with_results_and_retry_prompt_is_accepted(server: ProviderServer) -> None:
    server.script([Reply(text="3 and 7")])
    await openai_model(server).request(history(), TOOLS)
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [m["tool_call_id"] for m in sent[3:5]] == ["c1", "c2"]
    assert sent[2]["content"] is None


async def test_broken_history_is_a_400_with_the_provider_message(server: ProviderServer) -> None:
    broken = [*history()[:3], Message.tool_results([ToolResult("c1", "add", "3")])]
    with pytest.raises(ModelError) as caught:
        await openai_model(server).request(broken, TOOLS)
    assert caught.value.context["status"] == 400
    assert "did not have response messages: c2" in caught.value.context["provider_message"]
    assert len(server.requests) == 1  # a 400 is not retried
    assert len(server.take_rejections()) == 1


async def test_empty_string_content_setting_for_compatible_servers(server: ProviderServer) -> None:
    server.require_tool_call_content = True
    with pytest.raises(ModelError):
        await openai_model(server).request(history(), TOOLS)
    assert server.take_rejections()
    server.script([Reply(text="ok")])
    await openai_model(server, tool_call_content="").request(history(), TOOLS)
    assert server.requests[-1].body["messages"][2]["content"] == ""


async def test_streaming_assembles_text_and_call_arguments(server: ProviderServer) -> None:
    reply = Reply(
        text="Let me add these.",
        calls=[Call("add", {"a": 10, "b": 20}), Call("echo", {"text": "a longer text value"})],
    )
    server.script([reply])
    items = [i async for i in openai_model(server).stream([Message.user("go")], TOOLS)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    deltas = [i for i in items if isinstance(i, TextDelta)]
    assert len(deltas) > 1 and "".join(d.text for d in deltas) == "Let me add these."
    call_deltas = [i for i in items if isinstance(i, ToolCallDelta)]
    assert "".join(d.arguments_delta for d in call_deltas if d.index == 1) == (
        '{"text": "a longer text value"}'
    )
    message = final.message
    assert message.text == "Let me add these."
    assert [c.arguments for c in message.tool_calls] == [
        {"a": 10, "b": 20},
        {"text": "a longer text value"},
    ]
    assert message.tool_calls[0].id == call_deltas[0].id
    assert message.usage is not None and message.usage.input_tokens > 0
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


async def _reply_to_go(model: Any, stream: bool) -> Message:
    """The model's reply to "go", through ``request`` or assembled from ``stream``."""
    if not stream:
        return cast(Message, await model.request([Message.user("go")], TOOLS))
    items = [i async for i in model.stream([Message.user("go")], TOOLS)]
    assert isinstance(items[-1], ModelResponse)
    return items[-1].message


@pytest.mark.parametrize("stream", [False, True])
async def test_truncated_call_becomes_a_parse_error(server: ProviderServer, stream: bool) -> None:
    server.script([Reply(calls=[Call("echo", {"text": "cut me off please"})], truncate=True)])
    model = openai_model(server)
    message = await _reply_to_go(model, stream)
    assert message.finish_reason == "length"
    (call,) = message.tool_calls
    assert call.arguments is None and call.parse_error is not None


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("factory", [openai_model, functions_model], ids=["tools", "functions"])
async def test_a_call_cut_before_its_arguments_is_not_run_with_empty_ones(
    server: ProviderServer, stream: bool, factory: Any
) -> None:
    """``length`` right after the call's name: no argument text at all, which alone would
    parse as ``{}`` and run the tool with arguments the model never wrote."""
    server.script([Reply(calls=[Call("echo", "")], truncate=True)])
    model = factory(server)
    message = await _reply_to_go(model, stream)
    assert message.finish_reason == "length"
    (call,) = message.tool_calls
    assert call.arguments is None and "token limit" in (call.parse_error or "")


async def test_a_truncated_call_goes_back_as_empty_arguments(server: ProviderServer) -> None:
    server.require_tool_call_content = True  # compatible servers parse the arguments
    server.script(
        [
            Reply(calls=[Call("echo", {"text": "cut me off please"})], truncate=True),
            Reply(text="sorry"),
        ]
    )
    model = openai_model(server, tool_call_content="")
    messages = [Message.user("go")]
    first = await model.request(messages, TOOLS)
    (call,) = first.tool_calls
    messages += [first, Message.tool_results([ToolResult(call.id, "echo", "bad JSON", True)])]
    assert (await model.request(messages, TOOLS)).text == "sorry"
    assert server.requests[1].body["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{}"


async def test_reasoning_content_is_kept_as_thinking(server: ProviderServer) -> None:
    server.script([Reply(text="4", thinking="two plus two"), Reply(text="4", thinking="again")])
    model = openai_model(server)
    message = await model.request([Message.user("2+2")], ModelSettings())
    assert message.parts[0] == ThinkingPart("two plus two")
    items = [i async for i in model.stream([Message.user("2+2")], ModelSettings())]
    assert isinstance(items[-1], ModelResponse) and items[-1].message.thinking == "again"
    assert "reasoning_content" not in str(server.requests[-1].body["messages"])


async def test_parallel_tool_calls_false_is_sent(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})])])
    settings = ModelSettings(tools=(ADD, ECHO), parallel_tool_calls=False)
    message = await openai_model(server).request([Message.user("go")], settings)
    assert len(message.tool_calls) == 1
    assert server.requests[0].body["parallel_tool_calls"] is False


@pytest.mark.parametrize("stream", [False, True])
async def test_cached_prompt_tokens_are_reported(server: ProviderServer, stream: bool) -> None:
    server.script([Reply(text="a"), Reply(text="b")])
    model = openai_model(server)

    async def ask(messages: list[Message]) -> Message:
        if not stream:
            return await model.request(messages, ModelSettings())
        items = [i async for i in model.stream(messages, ModelSettings())]
        assert isinstance(items[-1], ModelResponse)
        return items[-1].message

    messages = [Message.system("x" * 400), Message.user("first")]
    first = await ask(messages)
    messages += [first, Message.user("second")]
    second = await ask(messages)
    raw = server.requests[1].usage
    assert second.usage is not None
    assert second.usage.cache_read_tokens == raw["prompt_tokens_details"]["cached_tokens"]
    assert second.usage.input_tokens == raw["prompt_tokens"]
    assert first.usage is not None and first.usage.cache_read_tokens == 0
    assert second.usage is not None and second.usage.cache_read_tokens >= 100
    assert second.usage.cache_read_tokens < second.usage.input_tokens


async def test_conversions_are_cached_per_message_and_tool_tuple() -> None:
    model = OpenAIModel("gpt-test", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    messages = history()
    first = model.build_request(messages, TOOLS)
    second = model.build_request([*messages, Message.user("more")], TOOLS)
    assert all(a is b for a, b in zip(first["messages"], second["messages"], strict=False))
    assert first["tools"] is second["tools"]
    other = ModelSettings(tools=(ADD,))
    assert model.build_request(messages, other)["tools"] is not first["tools"]


# ----------------------------------------------------------------- legacy functions


async def test_functions_mode_sends_functions_and_synthesizes_ids(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})])])
    model = functions_model(server)
    message = await model.request([Message.user("1+2")], TOOLS)
    body = server.requests[0].body
    assert "tools" not in body and body["function_call"] == "auto"
    assert [f["name"] for f in body["functions"]] == ["add", "echo"]
    (call,) = message.tool_calls
    assert call.id.startswith("call_") and call.arguments == {"a": 1, "b": 2}
    assert message.finish_reason == "function_call"


async def test_functions_mode_history_and_streaming(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("echo", {"text": "hi"})])])
    model = functions_model(server)
    items = [i async for i in model.stream(history(), TOOLS)]
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == [
        "system",
        "user",
        "assistant",
        "function",
        "assistant",
        "function",
        "user",
    ]
    assert [m.get("name") for m in sent[3::2][:2]] == ["add", "add"]
    assert sent[2]["function_call"] == {"name": "add", "arguments": '{"a": 1, "b": 2}'}
    final = items[-1]
    assert isinstance(final, ModelResponse)
    (call,) = final.message.tool_calls
    assert call.name == "echo" and call.arguments == {"text": "hi"} and call.id


@pytest.mark.parametrize(
    ("choice", "wire"), [("required", "auto"), ("none", "none"), ("add", {"name": "add"})]
)
async def test_functions_mode_choice(server: ProviderServer, choice: str, wire: object) -> None:
    server.script([Reply(text="ok")])
    await functions_model(server).request(
        [Message.user("x")],
        ModelSettings(tools=(ADD, ECHO), tool_choice=choice, parallel_tool_calls=False),
    )
    body = server.requests[0].body
    assert body["function_call"] == wire and "parallel_tool_calls" not in body


# ----------------------------------------------------------------- model strings


def test_model_strings() -> None:
    compatible = resolve_model("openai-compatible:qwen2.5-7b@http://127.0.0.1:8080/v1")
    assert isinstance(compatible, OpenAIModel)
    assert compatible.name == "qwen2.5-7b" and compatible.tool_call_content == ""
    assert str(compatible.client.base_url).startswith("http://127.0.0.1:8080/v1")
    legacy = resolve_model("openai-functions:gpt-3.5-turbo@http://127.0.0.1:8080/v1")
    assert isinstance(legacy, OpenAIFunctionsModel) and legacy.name == "gpt-3.5-turbo"
    with pytest.raises(ValueError, match="needs a base URL"):
        resolve_model("openai-compatible:qwen")

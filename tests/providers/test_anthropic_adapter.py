"""The Anthropic adapter through the real SDK and the protocol-checking server."""

from __future__ import annotations

import pytest

from toolcycle.errors import ModelError
from toolcycle.messages import Message, ThinkingPart, ToolCall, ToolResult
from toolcycle.models import resolve_model
from toolcycle.models.anthropic import AnthropicModel
from toolcycle.models.base import (
    ModelResponse,
    ModelSettings,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

from .conftest import anthropic_model
from .script import Call, Reply
from .server import ProviderServer
from .test_openai_adapter import ADD, ECHO, TOOLS, history


async def _reply(
    model: AnthropicModel, messages: list[Message], settings: ModelSettings, stream: bool
) -> Message:
    if not stream:
        return await model.request(messages, settings)
    items = [i async for i in model.stream(messages, settings)]
    assert isinstance(items[-1], ModelResponse)
    return items[-1].message


async def test_text_reply_system_and_cache_breakpoints(server: ProviderServer) -> None:
    server.script([Reply(text="hello")])
    message = await anthropic_model(server).request(
        [Message.system("Be brief."), Message.user("hi")], TOOLS
    )
    assert message.text == "hello" and message.finish_reason == "end_turn"
    body = server.requests[0].body
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["max_tokens"] == 4096
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][0]["input_schema"] == ADD.parameters
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert body["tool_choice"] == {"type": "auto"}


async def test_tool_results_are_one_user_message_with_the_retry_prompt_merged(
    server: ProviderServer,
) -> None:
    server.script([Reply(text="3 and 7")])
    await anthropic_model(server).request(history(), TOOLS)
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    results = sent[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert "is_error" not in results[0] and results[1]["is_error"] is True
    assert results[2]["cache_control"] == {"type": "ephemeral"}
    assert sent[1]["content"][0] == {
        "type": "tool_use",
        "id": "c1",
        "name": "add",
        "input": {"a": 1, "b": 2},
    }


async def test_missing_result_is_rejected_like_the_api(server: ProviderServer) -> None:
    broken = [*history()[:3], Message.tool_results([ToolResult("c1", "add", "3")])]
    with pytest.raises(ModelError) as caught:
        await anthropic_model(server).request(broken, TOOLS)
    assert caught.value.context["status"] == 400
    assert "without `tool_result` blocks immediately after: c2" in str(caught.value)
    assert len(server.take_rejections()) == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_calls(server: ProviderServer, stream: bool) -> None:
    server.script(
        [
            Reply(
                text="Adding.",
                calls=[Call("add", {"a": 1, "b": 2}), Call("echo", {"text": "hey there"})],
            )
        ]
    )
    message = await _reply(anthropic_model(server), [Message.user("go")], TOOLS, stream)
    assert message.text == "Adding." and message.finish_reason == "tool_use"
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("add", {"a": 1, "b": 2}),
        ("echo", {"text": "hey there"}),
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        ("echo", False, {"type": "tool", "name": "echo", "disable_parallel_tool_use": True}),
    ],
)
async def test_tool_choice(
    server: ProviderServer, choice: str, parallel: bool | None, wire: object
) -> None:
    server.script([Reply(text="ok")])
    settings = ModelSettings(tools=(ADD, ECHO), tool_choice=choice, parallel_tool_calls=parallel)
    await anthropic_model(server).request([Message.user("go")], settings)
    assert server.requests[0].body["tool_choice"] == wire


async def test_streaming_deltas(server: ProviderServer) -> None:
    server.script(
        [
            Reply(
                text="Some streamed text.",
                thinking="Let me think about it.",
                calls=[Call("echo", {"text": "streamed arguments"})],
            )
        ]
    )
    model = anthropic_model(server, thinking_budget=1024)
    items = [i async for i in model.stream([Message.user("go")], TOOLS)]
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Some streamed text."
    assert "".join(i.text for i in items if isinstance(i, ThinkingDelta)) == (
        "Let me think about it."
    )
    calls = [i for i in items if isinstance(i, ToolCallDelta)]
    assert calls[0].name == "echo" and calls[0].id
    assert "".join(c.arguments_delta for c in calls) == '{"text": "streamed arguments"}'
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.message.tool_calls[0].arguments == {"text": "streamed arguments"}
    assert isinstance(final.message.parts[0], ThinkingPart) and final.message.parts[0].signature


@pytest.mark.parametrize("stream", [False, True])
async def test_redacted_thinking_is_kept_and_sent_back_unchanged(
    server: ProviderServer, stream: bool
) -> None:
    server.script(
        [Reply(thinking="Plan.", redacted=True, calls=[Call("add", {"a": 1, "b": 2})]),
         Reply(text="3")]
    )
    model = anthropic_model(server, thinking_budget=2048)
    messages = [Message.user("1+2")]
    first = await _reply(model, messages, TOOLS, stream)
    thinking = [p for p in first.parts if isinstance(p, ThinkingPart)]
    assert [t.redacted is not None for t in thinking] == [False, True]
    assert thinking[1].text == "" and first.thinking == "Plan."
    restored = Message.from_dict(first.to_dict())  # survives a stored history too
    assert restored.parts == first.parts
    messages += [restored, Message.tool_results([ToolResult(first.tool_calls[0].id, "add", "3")])]
    second = await _reply(model, messages, TOOLS, stream)
    assert second.text == "3"
    sent = server.requests[1].body["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "redacted_thinking", "tool_use"]
    assert sent[1]["data"] == thinking[1].redacted


async def test_server_rejects_tampered_redacted_thinking(server: ProviderServer) -> None:
    server.script([Reply(text="never")])
    model = anthropic_model(server, thinking_budget=2048)
    tampered = Message("assistant", [ThinkingPart("", None, redacted="enc-9999.sig_bad"),
                                     ToolCall("toolu_1", "add", {"a": 1, "b": 2})])
    history = [Message.user("1+2"), tampered,
               Message.tool_results([ToolResult("toolu_1", "add", "3")])]
    with pytest.raises(ModelError, match="redacted_thinking"):
        await _reply(model, history, TOOLS, False)
    assert len(server.take_rejections()) == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_thinking_round_trips_with_its_signature(
    server: ProviderServer, stream: bool
) -> None:
    server.script(
        [Reply(thinking="I should add.", calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")]
    )
    model = anthropic_model(server, thinking_budget=2048)
    messages = [Message.user("1+2")]
    first = await _reply(model, messages, TOOLS, stream)
    assert first.parts[0] == ThinkingPart("I should add.", first.parts[0].signature)  # type: ignore[union-attr]
    messages += [first, Message.tool_results([ToolResult(first.tool_calls[0].id, "add", "3")])]
    second = await _reply(model, messages, TOOLS, stream)
    assert second.text == "3"
    sent = server.requests[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["messages"][1]["content"][0]["type"] == "thinking"


async def test_forcing_a_tool_turns_thinking_off_for_that_request(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("echo", {"text": "forced"})])])
    model = anthropic_model(server, thinking_budget=2048)
    settings = ModelSettings(tools=(ADD, ECHO), tool_choice="echo", extra={"top_k": 5})
    message = await model.request([Message.user("go")], settings)
    assert message.tool_calls[0].arguments == {"text": "forced"}
    body = server.requests[0].body
    assert "thinking" not in body and body["top_k"] == 5


async def test_a_tampered_thinking_block_is_rejected(server: ProviderServer) -> None:
    call = ToolCall.from_args("t1", "add", {"a": 1, "b": 2})
    forged = Message("assistant", [ThinkingPart("changed", "sig_bogus"), call])
    messages = [Message.user("x"), forged, Message.tool_results([ToolResult("t1", "add", "3")])]
    with pytest.raises(ModelError, match="signature"):
        await anthropic_model(server, thinking_budget=2048).request(messages, TOOLS)
    assert server.take_rejections()


@pytest.mark.parametrize("stream", [False, True])
async def test_max_tokens_inside_a_call_gives_a_parse_error(
    server: ProviderServer, stream: bool
) -> None:
    server.script(
        [
            Reply(
                text="Writing.",
                calls=[Call("add", {"a": 1, "b": 2}), Call("echo", {"text": "long " * 20})],
                truncate=True,
            )
        ]
    )
    message = await _reply(anthropic_model(server), [Message.user("go")], TOOLS, stream)
    assert message.finish_reason == "max_tokens"
    first, second = message.tool_calls
    assert first.arguments == {"a": 1, "b": 2} and first.parse_error is None
    assert second.arguments is None and "max_tokens" in (second.parse_error or "")


@pytest.mark.parametrize("stream", [False, True])
async def test_pause_turn_is_continued(server: ProviderServer, stream: bool) -> None:
    server.script(
        [
            Reply(text="Searching first.", pause=True),
            Reply(text="Found it.", calls=[Call("echo", {"text": "done"})]),
        ]
    )
    message = await _reply(anthropic_model(server), [Message.user("go")], TOOLS, stream)
    assert message.text == "Searching first.Found it."
    assert message.tool_calls[0].arguments == {"text": "done"}
    assert message.usage is not None and message.usage.requests == 2
    continued = server.requests[1].body["messages"]
    assert continued[-1]["role"] == "assistant"
    assert continued[-1]["content"][0]["text"] == "Searching first."


async def test_usage_maps_cache_reads_and_writes(server: ProviderServer) -> None:
    server.script([Reply(text="a"), Reply(text="b")])
    model = anthropic_model(server)
    messages = [Message.system("rules " * 800), Message.user("first")]  # over 1,024 tokens
    first = await model.request(messages, TOOLS)
    messages += [first, Message.user("second")]
    second = await model.request(messages, TOOLS)
    assert first.usage is not None and second.usage is not None
    assert first.usage.cache_read_tokens == 0 and first.usage.cache_write_tokens > 0
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    raw = server.requests[1].usage
    assert second.usage.input_tokens == (
        raw["input_tokens"] + raw["cache_read_input_tokens"] + raw["cache_creation_input_tokens"]
    )


async def test_caching_can_be_switched_off(server: ProviderServer) -> None:
    server.script([Reply(text="a")])
    await anthropic_model(server, cache=False).request(
        [Message.system("s"), Message.user("u")], TOOLS
    )
    assert "cache_control" not in str(server.requests[0].body)


def test_model_string() -> None:
    model = resolve_model("anthropic:claude-test@http://127.0.0.1:9")
    assert isinstance(model, AnthropicModel) and model.name == "claude-test"
    assert str(model.client.base_url).startswith("http://127.0.0.1:9")

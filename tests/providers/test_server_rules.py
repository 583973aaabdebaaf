"""The test server's own checks: each rule refuses the request a real API refuses (otherwise
the adapter tests that rely on it could not fail)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from . import anthropic_wire, openai_wire
from .script import Fault
from .server import ProviderServer

FN = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
CALL2 = {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{}"}}
USER = {"role": "user", "content": "hi"}


def chat(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": list(messages), **extra}


OPENAI_BAD = [
    (chat(), "too short"),
    (
        chat(USER, {"role": "assistant", "content": None, "tool_calls": [CALL]}, USER, tools=[FN]),
        "did not have response messages: c1",
    ),
    (
        chat(USER, {"role": "tool", "tool_call_id": "c1", "content": "x"}, tools=[FN]),
        "must be a response to a preceeding message with 'tool_calls'",
    ),
    (
        chat(
            USER,
            {"role": "assistant", "content": None, "tool_calls": [CALL, CALL2]},
            {"role": "tool", "tool_call_id": "c2", "content": "x"},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            tools=[FN],
        ),
        "in order",
    ),
    (chat(USER, tool_choice="auto"), "only allowed when 'tools' are specified"),
    (chat(USER, parallel_tool_calls=True), "only allowed when 'tools' are specified"),
    (
        chat(USER, tools=[FN], tool_choice={"type": "function", "function": {"name": "x"}}),
        "not among the tools",
    ),
    (chat(USER, stream_options={"include_usage": True}), "only allowed when 'stream'"),
    (chat(USER, tools=[FN], functions=[FN["function"]]), "cannot be combined"),
    (chat(USER, tools=[{"type": "function", "function": {"name": "bad name"}}]), "pattern"),
    (chat(USER, {"role": "assistant", "content": None}), "expected a string, got null"),
    (
        chat(
            USER,
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "add", "arguments": "{}"},
            },
            {"role": "function", "name": "other", "content": "3"},
            functions=[FN["function"]],
        ),
        "same name",
    ),
    (
        chat(
            USER,
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            functions=[FN["function"]],
        ),
        "need 'tools'",
    ),
]


@pytest.mark.parametrize(("body", "message"), OPENAI_BAD)
def test_openai_rules(body: dict[str, Any], message: str) -> None:
    with pytest.raises(openai_wire.WireError, match=message.replace("(", r"\(")):
        openai_wire.validate(body)


def test_openai_compatible_strictness() -> None:
    history = chat(
        USER,
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
        tools=[FN],
    )
    openai_wire.validate(history)
    with pytest.raises(openai_wire.WireError, match="not null"):
        openai_wire.validate(history, require_tool_call_content=True)


TOOL = {"name": "add", "input_schema": {"type": "object"}}
USE = {"type": "tool_use", "id": "t1", "name": "add", "input": {}}
USE2 = {"type": "tool_use", "id": "t2", "name": "add", "input": {}}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "3"}


def msgs(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "messages": list(messages), "tools": [TOOL], **extra}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


TEXT = {"type": "text", "text": "hi"}
CACHED = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
THINK = {"type": "thinking", "thinking": "hmm", "signature": anthropic_wire.signature("hmm")}

ANTHROPIC_BAD = [
    ({"model": "m", "messages": [user(TEXT)]}, "max_tokens"),
    (msgs(assistant(TEXT)), 'first message must use the "user" role'),
    (msgs(user(TEXT), user(TEXT)), "roles must alternate"),
    (msgs({"role": "system", "content": "x"}), "top-level `system` parameter"),
    (msgs(user({"type": "text", "text": ""})), "non-empty"),
    (
        msgs(user(TEXT), assistant(USE, USE2), user(result("t1"))),
        "without `tool_result` blocks immediately after: t2",
    ),
    (msgs(user(TEXT), assistant(TEXT), user(result("t9"))), "unexpected `tool_use_id`"),
    (msgs(user(TEXT), assistant(USE), user(TEXT, result("t1"))), "must come first"),
    (msgs(user(TEXT), assistant(USE, USE2), user(result("t2"), result("t1"))), "call order"),
    (
        msgs(
            user(TEXT),
            assistant(USE),
            user(result("t1")),
            thinking={"type": "enabled", "budget_tokens": 1024},
            max_tokens=4096,
        ),
        "must start with a thinking",
    ),
    (
        msgs(user(TEXT), assistant({**THINK, "signature": "forged"}, USE), user(result("t1"))),
        "Invalid `signature`",
    ),
    (
        msgs(user(CACHED, CACHED, CACHED), assistant(TEXT), user(CACHED, CACHED)),
        "maximum of 4 blocks with cache_control",
    ),
    (
        msgs(user(TEXT), assistant(TEXT), tool_choice={"type": "tool", "name": "nope"}),
        "not found in tools",
    ),
    (msgs(user(TEXT), assistant({"type": "text", "text": "prefill "})), "trailing whitespace"),
    (msgs(user(USE)), "not allowed in user messages"),
    *[(msgs(user(TEXT), assistant({**USE, "id": bad}), user(result(bad))), "should match pattern")
      for bad in ("t 1", "t1\n")],
]


@pytest.mark.parametrize(("body", "message"), ANTHROPIC_BAD)
def test_anthropic_rules(body: dict[str, Any], message: str) -> None:
    with pytest.raises(anthropic_wire.WireError, match=message.replace("(", r"\(")):
        anthropic_wire.validate(body)


def test_anthropic_well_formed_history_passes() -> None:
    anthropic_wire.validate(
        msgs(
            user(TEXT),
            assistant(THINK, TEXT, USE, USE2),
            user(result("t1"), result("t2"), CACHED),
            thinking={"type": "enabled", "budget_tokens": 1024},
            max_tokens=4096,
        )
    )


def test_cache_accounting_reads_the_longest_stored_prefix() -> None:
    cache = anthropic_wire.PromptCache(min_tokens=1)
    first = msgs(user(CACHED))
    uncached, written, read = cache.account(first)
    assert (uncached, read) == (0, 0) and written > 0
    second = msgs(user(TEXT), assistant(TEXT), user(CACHED))
    uncached2, written2, read2 = cache.account(second)
    assert read2 == written and written2 > 0 and uncached2 == 0
    no_marks = msgs(user(TEXT))
    assert cache.account(no_marks)[1:] == (0, 0)
    # What follows the last breakpoint is plain input; the three add up to the prompt.
    third = msgs(user(TEXT), assistant(TEXT), user(CACHED), assistant(TEXT), user(TEXT))
    uncached3, written3, read3 = cache.account(third)
    assert read3 == read2 + written2 and written3 == 0 and uncached3 > 0
    whole = anthropic_wire.PromptCache(min_tokens=10**9).account(third)  # nothing cacheable
    assert whole == (uncached3 + written3 + read3, 0, 0)


def _long(text: str, n: int) -> dict[str, Any]:
    return {"type": "text", "text": (text + " ") * n}


def test_cache_ignores_prefixes_below_the_minimum_length() -> None:
    cache = anthropic_wire.PromptCache()  # 1,024 tokens, as for Sonnet and Opus
    short = msgs(user({**_long("hi", 100), "cache_control": {"type": "ephemeral"}}))
    assert cache.account(short)[1:] == (0, 0)
    assert cache.account(short)[1:] == (0, 0)  # nothing was stored the first time either
    long = msgs(user({**_long("hi", 2000), "cache_control": {"type": "ephemeral"}}))
    uncached, written, read = cache.account(long)
    assert (uncached, read) == (0, 0) and written >= 1024
    assert cache.account(long) == (0, 0, written)


def test_cache_lookback_is_20_blocks() -> None:
    cache = anthropic_wire.PromptCache(min_tokens=1)
    base = [user({**_long("context", 50), "cache_control": {"type": "ephemeral"}})]
    written = cache.account(msgs(*base))[1]

    def later(results: int) -> dict[str, Any]:
        uses = [{**USE, "id": f"t{i}"} for i in range(results)]
        answers = [result(f"t{i}") for i in range(results)]
        answers[-1] = {**answers[-1], "cache_control": {"type": "ephemeral"}}
        return msgs(user(_long("context", 50)), assistant(*uses), user(*answers))

    # 9 calls and 9 results: the stored prefix is 18 blocks back, found.
    assert cache.account(later(9))[2] == written
    # 10 and 10: 20 blocks back, still found; 11 and 11: 22 blocks back, missed.
    assert cache.account(later(10))[2] == written
    fresh = anthropic_wire.PromptCache(min_tokens=1)
    fresh.account(msgs(*base))
    assert fresh.account(later(11))[2] == 0


def test_cache_entries_belong_to_a_model_and_messages_to_the_tool_choice() -> None:
    cache = anthropic_wire.PromptCache(min_tokens=1)
    system = [{**_long("rules", 50), "cache_control": {"type": "ephemeral"}}]
    body = msgs(user(CACHED), system=system, tool_choice={"type": "auto"})
    written = cache.account(body)[1]
    assert cache.account(body) == (0, 0, written)
    assert cache.account({**body, "model": "other"})[2] == 0
    # Another tool_choice: tools and system are still read, the messages are written again.
    _, written_again, read = cache.account({**body, "tool_choice": {"type": "none"}})
    assert 0 < read < written and read + written_again == written


# -- over HTTP: status codes, headers and provider-shaped error bodies -----------------------


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


OPENAI_HEADERS = {"authorization": "Bearer sk-test"}
ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}


def test_invalid_requests_get_a_provider_shaped_400(server: ProviderServer) -> None:
    broken_chat = chat(USER, {"role": "tool", "tool_call_id": "c1", "content": "x"}, tools=[FN])
    status, _, body = _post(f"{server.openai_url}/chat/completions", broken_chat, OPENAI_HEADERS)
    assert status == 400
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == "invalid_request_error"
    assert "preceeding message with 'tool_calls'" in body["error"]["message"]

    broken = msgs(user(TEXT), assistant(USE), user(TEXT))
    status, _, body = _post(f"{server.url}/v1/messages", broken, ANTHROPIC_HEADERS)
    assert status == 400 and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "`tool_use` ids were found without `tool_result` blocks" in body["error"]["message"]
    assert len(server.take_rejections()) == 2

    status, _, body = _post(f"{server.url}/v1/messages", msgs(user(TEXT)), {})
    assert status == 401 and body["error"]["type"] == "authentication_error"
    assert len(server.take_rejections()) == 1


def test_faults_over_http(server: ProviderServer) -> None:
    server.script(
        [
            Fault(status=429, retry_after="7", message="Rate limit reached"),
            Fault(status=500, message="boom"),
            Fault(status=529, message="Overloaded"),
        ]
    )
    status, headers, body = _post(
        f"{server.openai_url}/chat/completions", chat(USER), OPENAI_HEADERS
    )
    assert (status, headers["retry-after"]) == (429, "7")
    assert body["error"] == {
        "message": "Rate limit reached", "type": "rate_limit_error", "param": None, "code": None
    }
    status, _, body = _post(f"{server.url}/v1/messages", msgs(user(TEXT)), ANTHROPIC_HEADERS)
    assert status == 500 and body == {
        "type": "error", "error": {"type": "api_error", "message": "boom"}
    }
    status, _, body = _post(f"{server.url}/v1/messages", msgs(user(TEXT)), ANTHROPIC_HEADERS)
    assert status == 529 and body["error"]["type"] == "overloaded_error"
    assert [r.status for r in server.requests] == [429, 500, 529]

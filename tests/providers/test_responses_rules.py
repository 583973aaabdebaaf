"""The test server's Responses API checks: each refuses what the real API refuses (quoting its
error where known), so the adapter tests that rely on them could fail."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from . import responses_wire
from .openai_wire import WireError
from .script import Call, Reply
from .server import ProviderServer

OPEN = {"type": "object", "properties": {}, "additionalProperties": False, "required": []}
FN = {"type": "function", "name": "add", "parameters": OPEN, "strict": True}
USER = {"role": "user", "content": "hi"}
CALL = {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "c1", "output": "2"}


def body(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "input": list(items), "store": False, **extra}


def issued_pair() -> tuple[responses_wire.Issued, dict[str, Any], dict[str, Any]]:
    """What the server issued for a reasoning reply that called a tool."""
    issued = responses_wire.Issued()
    request = body(USER, tools=[FN], include=["reasoning.encrypted_content"])
    reasoning, call = responses_wire.output_items(
        request, Reply(thinking="plan", calls=[Call("add", id="c1")]), 7, issued
    )
    return issued, reasoning, call


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    return body(USER, tools=[{**FN, "parameters": schema}])


BAD = [
    (body(USER, OUT, tools=[FN]), "No tool call found for function call output with call_id c1."),
    (body(USER, CALL, tools=[FN]), "No tool output found for function call c1."),
    (body(USER, CALL, OUT, OUT, tools=[FN]), "Duplicate function call output for call_id c1"),
    (body(USER, CALL, OUT, CALL, OUT, tools=[FN]), "Duplicate function call with call_id c1"),
    (body(USER, {"type": "web_search_call", "id": "ws_1"}), "Invalid value: 'web_search_call'"),
    (body({"role": "tool", "content": "x"}), "Invalid value: 'tool'"),
    (
        body(USER, {"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}),
        "Invalid value: 'input_text'",
    ),
    (body(USER, previous_response_id="resp_1"), "Previous response with id 'resp_1' not found."),
    (body(USER, include=["reasoning.secret"]), "Invalid value: 'reasoning.secret'"),
    (body(USER, max_output_tokens=5), "Expected a value >= 16"),
    (body(), "Invalid 'input': empty array."),
    (body(USER, tools=[{**FN, "name": "bad name"}]), "pattern"),
    (body(USER, tools=[FN, FN]), "Duplicate function name 'add'"),
    (
        body(USER, tools=[{"type": "function", "function": {"name": "add"}, "name": "add"}]),
        "Unknown parameter: 'tools[0].function'",
    ),
    (body(USER, tools=[FN], tool_choice={"type": "function", "name": "x"}), "not found in 'tools'"),
    (body(USER, tool_choice="required"), "must be specified with 'tools'"),
    (
        strict({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        "'additionalProperties' is required to be supplied and to be false",
    ),
    (
        strict({"type": "object", "properties": {"a": {"type": "integer"}},
                "additionalProperties": False}),
        "including every key in properties. Missing 'a'",
    ),
    (
        strict({**OPEN, "properties": {"o": {"type": "object", "properties": {}}},
                "required": ["o"]}),
        "In context=('properties', 'o'), 'additionalProperties'",
    ),
    (
        body(USER, {"type": "reasoning", "id": "rs_9", "summary": []}),
        "Item with id 'rs_9' not found. Items are not persisted when `store` is set to false.",
    ),
    (
        body(USER, {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "x"}),
        "The encrypted content for item rs_9 could not be verified.",
    ),
]


@pytest.mark.parametrize(("request_body", "error"), BAD, ids=[e for _, e in BAD])
def test_the_server_refuses_what_the_api_refuses(request_body: dict[str, Any], error: str) -> None:
    with pytest.raises(WireError) as caught:
        responses_wire.validate(request_body, responses_wire.Issued())
    assert error in caught.value.message


def test_strict_false_allows_any_object_schema() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "integer"}}}
    responses_wire.validate(
        body(USER, tools=[{**FN, "parameters": loose, "strict": False}]), responses_wire.Issued()
    )


def test_a_reasoning_item_and_its_call_go_back_together_and_unchanged() -> None:
    issued, reasoning, call = issued_pair()
    sent_call = {k: call[k] for k in ("type", "id", "call_id", "name", "arguments")}
    responses_wire.validate(body(USER, reasoning, sent_call, OUT, tools=[FN]), issued)
    assert reasoning["encrypted_content"].startswith("enc_")

    cases = [
        ((USER, sent_call, OUT),
         f"Item '{call['id']}' of type 'function_call' was provided without its required "
         f"'reasoning' item: '{reasoning['id']}'."),
        ((USER, reasoning, CALL, OUT),
         f"Item '{reasoning['id']}' of type 'reasoning' was provided without its required "
         "following item."),
        ((USER, {**reasoning, "encrypted_content": "enc_forged"}, sent_call, OUT),
         "could not be verified"),
        ((USER, {**reasoning, "summary": []}, sent_call, OUT), "came back changed"),
        ((USER, {k: v for k, v in reasoning.items() if k != "encrypted_content"}, sent_call, OUT),
         "Items are not persisted when `store` is set to false"),
    ]
    for items, error in cases:
        with pytest.raises(WireError) as caught:
            responses_wire.validate(body(*items, tools=[FN]), issued)
        assert error in caught.value.message


def test_reasoning_without_include_has_no_encrypted_content() -> None:
    items = responses_wire.output_items(
        body(USER), Reply(thinking="plan", text="hi"), 1, responses_wire.Issued()
    )
    assert "encrypted_content" not in items[0]


async def test_refusals_reach_the_sdk_as_400(server: ProviderServer) -> None:
    client = openai.AsyncOpenAI(base_url=server.openai_url, api_key="sk-test", max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", input=[USER, OUT], tools=[FN])  # type: ignore[list-item]
    assert "No tool call found for function call output with call_id c1." in str(caught.value)
    assert caught.value.body["message"].startswith("No tool call found")  # type: ignore[index]
    assert len(server.take_rejections()) == 1
    await client.close()

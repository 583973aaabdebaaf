"""The OpenAI Responses API as the test server speaks it: request checks and reply rendering.

Checks follow the API reference and the errors the real service returns (quoted where known,
from users' reports of them): every ``function_call_output`` answers an earlier
``function_call`` ("No tool call found for function call output with call_id ..."), every
``function_call`` is answered ("No tool output found for function call ..."); with
``store: false`` a reasoning item must carry its ``encrypted_content`` ("Item with id ... not
found. Items are not persisted when `store` is set to false ..."), must come back unchanged,
and must be followed by the item that followed it ("... was provided without its required
following item"), whose ``function_call`` cannot come without it ("Item 'fc_...' of type
'function_call' was provided without its required 'reasoning' item: 'rs_...'."). Function
tools are strict unless ``strict: false`` (the Responses default), and a strict schema must
follow the strict-mode rules. Unknown item types and roles are refused.

Stricter than the service, on purpose: a ``function_call_output`` answering a call twice is
refused (the service's wording for that case is not known to us), and a reasoning item must
come back byte-for-byte as issued (the service verifies only the encrypted content).

The server remembers the reasoning items it issued (:class:`Issued`) so it can recognise
them when they come back; ``reset`` forgets them between tests.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from . import media_wire
from .openai_wire import NAME, WireError, tokens
from .script import Reply, ScriptError

ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")
ROLES = ("user", "assistant", "system", "developer")
INCLUDES = {
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
    "file_search_call.results",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
}


@dataclass(slots=True)
class Issued:
    """Reasoning items the server handed out: id -> (item, the id of the item after it)."""

    reasoning: dict[str, tuple[dict[str, Any], str | None]] = field(default_factory=dict)
    #: follower item id -> the reasoning item id it needs before it
    needs: dict[str, str] = field(default_factory=dict)


def validate(body: dict[str, Any], issued: Issued) -> None:
    """Raise :class:`WireError` for a request the Responses API would reject."""
    if not isinstance(body.get("model"), str):
        raise WireError("Missing required parameter: 'model'.", "model")
    if body.get("previous_response_id") is not None:  # nothing is ever stored here
        raise WireError(
            f"Previous response with id '{body['previous_response_id']}' not found.",
            "previous_response_id",
        )
    for value in body.get("include") or ():
        if value not in INCLUDES:
            raise WireError(f"Invalid value: '{value}'. Supported values are: "
                            f"{', '.join(sorted(INCLUDES))}.", "include")
    limit = body.get("max_output_tokens")
    if limit is not None and (not isinstance(limit, int) or limit < 16):
        raise WireError(
            f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, "
            f"but got {limit} instead.",
            "max_output_tokens",
        )
    names = _check_tools(body.get("tools"))
    _check_tool_choice(body.get("tool_choice"), names)
    items = body.get("input")
    if isinstance(items, str):
        return
    if not isinstance(items, list) or not items:
        raise WireError("Invalid 'input': empty array.", "input")
    _check_items(items, stored=body.get("store") is not False, issued=issued)


def _check_tools(tools: Any) -> set[str]:
    names: set[str] = set()
    if tools is None:
        return names
    if not isinstance(tools, list):
        raise WireError("Invalid type for 'tools': expected an array.", "tools")
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise WireError(f"Missing required parameter: '{where}.type'.", f"{where}.type")
        name = tool.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise WireError(
                f"Invalid '{where}.name': string does not match pattern. Expected a string "
                "that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                f"{where}.name",
            )
        if "function" in tool:  # the Chat Completions shape sent to the wrong API
            raise WireError(f"Unknown parameter: '{where}.function'.", f"{where}.function")
        if name in names:
            raise WireError(f"Duplicate function name '{name}' in tools", f"{where}.name")
        names.add(name)
        params = tool.get("parameters")
        if not isinstance(params, dict) or params.get("type") != "object":
            raise WireError(
                f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                "'type: \"object\"', got 'type: \"None\"'.",
                f"{where}.parameters",
            )
        if tool.get("strict", True) is not False:
            problem = _strict_problem(params, ())
            if problem:
                raise WireError(
                    f"Invalid schema for function '{name}': {problem}", f"{where}.parameters"
                )
    return names


def _strict_problem(schema: Any, path: tuple[str, ...]) -> str | None:
    """The first strict-mode rule the schema breaks (every object closed, every key required)."""
    if not isinstance(schema, dict):
        return None
    context = f"In context=({', '.join(repr(p) for p in path)})"
    if schema.get("type") == "object" or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return f"{context}, 'additionalProperties' is required to be supplied and to be false."
        properties = schema.get("properties") or {}
        missing = [k for k in properties if k not in (schema.get("required") or ())]
        if missing:
            return (f"{context}, 'required' is required to be supplied and to be an array "
                    f"including every key in properties. Missing '{missing[0]}'.")
        for key, sub in properties.items():
            if problem := _strict_problem(sub, (*path, "properties", key)):
                return problem
    for key in ("items", "anyOf", "$defs", "definitions"):
        sub = schema.get(key)
        subs = sub.values() if isinstance(sub, dict) and key in ("$defs", "definitions") else (
            sub if isinstance(sub, list) else [sub] if sub is not None else []
        )
        for index, item in enumerate(subs):
            if problem := _strict_problem(item, (*path, key, str(index))):
                return problem
    return None


def _check_tool_choice(choice: Any, names: set[str]) -> None:
    if choice is None or choice in ("auto", "none", "required"):
        if choice == "required" and not names:
            raise WireError("Tool choice 'required' must be specified with 'tools' parameter.",
                            "tool_choice")
        return
    if not isinstance(choice, dict) or choice.get("type") != "function":
        raise WireError(f"Invalid value for 'tool_choice': {choice!r}", "tool_choice")
    if choice.get("name") not in names:
        raise WireError(
            f"Tool choice 'function' not found in 'tools' parameter: {choice.get('name')}",
            "tool_choice",
        )


def _check_items(items: list[Any], *, stored: bool, issued: Issued) -> None:
    open_calls: dict[str, str] = {}  # call_id -> name, not yet answered
    answered: set[str] = set()
    for index, item in enumerate(items):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise WireError(f"Invalid type for '{where}': expected an object.", where)
        kind = item.get("type", "message" if "role" in item else None)
        if kind not in ITEM_TYPES:
            raise WireError(
                f"Invalid value: '{kind}'. Supported values are: {', '.join(ITEM_TYPES)}.",
                f"{where}.type",
            )
        if kind == "message":
            _check_message(item, where)
        elif kind == "reasoning":
            _check_reasoning(item, where, items, index, stored=stored, issued=issued)
        elif kind == "function_call":
            _check_call(item, where, items, index, issued)
            if item["call_id"] in open_calls or item["call_id"] in answered:
                raise WireError(f"Duplicate function call with call_id {item['call_id']}.",
                                where)
            open_calls[item["call_id"]] = item["name"]
        else:
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise WireError(f"Missing required parameter: '{where}.call_id'.", where)
            if call_id in answered:
                raise WireError(
                    f"Duplicate function call output for call_id {call_id}.", "input"
                )
            if call_id not in open_calls:
                raise WireError(
                    f"No tool call found for function call output with call_id {call_id}.",
                    "input",
                )
            if not isinstance(item.get("output"), str | list):
                raise WireError(f"Missing required parameter: '{where}.output'.", where)
            try:
                media_wire.responses_output(item["output"], where, media_wire.received)
            except ValueError as exc:
                raise WireError(str(exc), f"{where}.output") from exc
            del open_calls[call_id]
            answered.add(call_id)
    if open_calls:
        raise WireError(f"No tool output found for function call {next(iter(open_calls))}.",
                        "input")


def _check_message(item: dict[str, Any], where: str) -> None:
    role = item.get("role")
    if role not in ROLES:
        raise WireError(
            f"Invalid value: '{role}'. Supported values are: 'user', 'assistant', 'system', "
            "and 'developer'.",
            f"{where}.role",
        )
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise WireError(f"Missing required parameter: '{where}.content'.", f"{where}.content")
    allowed = (("output_text", "refusal") if role == "assistant"
               else ("input_text", "input_image", "input_file"))
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            raise WireError(
                f"Invalid value: '{kind}'. Supported values are: "
                f"{' and '.join(repr(a) for a in allowed)}.",
                f"{where}.content[{j}]",
            )
        if kind in ("input_image", "input_file"):
            try:
                media_wire.responses_part(part, f"{where}.content[{j}]", media_wire.received)
            except ValueError as exc:
                raise WireError(str(exc), f"{where}.content[{j}]") from exc
            continue
        if not isinstance(part.get("text", part.get("refusal")), str):
            raise WireError(f"Missing required parameter: '{where}.content[{j}].text'.", where)


def _check_reasoning(
    item: dict[str, Any], where: str, items: list[Any], index: int, *, stored: bool,
    issued: Issued,
) -> None:
    item_id = item.get("id")
    if not isinstance(item_id, str) or not isinstance(item.get("summary"), list):
        raise WireError(f"Missing required parameter: '{where}.summary'.", where)
    if not stored and item.get("encrypted_content") is None:
        raise WireError(
            f"Item with id '{item_id}' not found. Items are not persisted when `store` is set "
            "to false. Try again with `store` set to true, or remove this item from your input.",
            "input",
        )
    known = issued.reasoning.get(item_id)
    if known is None:
        raise WireError(
            f"The encrypted content for item {item_id} could not be verified.", "input"
        )
    original, following = known
    if item != original:
        raise WireError(
            f"The encrypted content for item {item_id} could not be verified (the item came "
            "back changed).",
            "input",
        )
    after = items[index + 1] if index + 1 < len(items) else None
    if following is not None and (not isinstance(after, dict) or after.get("id") != following):
        raise WireError(
            f"Item '{item_id}' of type 'reasoning' was provided without its required "
            "following item.",
            "input",
        )


def _check_call(
    item: dict[str, Any], where: str, items: list[Any], index: int, issued: Issued
) -> None:
    for key in ("call_id", "name", "arguments"):
        if not isinstance(item.get(key), str):
            raise WireError(f"Missing required parameter: '{where}.{key}'.", f"{where}.{key}")
    needed = issued.needs.get(item.get("id") or "")
    before = items[index - 1] if index else None
    if needed is not None and (not isinstance(before, dict) or before.get("id") != needed):
        raise WireError(
            f"Item '{item['id']}' of type 'function_call' was provided without its required "
            f"'reasoning' item: '{needed}'.",
            "input",
        )


# ---------------------------------------------------------------------------- rendering


def check_reply(body: dict[str, Any], reply: Reply) -> None:
    """Refuse a script that the request's controls forbid (a real model could not answer so)."""
    if not reply.calls:
        return
    if not body.get("tools"):
        raise ScriptError("calls scripted but the request has no tools")
    choice = body.get("tool_choice")
    if choice == "none":
        raise ScriptError("calls scripted but the request said tool_choice: none")
    if isinstance(choice, dict) and any(c.name != choice["name"] for c in reply.calls):
        raise ScriptError(f"calls scripted but the request forced {choice['name']}")
    if body.get("parallel_tool_calls") is False and len(reply.calls) > 1:
        raise ScriptError("several calls scripted but parallel_tool_calls is false")


def _encrypted(item_id: str, text: str) -> str:
    return "enc_" + hashlib.sha256(f"{item_id}:{text}".encode()).hexdigest()


def output_items(body: dict[str, Any], reply: Reply, number: int, issued: Issued) -> list[Any]:
    """The response's output items; reasoning ones are remembered in ``issued``."""
    items: list[dict[str, Any]] = []
    if reply.thinking is not None:
        reasoning: dict[str, Any] = {
            "type": "reasoning",
            "id": f"rs_{number}",
            "summary": [{"type": "summary_text", "text": reply.thinking}],
        }
        if "reasoning.encrypted_content" in (body.get("include") or ()):
            reasoning["encrypted_content"] = _encrypted(reasoning["id"], reply.thinking)
        items.append(reasoning)
    if reply.text:
        items.append({
            "type": "message", "id": f"msg_{number}", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        })
    for i, call in enumerate(reply.calls):
        raw = call.raw
        last = i == len(reply.calls) - 1
        if reply.truncate and last:
            raw = raw[: max(1, len(raw) // 2)]
        items.append({
            "type": "function_call", "id": f"fc_{number}_{i}",
            "call_id": call.id or f"call_{number}_{i}", "name": call.name, "arguments": raw,
            "status": "incomplete" if reply.truncate and last else "completed",
        })
    if reply.thinking is not None:
        following = items[1]["id"] if len(items) > 1 else None
        issued.reasoning[items[0]["id"]] = (items[0], following)
        if following is not None:
            issued.needs[following] = items[0]["id"]
    return items


def response(
    body: dict[str, Any], reply: Reply, number: int, output: list[Any], usage: dict[str, Any]
) -> dict[str, Any]:
    """The ``response`` object (``status`` completed, or incomplete for a truncated reply)."""
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 1_700_000_000 + number,
        "model": body["model"],
        "status": "incomplete" if reply.truncate else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if reply.truncate else None,
        "error": None,
        "instructions": None,
        "metadata": {},
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "temperature": body.get("temperature"),
        "top_p": None,
        "store": body.get("store", True),
        "usage": usage,
    }


def usage(
    body: dict[str, Any], reply: Reply, output: list[Any], previous: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """Usage with cached input (the prefix of items the previous request sent too) and
    reasoning tokens (counted within ``output_tokens``, as the API does)."""
    items = body["input"] if isinstance(body["input"], list) else [body["input"]]
    keys = [json.dumps(i, sort_keys=True) for i in items]
    shared = 0
    for a, b in zip(keys, previous, strict=False):
        if a != b:
            break
        shared += 1
    prompt = tokens(items) + (tokens(body["tools"]) if body.get("tools") else 0)
    cached = min(prompt, tokens(items[:shared])) if shared else 0
    reasoning = tokens(reply.thinking) if reply.thinking else 0
    written = reply.output_tokens or tokens([i for i in output if i["type"] != "reasoning"])
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": written + reasoning,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + written + reasoning,
    }, keys


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def events(final: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed response, ending with completed or incomplete."""
    out: list[tuple[str, dict[str, Any]]] = []

    def event(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, "sequence_number": len(out), **data}))

    event("response.created", response={**final, "status": "in_progress", "output": [],
                                        "usage": None, "incomplete_details": None})
    for index, item in enumerate(final["output"]):
        at = {"output_index": index, "item_id": item["id"]}
        kind = item["type"]
        if kind == "reasoning":
            event("response.output_item.added", output_index=index,
                  item={"type": "reasoning", "id": item["id"], "summary": []})
            for piece in _pieces(item["summary"][0]["text"]):
                event("response.reasoning_summary_text.delta", **at, summary_index=0,
                      delta=piece)
        elif kind == "message":
            event("response.output_item.added", output_index=index,
                  item={**item, "status": "in_progress", "content": []})
            text = item["content"][0]["text"]
            for piece in _pieces(text):
                event("response.output_text.delta", **at, content_index=0, delta=piece,
                      logprobs=[])
            event("response.output_text.done", **at, content_index=0, text=text, logprobs=[])
        else:
            event("response.output_item.added", output_index=index,
                  item={**item, "arguments": "", "status": "in_progress"})
            for piece in _pieces(item["arguments"]):
                event("response.function_call_arguments.delta", **at, delta=piece)
            event("response.function_call_arguments.done", **at, name=item["name"],
                  arguments=item["arguments"])
        event("response.output_item.done", output_index=index, item=item)
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    event(terminal, response=final)
    return out

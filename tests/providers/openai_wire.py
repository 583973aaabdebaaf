"""OpenAI Chat Completions as the test server speaks it: request checks and reply rendering.

The checks follow the published API reference and the errors the real service returns
(messages quoted where known): tool messages must answer the ``tool_calls`` of the assistant
message right before them, every call must be answered before the conversation goes on,
``tool_choice`` / ``parallel_tool_calls`` need ``tools``, ``stream_options`` needs ``stream``.
Two checks are stricter than the service, on purpose: results must come in call order (our
history contract), and ``tools`` may not be mixed with legacy ``functions``. Legacy functions
mode is checked the way the old API behaved: a ``function`` message carries ``name`` and
answers the ``function_call`` of the assistant message right before it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import media_wire
from .script import Call, Reply, ScriptError

#: Content parts that carry media (checked by :mod:`.media_wire`).
MEDIA_PARTS = ("image_url", "file", "input_audio")

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")  # \Z: "$" also matches before a final newline
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


class WireError(Exception):
    """A request the real API would refuse with 400."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


def error_body(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def validate(body: dict[str, Any], *, require_tool_call_content: bool = False) -> None:
    """Raise :class:`WireError` for a request the API would reject.

    ``require_tool_call_content`` emulates compatible servers (llama.cpp, vLLM) that reject
    ``null`` content on an assistant message carrying tool calls and parse call arguments.
    """
    if not isinstance(body.get("model"), str):
        raise WireError("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise WireError("[] is too short - 'messages'", "messages")
    tools, functions = body.get("tools"), body.get("functions")
    if tools is not None and functions is not None:
        raise WireError("'tools' and the deprecated 'functions' cannot be combined", "functions")
    tool_names = _check_tools(tools) if tools is not None else set()
    function_names = _check_functions(functions) if functions is not None else set()
    _check_tool_choice(body, tool_names, tools is not None)
    _check_function_call(body, function_names, functions is not None)
    if "stream_options" in body and not body.get("stream"):
        raise WireError(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    _check_messages(messages, legacy=functions is not None, strict=require_tool_call_content)


def _check_tools(tools: Any) -> set[str]:
    if not isinstance(tools, list) or not tools:
        raise WireError("[] is too short - 'tools'", "tools")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise WireError(f"Missing required parameter: 'tools[{i}].type'.", f"tools[{i}].type")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise WireError(
                f"Missing required parameter: 'tools[{i}].function'.", f"tools[{i}].function"
            )
        names.add(_check_function(function, f"tools[{i}].function", names))
    return names


def _check_functions(functions: Any) -> set[str]:
    if not isinstance(functions, list) or not functions:
        raise WireError("[] is too short - 'functions'", "functions")
    names: set[str] = set()
    for i, function in enumerate(functions):
        names.add(_check_function(function, f"functions[{i}]", names))
    return names


def _check_function(function: dict[str, Any], where: str, seen: set[str]) -> str:
    name = function.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise WireError(
            f"Invalid '{where}.name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
            f"{where}.name",
        )
    if name in seen:
        raise WireError(f"Duplicate function name '{name}' in tools", f"{where}.name")
    params = function.get("parameters")
    if params is not None and (not isinstance(params, dict) or params.get("type") != "object"):
        raise WireError(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of "
            "'type: \"object\"'",
            f"{where}.parameters",
        )
    return name


def _check_tool_choice(body: dict[str, Any], names: set[str], has_tools: bool) -> None:
    for key in ("tool_choice", "parallel_tool_calls"):
        if key in body and not has_tools:
            raise WireError(
                f"Invalid value for '{key}': '{key}' is only allowed when 'tools' are specified.",
                key,
            )
    choice = body.get("tool_choice")
    if choice is None or choice in ("auto", "none", "required"):
        return
    if not isinstance(choice, dict) or choice.get("type") != "function":
        raise WireError(f"Invalid value for 'tool_choice': {choice!r}", "tool_choice")
    name = (choice.get("function") or {}).get("name")
    if name not in names:
        raise WireError(
            f"Invalid value for 'tool_choice': function '{name}' is not among the tools",
            "tool_choice",
        )


def _check_function_call(body: dict[str, Any], names: set[str], has_functions: bool) -> None:
    choice = body.get("function_call")
    if choice is None:
        return
    if not has_functions:
        raise WireError(
            "Invalid value for 'function_call': 'function_call' is only allowed when "
            "'functions' are specified.",
            "function_call",
        )
    if choice in ("auto", "none"):
        return
    if not isinstance(choice, dict) or choice.get("name") not in names:
        raise WireError(f"Invalid value for 'function_call': {choice!r}", "function_call")


def _check_messages(messages: list[Any], *, legacy: bool, strict: bool) -> None:
    pending: list[str] = []
    last_function: str | None = None
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise WireError(f"Invalid value for '{where}.role'.", f"{where}.role")
        role = message["role"]
        if pending and role != "tool":
            raise WireError(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}",
                f"{where}.role",
            )
        if legacy and role == "tool":
            raise WireError(f"{where}: 'tool' messages need 'tools', not 'functions'", where)
        if role == "assistant":
            pending = _check_assistant(message, where, legacy=legacy, strict=strict)
            call = message.get("function_call")
            last_function = call.get("name") if isinstance(call, dict) else None
            continue
        if role == "tool":
            _check_tool_message(message, where, pending)
        elif role == "function":
            _check_function_message(message, where, last_function)
        else:
            _check_content(message.get("content"), where, required=True)
        last_function = None
    if pending:
        raise WireError(
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            f"to each 'tool_call_id'. The following tool_call_ids did not have response "
            f"messages: {', '.join(pending)}",
            "messages",
        )


def _check_assistant(
    message: dict[str, Any], where: str, *, legacy: bool, strict: bool
) -> list[str]:
    calls = message.get("tool_calls")
    function_call = message.get("function_call")
    content = message.get("content")
    if content is None and not calls and not function_call:
        raise WireError(f"Invalid value for '{where}.content': expected a string, got null.", where)
    if content is not None:
        _check_content(content, where, required=False)
    elif strict:
        raise WireError(f"{where}: assistant content must be a string, not null", where)
    if function_call is not None:
        if not isinstance(function_call, dict) or not isinstance(function_call.get("name"), str):
            raise WireError(f"Missing required parameter: '{where}.function_call.name'.", where)
        if not isinstance(function_call.get("arguments"), str):
            raise WireError(f"Missing required parameter: '{where}.function_call.arguments'.")
    if calls is None:
        return []
    if legacy:
        raise WireError(f"{where}: 'tool_calls' need 'tools', not 'functions'", where)
    if not isinstance(calls, list) or not calls:
        raise WireError(
            f"Invalid '{where}.tool_calls': empty array. Expected an array with minimum length 1",
            f"{where}.tool_calls",
        )
    ids: list[str] = []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call.get("id"), str) or call.get("type") != "function":
            raise WireError(f"Missing required parameter: '{at}.id'.", f"{at}.id")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise WireError(f"Missing required parameter: '{at}.function.name'.", at)
        if not isinstance(function.get("arguments"), str):
            raise WireError(f"Missing required parameter: '{at}.function.arguments'.", at)
        if strict:  # compatible servers parse the arguments to render their chat template
            try:
                json.loads(function["arguments"])
            except json.JSONDecodeError:
                raise WireError(f"{at}.function.arguments: invalid JSON", at) from None
        ids.append(call["id"])
    if len(set(ids)) != len(ids):
        raise WireError(f"{where}: duplicate tool_call ids", f"{where}.tool_calls")
    return ids


def _check_tool_message(message: dict[str, Any], where: str, pending: list[str]) -> None:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise WireError(f"Missing required parameter: '{where}.tool_call_id'.", where)
    if call_id not in pending:
        raise WireError(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            f"{where}.role",
        )
    if pending[0] != call_id:
        raise WireError(
            f"{where}: tool results must answer the calls in order; expected {pending[0]}",
            where,
        )
    pending.pop(0)
    try:
        media_wire.openai_chat_tool_message(message, where)
    except ValueError as exc:
        raise WireError(str(exc), f"{where}.content") from exc
    _check_content(message.get("content"), where, required=True)


def _check_function_message(message: dict[str, Any], where: str, last: str | None) -> None:
    if not isinstance(message.get("name"), str):
        raise WireError(f"Missing required parameter: '{where}.name'.", f"{where}.name")
    if last is None or message["name"] != last:
        raise WireError(
            f"{where}: a 'function' message must answer the 'function_call' of the assistant "
            "message right before it (same name)",
            where,
        )
    if not isinstance(message.get("content"), str):
        raise WireError(f"Missing required parameter: '{where}.content'.", where)


def _check_content(content: Any, where: str, *, required: bool) -> None:
    if isinstance(content, str):
        return
    if isinstance(content, list) and all(
        isinstance(p, dict) and (p.get("type") in MEDIA_PARTS or (
            p.get("type") == "text" and isinstance(p.get("text"), str)))
        for p in content
    ):
        for j, part in enumerate(content):
            if part["type"] in MEDIA_PARTS:
                try:
                    media_wire.openai_chat_part(part, f"{where}.content[{j}]",
                                                media_wire.received)
                except ValueError as exc:
                    raise WireError(str(exc), f"{where}.content[{j}]") from exc
        return
    if content is None and required:
        raise WireError(f"Missing required parameter: '{where}.content'.", f"{where}.content")
    raise WireError(f"Invalid type for '{where}.content'.", f"{where}.content")


# ---------------------------------------------------------------------------- rendering


def tokens(value: Any) -> int:
    """A deterministic token count: four characters of canonical JSON per token."""
    return max(1, len(json.dumps(value, sort_keys=True, separators=(",", ":"))) // 4)


def check_reply(body: dict[str, Any], reply: Reply) -> None:
    """Refuse a script that the request's controls forbid (a real model could not answer so)."""
    if not reply.calls:
        return
    if "functions" in body:
        if len(reply.calls) > 1:
            raise ScriptError("legacy functions mode answers one call per response")
        if body.get("function_call") == "none":
            raise ScriptError("calls scripted but the request said function_call: none")
        return
    if "tools" not in body:
        raise ScriptError("calls scripted but the request has no tools")
    choice = body.get("tool_choice")
    if choice == "none":
        raise ScriptError("calls scripted but the request said tool_choice: none")
    if isinstance(choice, dict) and any(c.name != choice["function"]["name"] for c in reply.calls):
        raise ScriptError(f"calls scripted but the request forced {choice['function']['name']}")
    if body.get("parallel_tool_calls") is False and len(reply.calls) > 1:
        raise ScriptError("several calls scripted but parallel_tool_calls is false")


def _arguments(reply: Reply, index: int, call: Call) -> str:
    raw = call.raw
    if reply.truncate and index == len(reply.calls) - 1:
        return raw[: max(1, len(raw) // 2)]
    return raw


def _finish_reason(body: dict[str, Any], reply: Reply) -> str:
    if reply.truncate:
        return "length"
    if reply.calls:
        return "function_call" if "functions" in body else "tool_calls"
    return "stop"


def _call_id(number: int, index: int, call: Call) -> str:
    return call.id or f"call_{number}_{index}"


def completion(
    body: dict[str, Any], reply: Reply, number: int, prompt: int, cached: int
) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.thinking:
        message["reasoning_content"] = reply.thinking
    if reply.calls and "functions" in body:
        message["function_call"] = {
            "name": reply.calls[0].name,
            "arguments": _arguments(reply, 0, reply.calls[0]),
        }
    elif reply.calls:
        message["tool_calls"] = [
            {
                "id": _call_id(number, i, c),
                "type": "function",
                "function": {"name": c.name, "arguments": _arguments(reply, i, c)},
            }
            for i, c in enumerate(reply.calls)
        ]
    output = reply.output_tokens or tokens(message)
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish_reason(body, reply),
                "logprobs": None,
            }
        ],
        "usage": _usage(prompt, output, cached),
    }


def _usage(prompt: int, output: int, cached: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def chunks(
    body: dict[str, Any], reply: Reply, number: int, prompt: int, cached: int
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed reply (``[DONE]`` not included)."""
    out: list[dict[str, Any]] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
        out.append(
            {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000 + number,
                "model": body["model"],
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }
        )

    chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.thinking or ""):
        chunk({"reasoning_content": piece})
    for piece in _pieces(reply.text):
        chunk({"content": piece})
    legacy = "functions" in body
    for i, call in enumerate(reply.calls):
        args = _arguments(reply, i, call)
        if legacy:
            chunk({"function_call": {"name": call.name, "arguments": ""}})
            for piece in _pieces(args):
                chunk({"function_call": {"arguments": piece}})
            continue
        head = {
            "index": i,
            "id": _call_id(number, i, call),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunk({"tool_calls": [head]})
        for piece in _pieces(args):
            chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    chunk({}, _finish_reason(body, reply))
    if (body.get("stream_options") or {}).get("include_usage"):
        output = reply.output_tokens or tokens([reply.text, [c.raw for c in reply.calls]])
        last = dict(out[-1], choices=[], usage=_usage(prompt, output, cached))
        out.append(last)
    return out


def prompt_usage(body: dict[str, Any], previous: list[str]) -> tuple[int, int, list[str]]:
    """(prompt tokens, cached tokens, message keys): cached is the prefix of whole messages
    that the previous request of the same conversation already sent, like automatic caching."""
    keys = [json.dumps(m, sort_keys=True) for m in body["messages"]]
    definitions = body.get("tools") or body.get("functions")
    prompt = tokens(body["messages"]) + (tokens(definitions) if definitions else 0)
    shared = 0
    for a, b in zip(keys, previous, strict=False):
        if a != b:
            break
        shared += 1
    cached = tokens(body["messages"][:shared]) if shared else 0
    return prompt, min(cached, prompt), keys

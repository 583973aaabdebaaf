"""Anthropic Messages as the test server speaks it: request checks, prompt-cache accounting and
reply rendering.

Checks follow the API reference and the service's error messages (quoted where known): only
``user``/``assistant`` roles, the first one ``user``, strict alternation, non-empty text
blocks, every ``tool_use`` answered by a ``tool_result`` at the start of the very next user
message (in call order: our contract, stricter than the service), no ``tool_result`` without
its ``tool_use``, at most four ``cache_control`` breakpoints, none on thinking blocks, thinking
blocks returned unmodified (the server signs them and checks the signature), and with thinking
enabled the assistant turn before tool results must start with its thinking block.

Prompt caching is simulated deterministically, after Anthropic's documented rules: the
request is a sequence of blocks (tools, system, then message blocks) and a cache entry is the
prefix ending at a ``cache_control`` breakpoint. A request reads the longest stored prefix that
it finds at one of its breakpoints or at a block boundary up to 20 blocks before one (the
documented lookback; a hit further back is missed); a prefix shorter than the minimum
cacheable length (1,024 tokens by default, as for Sonnet and Opus) is neither stored nor read.
Entries belong to one model; ``tool_choice`` and ``thinking`` take part in the message blocks'
key (changing them invalidates the cached messages, not tools and system). Reads are
``cache_read_input_tokens``, the rest of the prefix up to the last cacheable breakpoint is
``cache_creation_input_tokens``, and whatever follows is plain ``input_tokens``; the three add
up to the whole prompt. Tokens are counted as in :func:`tests.providers.openai_wire.tokens`.
There is no time to live: entries last for the server's session (a test resets them).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from . import media_wire
from .openai_wire import tokens
from .script import Call, Reply, ScriptError

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")  # \Z: "$" also matches before a final newline
#: tool_use.id as the Messages API validates it (tool_result.tool_use_id must then match it).
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+\Z")


class WireError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def signature(thinking: str) -> str:
    return "sig_" + hashlib.sha256(thinking.encode()).hexdigest()[:32]


def redacted_data(number: int) -> str:
    """Opaque 'encrypted' reasoning: the server recognises its own data by the checksum."""
    payload = f"enc-{number:04d}"
    return f"{payload}.{signature(payload)}"


def validate(body: dict[str, Any]) -> None:
    if not isinstance(body.get("model"), str):
        raise WireError("model: Field required")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise WireError("max_tokens: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise WireError("messages: at least one message is required")
    names = _check_tools(body.get("tools"))
    _check_tool_choice(body, names)
    thinking = (body.get("thinking") or {}).get("type") == "enabled"
    if thinking:
        budget = body["thinking"].get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024 or budget >= max_tokens:
            raise WireError("thinking.budget_tokens: must be >= 1024 and less than max_tokens")
    _check_system(body.get("system"))
    _check_messages(messages, thinking)
    marks = _count_cache_control(body)
    if marks > 4:
        raise WireError(f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.")


def _check_tools(tools: Any) -> set[str]:
    if tools is None:
        return set()
    names: set[str] = set()
    for i, tool in enumerate(tools):
        name = tool.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise WireError(f"tools.{i}.custom.name: String should match pattern")
        if name in names:
            raise WireError("tools: Tool names must be unique.")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise WireError(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
        names.add(name)
    return names


def _check_tool_choice(body: dict[str, Any], names: set[str]) -> None:
    choice = body.get("tool_choice")
    if choice is None:
        return
    if not names:
        raise WireError("tool_choice may only be specified while providing tools")
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise WireError(f"tool_choice.type: unexpected value {kind!r}")
    if kind == "tool" and choice.get("name") not in names:
        raise WireError(f"tool_choice.name: tool {choice.get('name')!r} not found in tools")
    if kind in ("any", "tool") and (body.get("thinking") or {}).get("type") == "enabled":
        raise WireError("Thinking may not be enabled when tool_choice forces tool use.")


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    for i, block in enumerate(system):
        if block.get("type") != "text" or not block.get("text"):
            raise WireError(f"system.{i}: text content blocks must be non-empty")


def _blocks(message: dict[str, Any], i: int) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            raise WireError(f"messages.{i}: user messages must have non-empty content")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise WireError(f"messages.{i}: all messages must have non-empty content")
    return content


ALLOWED = {
    "user": {"text", "image", "document", "tool_result"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
}


def _check_messages(messages: list[Any], thinking: bool) -> None:
    open_calls: list[str] = []
    previous_role = None
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ALLOWED:
            raise WireError(
                f'messages.{i}.role: Unexpected role "{role}". The Messages API accepts a '
                'top-level `system` parameter, not "system" as an input message role.'
                if role == "system"
                else f"messages.{i}.role: Input should be 'user' or 'assistant'"
            )
        if i == 0 and role != "user":
            raise WireError('messages: first message must use the "user" role')
        if role == previous_role:
            raise WireError(
                f'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row'
            )
        blocks = _blocks(message, i)
        for j, block in enumerate(blocks):
            _check_block(block, role, f"messages.{i}.content.{j}")
        if role == "user":
            _check_results(blocks, open_calls, i)
            open_calls = []
        else:
            open_calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if (
                thinking
                and open_calls
                and blocks[0]["type"] not in ("thinking", "redacted_thinking")
            ):
                raise WireError(
                    f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                    f"but found `{blocks[0]['type']}`. When `thinking` is enabled, a final "
                    "`assistant` message must start with a thinking block."
                )
            if i == len(messages) - 1:
                last = blocks[-1]
                if last["type"] == "text" and last["text"] != last["text"].rstrip():
                    raise WireError("final assistant content cannot end with trailing whitespace")
        previous_role = role


def _check_block(block: dict[str, Any], role: str, where: str) -> None:
    kind = block.get("type")
    if kind not in ALLOWED[role]:
        raise WireError(f"{where}.type: `{kind}` blocks are not allowed in {role} messages")
    if kind in ("image", "document"):
        try:
            media_wire.anthropic_block(block, where, media_wire.received)
        except ValueError as exc:
            raise WireError(str(exc)) from exc
    if kind == "text" and (not isinstance(block.get("text"), str) or not block["text"]):
        raise WireError(f"{where}: text content blocks must be non-empty")
    if kind == "text" and not block["text"].strip():
        raise WireError(f"{where}: text content blocks must contain non-whitespace text")
    if kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise WireError(f"{where}: tool_use blocks need id and name")
        if not TOOL_USE_ID.match(block["id"]):
            raise WireError(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if not isinstance(block.get("input"), dict):
            raise WireError(f"{where}.input: Input should be a valid dictionary")
    if kind == "thinking":
        if "cache_control" in block:
            raise WireError(f"{where}.thinking.cache_control: Extra inputs are not permitted")
        text, sig = block.get("thinking"), block.get("signature")
        if not isinstance(text, str) or not isinstance(sig, str):
            raise WireError(f"{where}.thinking.signature: Field required")
        if sig != signature(text):
            raise WireError(f"{where}: Invalid `signature` in `thinking` block")
    if kind == "redacted_thinking":
        data = block.get("data")
        if not isinstance(data, str):
            raise WireError(f"{where}.redacted_thinking.data: Field required")
        payload, _, check = data.partition(".")
        if check != signature(payload) or "cache_control" in block:
            raise WireError(f"{where}: Invalid `data` in `redacted_thinking` block")
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            raise WireError(f"{where}.tool_use_id: Field required")
        if not isinstance(block.get("content", ""), str | list):
            raise WireError(f"{where}.content: Input should be a string or a list")
        if not isinstance(block.get("is_error", False), bool):
            raise WireError(f"{where}.is_error: Input should be a valid boolean")
        try:
            media_wire.anthropic_tool_result(block, where, media_wire.received)
        except ValueError as exc:
            raise WireError(str(exc)) from exc


def _check_results(blocks: list[dict[str, Any]], open_calls: list[str], i: int) -> None:
    results = [b for b in blocks if b["type"] == "tool_result"]
    for j, block in enumerate(blocks[: len(results)]):
        if block["type"] != "tool_result":
            raise WireError(
                f"messages.{i}.content.{j}: tool_result blocks must come first in the user "
                "message, before any other content"
            )
    ids = [b["tool_use_id"] for b in results]
    for j, call_id in enumerate(ids):
        if call_id not in open_calls:
            raise WireError(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {call_id}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
    missing = [c for c in open_calls if c not in ids]
    if missing:
        raise WireError(
            f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    if ids != open_calls:
        raise WireError(f"messages.{i}: tool_result blocks must follow the call order")


def _count_cache_control(body: dict[str, Any]) -> int:
    return sum(1 for block in _sequence(body) if "cache_control" in block)


def _sequence(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request as the ordered blocks a prompt cache sees: tools, system, messages."""
    out: list[dict[str, Any]] = list(body.get("tools") or [])
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif system:
        out.extend(system)
    for i, message in enumerate(body["messages"]):
        for block in _blocks(message, i):
            out.append({**block, "_role": message["role"]})
    return out


#: How far before a breakpoint the service looks for an earlier cache entry, in blocks.
LOOKBACK_BLOCKS = 20
#: The shortest cacheable prefix (Claude Sonnet and Opus; Haiku models need more).
MIN_CACHEABLE_TOKENS = 1024


class PromptCache:
    """The server's prompt cache: hashes of the prefixes stored at breakpoints."""

    def __init__(
        self, min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS
    ) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self.prefixes: set[str] = set()

    def account(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(uncached input, cache creation, cache read) tokens for this request."""
        blocks = _sequence(body)
        hashes, totals = self._prefixes(body, blocks)
        running = totals[-1] if totals else 0
        marks = [
            i for i, b in enumerate(blocks)
            if "cache_control" in b and totals[i] >= self.min_tokens
        ]
        if not marks:
            return running, 0, 0
        read = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - self.lookback - 1), -1):
                if hashes[i] in self.prefixes:
                    read = max(read, totals[i])
                    break
        self.prefixes.update(hashes[i] for i in marks)
        cached = max(read, totals[marks[-1]])
        return running - cached, cached - read, read

    @staticmethod
    def _prefixes(
        body: dict[str, Any], blocks: list[dict[str, Any]]
    ) -> tuple[list[str], list[int]]:
        """The hash and token count of the prefix ending at each block."""
        digest = hashlib.sha256(str(body.get("model")).encode())
        message_key = json.dumps(
            [body.get("tool_choice"), body.get("thinking")], sort_keys=True
        ).encode()
        hashes: list[str] = []
        totals: list[int] = []
        running = 0
        in_messages = False
        for block in blocks:
            if "_role" in block and not in_messages:
                digest.update(message_key)
                in_messages = True
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            digest.update(json.dumps(plain, sort_keys=True).encode())
            hashes.append(digest.copy().hexdigest())
            running += tokens({k: v for k, v in plain.items() if k != "_role"})
            totals.append(running)
        return hashes, totals


# ---------------------------------------------------------------------------- rendering


def check_reply(body: dict[str, Any], reply: Reply) -> None:
    if not reply.calls:
        return
    choice = body.get("tool_choice") or {"type": "auto"}
    if not body.get("tools"):
        raise ScriptError("calls scripted but the request has no tools")
    if choice["type"] == "none":
        raise ScriptError("calls scripted but the request said tool_choice none")
    if choice["type"] == "tool" and any(c.name != choice["name"] for c in reply.calls):
        raise ScriptError(f"calls scripted but the request forced {choice['name']}")
    if choice.get("disable_parallel_tool_use") and len(reply.calls) > 1:
        raise ScriptError("several calls scripted but parallel tool use is disabled")


def _stop_reason(reply: Reply) -> str:
    if reply.pause:
        return "pause_turn"
    if reply.truncate:
        return "max_tokens"
    return "tool_use" if reply.calls else "end_turn"


def _call_id(number: int, index: int, call: Call) -> str:
    return call.id or f"toolu_{number:04d}_{index}"


def _content(reply: Reply, number: int) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if reply.thinking:
        content.append(
            {"type": "thinking", "thinking": reply.thinking, "signature": signature(reply.thinking)}
        )
    if reply.redacted:
        content.append({"type": "redacted_thinking", "data": redacted_data(number)})
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.calls):
        truncated = reply.truncate and i == len(reply.calls) - 1
        arguments = {} if truncated or isinstance(call.arguments, str) else call.arguments
        content.append(
            {
                "type": "tool_use",
                "id": _call_id(number, i, call),
                "name": call.name,
                "input": arguments,
            }
        )
    return content


def _usage(accounting: tuple[int, int, int], output: int) -> dict[str, Any]:
    uncached, written, read = accounting
    return {
        "input_tokens": uncached,
        "output_tokens": output,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
    }


def message(
    body: dict[str, Any], reply: Reply, number: int, accounting: tuple[int, int, int]
) -> dict[str, Any]:
    content = _content(reply, number)
    return {
        "id": f"msg_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(accounting, reply.output_tokens or tokens(content)),
    }


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def events(
    body: dict[str, Any], reply: Reply, number: int, accounting: tuple[int, int, int]
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, data)`` pairs of a streamed reply."""
    whole = message(body, reply, number, accounting)
    start = dict(whole, content=[], stop_reason=None, usage=_usage(accounting, 1))
    out: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]

    def add(kind: str, **data: Any) -> None:
        out.append((kind, {"type": kind, **data}))

    for index, block in enumerate(whole["content"]):
        if block["type"] == "thinking":
            add(
                "content_block_start",
                index=index,
                content_block={"type": "thinking", "thinking": ""},
            )
            for piece in _pieces(block["thinking"]):
                add(
                    "content_block_delta",
                    index=index,
                    delta={"type": "thinking_delta", "thinking": piece},
                )
            add(
                "content_block_delta",
                index=index,
                delta={"type": "signature_delta", "signature": block["signature"]},
            )
        elif block["type"] == "redacted_thinking":  # arrives whole, with no deltas
            add("content_block_start", index=index, content_block=block)
        elif block["type"] == "text":
            add("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in _pieces(block["text"]):
                add("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
        else:
            add("content_block_start", index=index, content_block={**block, "input": {}})
            call = reply.calls[index - (len(whole["content"]) - len(reply.calls))]
            raw = call.raw
            if reply.truncate and block is whole["content"][-1]:
                raw = raw[: max(1, len(raw) // 2)]
            for piece in _pieces(raw):
                add(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        add("content_block_stop", index=index)
    add(
        "message_delta",
        delta={"stop_reason": whole["stop_reason"], "stop_sequence": None},
        usage={"output_tokens": whole["usage"]["output_tokens"]},
    )
    add("message_stop")
    return out

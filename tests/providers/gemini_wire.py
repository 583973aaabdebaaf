"""The Gemini API (``generateContent``) as the test server speaks it: checks and rendering.

Checks follow the API reference and the errors the real service returns: roles are ``user``
and ``model`` only; a content has at least one part and each part one kind of data; the
function calls of a model turn are answered by ``functionResponse`` parts in the next
``user`` turn, one per call, in order ("Please ensure that the number of function response
parts is equal to the number of function call parts of the function call turn."); a
``functionResponse`` answers a call; a ``functionCall`` part the server issued with a
``thoughtSignature`` must come back with it ("Function call is missing a thought_signature
in functionCall parts..."). ``functionDeclarations`` parameters use the OpenAPI subset
(upper-case types, no ``$ref``/``const``/``additionalProperties``).

The server signs the first function call of every reply (as Gemini 3 models do) and the
thought part of a reply with ``thinking``; :class:`Issued` remembers the signatures, and a
model turn whose first call is one the server signed must carry one of them (the API checks
the first call of each step).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from . import media_wire
from .openai_wire import WireError, tokens
from .script import Reply, ScriptError

ROLES = ("user", "model")
DATA = ("text", "functionCall", "functionResponse", "inlineData", "fileData",
        "executableCode", "codeExecutionResult")
TYPES = ("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
SCHEMA_KEYS = {"type", "format", "title", "description", "nullable", "enum", "maxItems",
               "minItems", "properties", "required", "minProperties", "maxProperties",
               "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
               "default", "items", "minimum", "maximum"}


@dataclass(slots=True)
class Issued:
    """Signatures handed out: a signed call's key (name and arguments) -> its signatures."""

    calls: dict[str, set[bytes]] = field(default_factory=dict)


def _key(call: dict[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("args") or {}], sort_keys=True)


def _sign(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def error_body(message: str, status: int = 400, kind: str = "INVALID_ARGUMENT") -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": kind}}


def validate(body: dict[str, Any], issued: Issued) -> None:
    """Raise :class:`WireError` for a request the Gemini API would reject."""
    names = _check_tools(body.get("tools"))
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    for name in config.get("allowedFunctionNames") or ():
        if name not in names:
            raise WireError(f"allowed_function_names: function {name} is not declared.",
                            "toolConfig")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise WireError("* GenerateContentRequest.contents: contents is not specified", "contents")
    open_calls: list[dict[str, Any]] = []
    for index, content in enumerate(contents):
        where = f"contents[{index}]"
        role = content.get("role") if isinstance(content, dict) else None
        if role not in ROLES:
            raise WireError(f"Please use a valid role: user, model. (got {role!r} at {where})",
                            where)
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise WireError(f"* GenerateContentRequest.{where}.parts: contents.parts must not "
                            "be empty.", where)
        for j, part in enumerate(parts):
            present = [k for k in DATA if isinstance(part, dict) and k in part]
            if len(present) != 1:
                raise WireError(f"* GenerateContentRequest.{where}.parts[{j}].data: required "
                                "oneof field 'data' must have one initialized field", where)
            try:
                if present == ["inlineData"]:
                    media_wire.gemini_part(part, f"{where}.parts[{j}]", media_wire.received)
                elif present == ["functionResponse"]:
                    media_wire.gemini_function_response(part, f"{where}.parts[{j}]",
                                                        media_wire.received)
            except ValueError as exc:
                raise WireError(f"* GenerateContentRequest.{exc}", where) from exc
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if open_calls:
            if role != "user" or len(responses) != len(open_calls):
                raise WireError(
                    "Please ensure that the number of function response parts is equal to "
                    "the number of function call parts of the function call turn.", where)
            for call, answer in zip(open_calls, responses, strict=True):
                if answer.get("name") != call.get("name") or (
                        "id" in call and answer.get("id") != call["id"]):
                    raise WireError(f"function response {answer.get('name')!r} does not "
                                    f"answer the call {call.get('name')!r} in order", where)
                if not isinstance(answer.get("response"), dict):
                    raise WireError("functionResponse.response must be an object", where)
            open_calls = []
        elif responses:
            raise WireError("Please ensure that function response turn comes immediately "
                            "after a function call turn.", where)
        if role == "model":
            first = True  # the API checks the first call of each model turn
            for j, part in enumerate(parts):
                if "functionCall" in part:
                    call = part["functionCall"]
                    needed = issued.calls.get(_key(call)) if first else None
                    given = _bytes(part.get("thoughtSignature") or part.get("thought_signature"))
                    if needed is not None and given not in needed:
                        raise WireError(
                            f"Function call is missing a thought_signature in functionCall "
                            f"parts. ({where}.parts[{j}])", where)
                    open_calls.append(call)
                    first = False
    if open_calls:
        raise WireError("Please ensure that the number of function response parts is equal "
                        "to the number of function call parts of the function call turn.",
                        "contents")


def _check_tools(tools: Any) -> set[str]:
    names: set[str] = set()
    for tool in tools or ():
        for declaration in tool.get("functionDeclarations") or ():
            name = declaration.get("name")
            if not isinstance(name, str) or not name:
                raise WireError("* functionDeclarations[].name: required", "tools")
            names.add(name)
            if "parameters" in declaration:
                _check_schema(declaration["parameters"], f"{name}.parameters")
    return names


def _check_schema(schema: Any, where: str) -> None:
    if not isinstance(schema, dict):
        raise WireError(f"* {where}: schema must be an object", where)
    # The API parses proto JSON, which takes field names in snake_case too.
    schema = {_camel(k): v for k, v in schema.items()}
    unknown = set(schema) - SCHEMA_KEYS
    if unknown:
        raise WireError(f'Invalid JSON payload received. Unknown name "{sorted(unknown)[0]}" '
                        f"at '{where}': Cannot find field.", where)
    if "type" in schema and schema["type"] not in TYPES:
        raise WireError(f"Invalid value at '{where}.type' ({schema['type']!r})", where)
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        raise WireError(f"Invalid value at '{where}.enum': enum values must be strings", where)
    for key, sub in (schema.get("properties") or {}).items():
        _check_schema(sub, f"{where}.properties.{key}")
    if "items" in schema:
        _check_schema(schema["items"], f"{where}.items")
    for i, sub in enumerate(schema.get("anyOf") or ()):
        _check_schema(sub, f"{where}.anyOf[{i}]")


def _bytes(value: Any) -> bytes | None:
    """Proto JSON ``bytes``: standard or URL-safe base64 (the API takes both)."""
    if not isinstance(value, str):
        return None
    try:
        return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_"))
    except ValueError:
        return None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


# ---------------------------------------------------------------------------- rendering


def check_reply(body: dict[str, Any], reply: Reply) -> None:
    """Refuse a script that the request's controls forbid."""
    if not reply.calls:
        return
    if not body.get("tools"):
        raise ScriptError("calls scripted but the request has no tools")
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if config.get("mode") == "NONE":
        raise ScriptError("calls scripted but the request said mode NONE")
    allowed = config.get("allowedFunctionNames")
    if allowed and any(c.name not in allowed for c in reply.calls):
        raise ScriptError(f"calls scripted but the request allowed only {allowed}")


def parts(reply: Reply, issued: Issued, number: int) -> list[dict[str, Any]]:
    """The candidate's parts; the first call is signed (and remembered in ``issued``)."""
    out: list[dict[str, Any]] = []
    if reply.thinking is not None:
        out.append({"text": reply.thinking, "thought": True,
                    "thoughtSignature": _sign(f"thought:{number}:{reply.thinking}")})
    if reply.text:
        out.append({"text": reply.text})
    for i, call in enumerate(reply.calls):
        args = call.arguments if isinstance(call.arguments, dict) else {}
        if reply.truncate and i == len(reply.calls) - 1:  # cut off: half its arguments
            args = dict(list(args.items())[: len(args) // 2])
        wire: dict[str, Any] = {"functionCall": {"name": call.name, "args": args}}
        if call.id:
            wire["functionCall"]["id"] = call.id
        if i == 0:
            signature = _sign(f"call:{number}:{_key(wire['functionCall'])}")
            wire["thoughtSignature"] = signature
            issued.calls.setdefault(_key(wire["functionCall"]), set()).add(
                base64.b64decode(signature))
        out.append(wire)
    return out


def usage(body: dict[str, Any], reply: Reply, out: list[dict[str, Any]]) -> dict[str, Any]:
    prompt = tokens(body["contents"]) + tokens(body.get("tools") or [])
    thoughts = tokens(reply.thinking) if reply.thinking else 0
    written = reply.output_tokens or tokens([p for p in out if not p.get("thought")])
    return {"promptTokenCount": prompt, "candidatesTokenCount": written,
            "thoughtsTokenCount": thoughts, "cachedContentTokenCount": 0,
            "totalTokenCount": prompt + written + thoughts}


def response(body: dict[str, Any], reply: Reply, out: list[dict[str, Any]], number: int,
             model: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": out}, "index": 0,
                        "finishReason": "MAX_TOKENS" if reply.truncate else "STOP"}],
        "usageMetadata": usage(body, reply, out),
        "modelVersion": model,
        "responseId": f"gem_{number}",
    }


def chunks(final: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed chunks: text in pieces, each call whole, finish and usage on the last."""
    candidate = final["candidates"][0]
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        text = part.get("text")
        if text is None or len(text) < 8:
            pieces.append(part)
            continue
        cut = [text[i: i + 7] for i in range(0, len(text), 7)]
        for k, piece in enumerate(cut):
            extra = {key: v for key, v in part.items() if key != "text"}
            if k < len(cut) - 1:
                extra.pop("thoughtSignature", None)
            pieces.append({**extra, "text": piece})
    out = [{"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}],
            "modelVersion": final["modelVersion"], "responseId": final["responseId"]}
           for p in pieces]
    last = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0,
                            "finishReason": candidate["finishReason"]}],
            "usageMetadata": final["usageMetadata"], "modelVersion": final["modelVersion"],
            "responseId": final["responseId"]}
    return [*out, last]

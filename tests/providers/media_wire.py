"""How each fake provider checks an image, document or audio part: against the official SDK's
own request types (a TypedDict or pydantic model validated with pydantic, so a wrong field
name or a value outside a ``Literal`` fails), then the rules the services add that the types
cannot say: a data URL or base64 that decodes, a media type the service takes, a filename
for a file. Each raises the wire's own error type with a provider-like message."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
DATA_URL = re.compile(r"^data:(?P<type>[a-z]+/[a-z0-9.+-]+);base64,(?P<data>.+)$", re.S)

#: The SDK types each part is checked against (imported once, on first use).
_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _adapter(name: str) -> TypeAdapter[Any]:
    if name not in _ADAPTERS:
        if name == "openai-chat":
            from openai.types.chat import ChatCompletionContentPartParam as chat_part

            _ADAPTERS[name] = TypeAdapter(chat_part)
        elif name == "openai-responses":
            from openai.types.responses import ResponseInputContentParam as responses_part

            _ADAPTERS[name] = TypeAdapter(responses_part)
        elif name == "openai-chat-tool":
            from openai.types.chat import ChatCompletionToolMessageParam

            _ADAPTERS[name] = TypeAdapter(ChatCompletionToolMessageParam)
        elif name == "openai-responses-output":
            from openai.types.responses import ResponseFunctionCallOutputItemParam

            _ADAPTERS[name] = TypeAdapter(ResponseFunctionCallOutputItemParam)
        elif name == "anthropic-tool-result":
            from anthropic.types import ToolResultBlockParam

            _ADAPTERS[name] = TypeAdapter(ToolResultBlockParam)
        elif name == "anthropic-image":
            from anthropic.types import ImageBlockParam

            _ADAPTERS[name] = TypeAdapter(ImageBlockParam)
        elif name == "anthropic-document":
            from anthropic.types import DocumentBlockParam

            _ADAPTERS[name] = TypeAdapter(DocumentBlockParam)
    return _ADAPTERS[name]


def _typed(name: str, part: Any, where: str) -> None:
    try:
        _adapter(name).validate_python(part, strict=False)
    except ValidationError as exc:
        raise ValueError(f"{where}: not a valid {name} part: {exc.errors()[0]['msg']} "
                         f"at {exc.errors()[0]['loc']}") from exc


def _decoded(data: Any, where: str) -> bytes:
    if not isinstance(data, str) or not data:
        raise ValueError(f"{where}: base64 data must be a non-empty string")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{where}: invalid base64 data") from exc


def _data_url(url: Any, where: str, allowed: set[str]) -> bytes:
    match = DATA_URL.match(url) if isinstance(url, str) else None
    if match is None:
        raise ValueError(f"{where}: expected a base64 data URL (data:<type>;base64,...)")
    if match["type"] not in allowed:
        raise ValueError(f"{where}: unsupported media type {match['type']!r}")
    return _decoded(match["data"], where)


#: What each provider received, in order: (kind, media type, bytes), for tests to compare.
Received = list[tuple[str, str, bytes]]

#: Every media part the fake servers accepted (tests clear it first).
received: Received = []


def openai_chat_part(part: dict[str, Any], where: str, seen: Received) -> None:
    """Chat Completions ``image_url`` / ``file`` / ``input_audio`` content parts."""
    _typed("openai-chat", part, where)
    kind = part["type"]
    if kind == "image_url":
        data = _data_url(part["image_url"]["url"], f"{where}.image_url.url", IMAGE_TYPES)
        seen.append(("image", DATA_URL.match(part["image_url"]["url"])["type"], data))  # type: ignore[index]
    elif kind == "file":
        file = part["file"]
        if not file.get("filename"):
            raise ValueError(f"{where}.file.filename: required with file_data")
        seen.append(("document", "application/pdf",
                     _data_url(file.get("file_data"), f"{where}.file.file_data",
                               {"application/pdf"})))
    elif kind == "input_audio":
        audio = part["input_audio"]
        seen.append(("audio", f"audio/{audio['format']}", _decoded(audio["data"], where)))


def openai_chat_tool_message(message: dict[str, Any], where: str) -> None:
    """A Chat Completions ``tool`` message: its content is text or text parts only (the
    SDK's ``ChatCompletionToolMessageParam``); an image there is refused."""
    _typed("openai-chat-tool", message, where)
    content = message.get("content")
    if isinstance(content, list) and any(
            not isinstance(p, dict) or p.get("type") != "text" for p in content):
        raise ValueError(f"{where}.content: a tool message takes text parts only")


def responses_output(output: Any, where: str, seen: Received) -> None:
    """A ``function_call_output``'s ``output``: text, or ``input_text`` / ``input_image`` /
    ``input_file`` items (the SDK's ``ResponseFunctionCallOutputItemParam``)."""
    if isinstance(output, str):
        return
    if not isinstance(output, list) or not output:
        raise ValueError(f"{where}.output: expected a string or a non-empty list")
    for j, item in enumerate(output):
        _typed("openai-responses-output", item, f"{where}.output[{j}]")
        if item.get("type") in ("input_image", "input_file"):
            responses_part(item, f"{where}.output[{j}]", seen, typed=False)


def anthropic_tool_result(block: dict[str, Any], where: str, seen: Received) -> None:
    """A ``tool_result`` block (the SDK's ``ToolResultBlockParam``): text, ``image`` and
    ``document`` content blocks, each checked as in a user message."""
    _typed("anthropic-tool-result", block, where)
    content = block.get("content", "")
    for j, inner in enumerate(content if isinstance(content, list) else ()):
        if inner["type"] in ("image", "document"):
            anthropic_block(inner, f"{where}.content.{j}", seen)
        elif inner["type"] == "text" and not inner["text"].strip():
            raise ValueError(f"{where}.content.{j}: text content blocks must contain "
                             "non-whitespace text")
        elif inner["type"] != "text":
            raise ValueError(f"{where}.content.{j}.type: not sent by toolcycle")


def gemini_function_response(part: dict[str, Any], where: str, seen: Received) -> None:
    """A ``functionResponse`` as the REST API receives it, read by the google-genai SDK's
    own ``FunctionResponse`` model; each of its ``parts`` needs ``inlineData`` whose base64
    decodes to the bytes and a media type the API takes in a function response."""
    from google.genai import types

    response = part["functionResponse"]
    try:
        parsed = types.FunctionResponse.model_validate_json(json.dumps(response))
    except ValidationError as exc:
        raise ValueError(f"{where}: not a valid FunctionResponse: "
                         f"{exc.errors()[0]['msg']}") from exc
    for j, (inner, sent) in enumerate(zip(parsed.parts or (), response.get("parts") or (),
                                          strict=True)):
        at = f"{where}.functionResponse.parts[{j}]"
        blob = inner.inline_data
        if blob is None or not blob.mime_type or not blob.data:
            raise ValueError(f"{at}.inlineData: mimeType and data are required")
        kinds = {**{t: "image" for t in IMAGE_TYPES}, "application/pdf": "document"}
        if blob.mime_type not in kinds:
            raise ValueError(f"{at}.inlineData.mimeType: unsupported {blob.mime_type!r} in a "
                             "function response")
        # proto3 JSON parsers take a field's proto name as well as its camelCase one, and the
        # SDK writes the inner parts with the proto names (``inline_data``, ``mime_type``)
        blob_sent = sent.get("inlineData") or sent.get("inline_data") or {}
        if _proto_bytes(str(blob_sent.get("data")), at) != blob.data:
            raise ValueError(f"{at}.inlineData.data: not base64 of the bytes")
        seen.append((kinds[blob.mime_type], blob.mime_type, blob.data))


def _proto_bytes(sent: str, where: str) -> bytes:
    """proto3 JSON bytes: base64 or its URL-safe form."""
    try:
        return base64.b64decode(sent, altchars=b"-_" if "-" in sent or "_" in sent else None,
                                validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{where}.inlineData.data: invalid base64") from exc


def responses_part(part: dict[str, Any], where: str, seen: Received, typed: bool = True
                   ) -> None:
    """Responses ``input_image`` / ``input_file`` content parts."""
    if typed:
        _typed("openai-responses", part, where)
    if part["type"] == "input_image":
        url = part.get("image_url")
        seen.append(("image", DATA_URL.match(str(url))["type"] if DATA_URL.match(str(url))  # type: ignore[index]
                     else "", _data_url(url, f"{where}.image_url", IMAGE_TYPES)))
    elif part["type"] == "input_file":
        if not part.get("filename"):
            raise ValueError(f"{where}.filename: required with file_data")
        seen.append(("document", "application/pdf", _data_url(
            part.get("file_data"), f"{where}.file_data", {"application/pdf"})))


def anthropic_block(block: dict[str, Any], where: str, seen: Received) -> None:
    """Messages API ``image`` / ``document`` blocks with a base64 source."""
    kind = block["type"]
    _typed(f"anthropic-{kind}", block, where)
    source = block["source"]
    if source.get("type") != "base64":
        raise ValueError(f"{where}.source.type: only base64 sources are sent")
    allowed = IMAGE_TYPES if kind == "image" else {"application/pdf"}
    if source.get("media_type") not in allowed:
        raise ValueError(f"{where}.source.media_type: Input should be "
                         f"{' or '.join(sorted(allowed))}")
    seen.append((kind, source["media_type"], _decoded(source.get("data"), where)))


def gemini_part(part: dict[str, Any], where: str, seen: Received) -> None:
    """``inlineData`` as the REST API receives it (camelCase, base64), read by the
    google-genai SDK's own ``Part`` model."""
    from google.genai import types

    try:
        parsed = types.Part.model_validate_json(json.dumps(part))
    except ValidationError as exc:
        raise ValueError(f"{where}: not a valid Part: {exc.errors()[0]['msg']}") from exc
    blob = parsed.inline_data
    if blob is None or not blob.mime_type or not blob.data:
        raise ValueError(f"{where}.inlineData: mimeType and data are required")
    kinds = {**{t: "image" for t in IMAGE_TYPES}, "application/pdf": "document",
             "audio/wav": "audio", "audio/mpeg": "audio"}
    if blob.mime_type not in kinds:
        raise ValueError(f"{where}.inlineData.mimeType: unsupported {blob.mime_type!r}")
    if _proto_bytes(str(part["inlineData"]["data"]), where) != blob.data:
        raise ValueError(f"{where}.inlineData.data: not base64 of the bytes")
    seen.append((kinds[blob.mime_type], blob.mime_type, blob.data))

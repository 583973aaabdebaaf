"""The request rules beside the conversation's: JSON-schema response formats, and the model's
context window.

Each provider takes a structured-output format in its own field, and refuses a malformed one
with 400 (the shapes below are the providers' API references):

- OpenAI Chat Completions: ``response_format: {"type": "json_schema", "json_schema": {"name",
  "schema", "description"?, "strict"?}}`` (or ``{"type": "text" | "json_object"}``); the
  name matches ``^[a-zA-Z0-9_-]{1,64}$``.
- OpenAI Responses: ``text: {"format": {"type": "json_schema", "name", "schema",
  "description"?, "strict"?}}``.
- Anthropic Messages: ``output_config: {"format": {"type": "json_schema", "schema"}}``; every
  object of the schema must say ``additionalProperties: false``.
- Gemini: ``generationConfig.responseJsonSchema`` needs ``responseMimeType:
  "application/json"`` and excludes ``responseSchema``.

A reply scripted for a request with a format must be JSON of that schema (a real model decodes
under it and cannot answer prose). A request larger than the server's window (≈ 4 characters a
token, the body's messages as sent) is refused as the providers do: context length exceeded.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolcycle._tool_schema import compile_validator

from .openai_wire import WireError
from .script import Reply, ScriptError

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_FORMAT_KEYS = {"type", "name", "schema", "description", "strict"}


def schema_of(provider: str, body: dict[str, Any], refuse: bool = False
              ) -> dict[str, Any] | None:
    """The JSON Schema a request's reply must follow, checking its field as the API does;
    ``refuse`` answers a format as a model without structured outputs does (400)."""
    schema = _schema_of(provider, body)
    if refuse and schema is not None:
        raise WireError("This model does not support structured outputs (response format "
                        "'json_schema').", "response_format")
    return schema


def _schema_of(provider: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if provider == "openai":
        return _openai(body.get("response_format"))
    if provider == "responses":
        text = body.get("text")
        if text is None:
            return None
        if not isinstance(text, dict) or set(text) - {"format", "verbosity"}:
            raise WireError("Unknown parameter in 'text'.", "text")
        return _responses(text.get("format"))
    if provider == "anthropic":
        return _anthropic(body.get("output_config"))
    return _gemini(body.get("generationConfig") or {})


def _openai(form: Any) -> dict[str, Any] | None:
    if form is None:
        return None
    if not isinstance(form, dict) or form.get("type") not in ("text", "json_object", "json_schema"):
        raise WireError("Invalid value for 'response_format.type'.", "response_format")
    if form["type"] != "json_schema":
        return None
    spec = form.get("json_schema")
    if not isinstance(spec, dict) or set(spec) - _FORMAT_KEYS or "type" in spec:
        raise WireError("Invalid 'response_format.json_schema'.", "response_format.json_schema")
    return _named(spec, "response_format.json_schema")


def _responses(form: Any) -> dict[str, Any] | None:
    if form is None:
        return None
    if not isinstance(form, dict) or form.get("type") not in ("text", "json_object", "json_schema"):
        raise WireError("Invalid value for 'text.format.type'.", "text.format.type")
    if form["type"] != "json_schema":
        return None
    if set(form) - _FORMAT_KEYS:
        raise WireError("Unknown parameter in 'text.format'.", "text.format")
    if "schema" not in form:
        raise WireError("Missing required parameter: 'text.format.schema'.", "text.format.schema")
    return _named(form, "text.format")


def _named(spec: dict[str, Any], where: str) -> dict[str, Any]:
    name = spec.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise WireError(f"Invalid '{where}.name': string does not match pattern.", f"{where}.name")
    schema = spec.get("schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise WireError(f"Invalid schema for {where}: the root must be an object.", where)
    if "strict" in spec and not isinstance(spec["strict"], bool | None):
        raise WireError(f"Invalid type for '{where}.strict'.", f"{where}.strict")
    return schema


def _anthropic(config: Any) -> dict[str, Any] | None:
    if config is None:
        return None
    if not isinstance(config, dict) or set(config) - {"format", "effort"}:
        raise WireError("output_config: Extra inputs are not permitted")
    form = config.get("format")
    if form is None:
        return None
    if not isinstance(form, dict) or form.get("type") != "json_schema" or set(form) != {
            "type", "schema"}:
        raise WireError("output_config.format: expected {type: 'json_schema', schema}")
    schema = form["schema"]
    open_objects = list(_open_objects(schema, "schema"))
    if open_objects:
        raise WireError(f"output_config.format.{open_objects[0]}: For 'object' type, "
                        "'additionalProperties' must be explicitly set to false")
    return dict(schema)


def _open_objects(schema: Any, where: str) -> Any:
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _open_objects(item, f"{where}.{index}")
    elif isinstance(schema, dict):
        if schema.get("type") == "object" and schema.get("additionalProperties") is not False:
            yield where
        for key, value in schema.items():
            yield from _open_objects(value, f"{where}.{key}")


def _gemini(config: dict[str, Any]) -> dict[str, Any] | None:
    schema = config.get("responseJsonSchema")
    if schema is None:
        return None
    if "responseSchema" in config:
        raise WireError("responseSchema and responseJsonSchema cannot both be set.",
                        "generationConfig")
    if config.get("responseMimeType") != "application/json":
        raise WireError("responseJsonSchema needs responseMimeType 'application/json'.",
                        "generationConfig")
    if not isinstance(schema, dict):
        raise WireError("Invalid JSON payload: responseJsonSchema", "generationConfig")
    return schema


def check_reply(schema: dict[str, Any] | None, reply: Reply) -> None:
    """A reply under a format is JSON of its schema, with no calls beside it."""
    if schema is None:
        return
    if reply.calls and reply.text:
        raise ScriptError("text and calls scripted under a response format")
    if reply.calls:
        return
    try:
        value = json.loads(reply.text)
    except ValueError as exc:
        raise ScriptError(f"prose scripted under a response format: {reply.text!r}") from exc
    if not compile_validator(schema).is_valid(value):
        raise ScriptError(f"the scripted JSON does not fit the response format: {reply.text!r}")


def check_window(provider: str, body: dict[str, Any], window: int | None) -> None:
    """Refuse a request whose conversation is over ``window`` tokens (≈ 4 characters each)."""
    if window is None:
        return
    history = body.get("messages") or body.get("input") or body.get("contents") or []
    size = len(json.dumps([history, body.get("system")])) // 4
    if size > window:
        messages = {
            "openai": f"This model's maximum context length is {window} tokens. However, your "
                      f"messages resulted in {size} tokens.",
            "anthropic": f"prompt is too long: {size} tokens > {window} maximum",
            "gemini": f"The input token count ({size}) exceeds the maximum number of tokens "
                      f"allowed ({window}).",
        }
        raise WireError(messages.get(provider, messages["openai"]), "messages")

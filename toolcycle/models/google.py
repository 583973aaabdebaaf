"""Gemini adapter (``google:MODEL``) on the official ``google-genai`` SDK.

Needs ``toolcycle[google]``. Requests go through ``client.aio.models.generate_content`` (and
``generate_content_stream``); the whole history is sent each time, as with every adapter.

What the protocol demands, and where it is handled:

- **Roles are ``user`` and ``model`` only**: system messages become the
  ``system_instruction``; tool results become one ``user`` turn of ``functionResponse``
  parts, one per call, in the calls' order (see ``_gemini_parts``).
- **Thought signatures go back on the part that carried them**: kept in
  ``ThinkingPart.signature`` envelopes (see ``_gemini_parts``).
- **Function declarations** take an OpenAPI subset, not JSON Schema: parameters are
  converted by ``_gemini_schema``, which raises a :class:`~toolcycle.errors.ConfigurationError`
  naming the tool, pointer and construct it cannot express.
- **Tool choice**: ``auto``/``required``/``none`` are ``AUTO``/``ANY``/``NONE``; a tool name is
  ``ANY`` with ``allowedFunctionNames``. Gemini has no ``parallel_tool_calls`` switch.
- **Finish reasons**: ``MAX_TOKENS`` with something written is finish ``length`` (with
  nothing written, a :class:`~toolcycle.errors.ModelError`); a blocked prompt
  (``promptFeedback.blockReason``), no candidate, a candidate stopped for safety, recitation
  or a malformed call, or an empty one are ``ModelError`` s with the provider's reason.
- **Retries**: ``google.genai.errors.APIError.code`` 429 and 5xx, and connection failures,
  through :func:`classify` and :mod:`~toolcycle.models.retry` (the SDK's own retries stay off,
  and so does its automatic continuation of a stream that ends early).
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from ..errors import ConfigurationError, ModelError
from ..messages import Message, Part, TextPart, ToolCall
from ..pricing import Price
from ._gemini_parts import contents, neutral_parts, wire_usage
from ._gemini_schema import SchemaError, to_gemini
from ._responses_items import TRUNCATED
from .base import (
    ModelResponse,
    ModelSettings,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolDefinition,
)
from .retry import (
    Failure,
    RetryPolicy,
    StreamIncomplete,
    is_retryable_status,
    parse_retry_after,
    stream_with_retries,
    with_retries,
)
from .sdk_client import LoopBoundClient, SDKModel

Wire = dict[str, Any]
PROVIDER = "google"
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
_OK = frozenset({"STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED", None})
_requests = itertools.count()


@functools.cache
def _has_continuation() -> bool:
    """Whether the installed SDK has automatic stream continuation (google-genai 3.6), which
    each request turns off; asked once, when the first request is built (the SDK stays
    unimported until an adapter needs it)."""
    try:
        from google.genai import types
    except ImportError:  # a caller's own client without the SDK: nothing to turn off
        return False
    return "automatic_continuation" in types.GenerateContentConfig.model_fields


def classify(exc: BaseException) -> Failure | None:
    """``APIError`` by its HTTP ``code``; transport failures as retryable connection errors."""
    if isinstance(exc, StreamIncomplete):
        return Failure(f"connection failed: {exc}", retryable=True, error_type="connection")
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        code = int(exc.code or 0)
        return Failure(
            message=exc.message or str(exc),
            status=code,
            retry_after=parse_retry_after(headers),
            retryable=is_retryable_status(code),
            error_type=exc.status,
        )
    # The SDK's transport (``httpx2``, or ``httpx`` in older releases), loaded by now.
    for name in ("httpx2", "httpx"):
        transport = sys.modules.get(name)
        if transport is None:
            continue
        if isinstance(exc, transport.TimeoutException):
            return Failure(f"timed out: {exc}", retryable=True, error_type="timeout")
        if isinstance(exc, transport.TransportError):
            return Failure(f"connection failed: {exc}", retryable=True, error_type="connection")
    return None


class _Aio:
    """The SDK's async client with the ``close`` that ``LoopBoundClient`` calls."""

    def __init__(self, aio: Any) -> None:
        self.models = aio.models
        self._aio = aio

    async def close(self) -> None:
        await self._aio.aclose()


class GeminiModel(SDKModel):
    """A Gemini model behind ``client.aio.models.generate_content``.

    ``thinking`` is sent as the request's ``thinking_config`` (e.g. ``{"include_thoughts":
    True, "thinking_budget": 1024}``). ``base_url`` points the SDK elsewhere (a gateway, or
    the test server).
    """

    system = "gcp.gemini"

    def __init__(
        self,
        model_name: str,
        *,
        client: Any | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 300.0,
        retry: RetryPolicy | None = None,
        thinking: dict[str, Any] | None = None,
        price: Price | None = None,
    ) -> None:
        self.name = model_name
        self.price = price
        self.provider = PROVIDER
        self.retry = retry if retry is not None else RetryPolicy()
        self.thinking = thinking
        if client is not None:
            self._client = LoopBoundClient(None, client)
        else:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(
                base_url=base_url, api_version="v1beta", timeout=int(timeout * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            )

            def factory() -> Any:
                return _Aio(genai.Client(api_key=api_key, http_options=options).aio)

            self._client = LoopBoundClient(factory)
        self._tools_key: tuple[ToolDefinition, ...] | None = None
        self._tools_wire: list[Wire] = []

    # ----------------------------------------------------------------- requests

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        kwargs = self.build_request(messages, settings)

        async def send() -> Any:
            return await self.client.models.generate_content(**kwargs)

        response = await with_retries(
            send, self.retry, provider=PROVIDER, model=self.name, classify=classify
        )
        return self.finish(response, list(_parts_of(response)))

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        kwargs = self.build_request(messages, settings)
        chunks: list[Any] = []
        parts: list[Any] = []

        async def events() -> AsyncIterator[Any]:
            chunks.clear()  # a retry starts over (retries happen only before any output)
            parts.clear()
            stream = await self.client.models.generate_content_stream(**kwargs)
            async for chunk in stream:
                yield chunk

        stream = stream_with_retries(
            events, self.retry, provider=PROVIDER, model=self.name, classify=classify
        )
        calls = 0
        async with aclosing(stream):
            async for chunk in stream:
                chunks.append(chunk)
                for part in _parts_of(chunk):
                    parts.append(part)
                    call = getattr(part, "function_call", None)
                    if call is not None:
                        yield ToolCallDelta(calls, call.id, call.name, _args(call))
                        calls += 1
                    elif part.text:
                        yield ThinkingDelta(part.text) if part.thought else TextDelta(part.text)
        if not chunks:
            raise ModelError("google stream ended with no response", provider=PROVIDER,
                             model=self.name, error_type="empty_stream")
        yield ModelResponse(self.finish(_Merged(chunks), _merge_text(parts)))

    def finish(self, response: Any, raw_parts: list[Any]) -> Message:
        """The neutral message of a response; raises for blocked or empty ones."""
        def error(text: str, kind: str | None) -> ModelError:
            return ModelError(f"google: {text}", provider=PROVIDER, model=self.name,
                              provider_message=text, error_type=kind)

        feedback = getattr(response, "prompt_feedback", None)
        block = getattr(feedback, "block_reason", None)
        if block:
            name = getattr(block, "value", str(block))
            raise error(f"the prompt was blocked ({name})", name)
        candidates = getattr(response, "candidates", None) or []
        if not candidates:
            raise error("the response has no candidate", "no_candidate")
        reason = candidates[0].finish_reason
        reason_name = getattr(reason, "value", reason)
        if reason_name not in _OK:
            message = candidates[0].finish_message or ""
            raise error(f"the candidate stopped with {reason_name} {message}".rstrip(),
                        str(reason_name))
        usage = wire_usage(getattr(response, "usage_metadata", None))
        parts: list[Part] = neutral_parts(raw_parts, f"{next(_requests)}")
        written = any(isinstance(p, ToolCall) or (isinstance(p, TextPart) and p.text)
                      for p in parts)
        if not written:
            if reason_name == "MAX_TOKENS":
                raise error("the response hit max_output_tokens before any answer or tool "
                            f"call was written ({usage.output_tokens} output tokens)",
                            "MAX_TOKENS")
            raise error("the candidate is empty (no text and no function call)", "empty")
        calls = [p for p in parts if isinstance(p, ToolCall)]
        if calls and reason_name == "MAX_TOKENS":  # the last call may be cut short
            calls[-1].arguments, calls[-1].parse_error = None, TRUNCATED
        finish = "length" if reason_name == "MAX_TOKENS" else "tool_calls" if calls else "stop"
        return Message("assistant", parts, usage=usage, finish_reason=finish,
                       model_name=self.name)

    # ------------------------------------------------------------ wire building

    def build_request(self, messages: Sequence[Message], settings: ModelSettings) -> Wire:
        """The keyword arguments of ``generate_content`` for this conversation."""
        system: list[str] = []
        turns: list[Wire] = []
        for message in messages:
            text, content = contents(message)
            if text:
                system.append(text)
            if content is not None:
                turns.append(content)
        config: Wire = {}
        if system:
            config["system_instruction"] = "\n\n".join(system)
        if settings.tools:
            config["tools"] = [{"function_declarations": self.tools_wire(settings.tools)}]
            choice = settings.tool_choice
            calling: Wire = {"mode": _MODES.get(choice, "ANY")}
            if choice not in _MODES:
                calling["allowed_function_names"] = [choice]
            config["tool_config"] = {"function_calling_config": calling}
        if settings.temperature is not None:
            config["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            config["max_output_tokens"] = settings.max_tokens
        if settings.seed is not None:
            config["seed"] = settings.seed
        if self.thinking is not None:
            config["thinking_config"] = dict(self.thinking)
        if settings.response_format is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = settings.response_format.schema
        if _has_continuation():
            # google-genai 3.6 resumes a stream that ends early with another request of its
            # own, behind the loop's retries, usage and cancellation: a run cancelled
            # mid-stream sent a second request (found by a provider test under load)
            config["automatic_continuation"] = False
        config.update(settings.extra)
        return {"model": self.name, "contents": turns, "config": config}

    def tools_wire(self, tools: tuple[ToolDefinition, ...]) -> list[Wire]:
        if tools is not self._tools_key:
            problems: list[str] = []
            declarations: list[Wire] = []
            for tool in tools:
                declaration: Wire = {"name": tool.name, "description": tool.description}
                if tool.parameters.get("properties"):
                    try:
                        declaration["parameters"] = to_gemini(tool.name, tool.parameters)
                    except SchemaError as exc:
                        problems.append(str(exc))
                declarations.append(declaration)
            if problems:
                raise ConfigurationError(problems)
            self._tools_wire, self._tools_key = declarations, tools
        return self._tools_wire


def _parts_of(response: Any) -> list[Any]:
    candidates = getattr(response, "candidates", None) or []
    content = candidates[0].content if candidates else None
    return list(getattr(content, "parts", None) or [])


def _args(call: Any) -> str:
    import json

    return json.dumps(call.args or {})


def _merge_text(parts: list[Any]) -> list[Any]:
    """Streamed text arrives in pieces; adjacent pieces of the same kind become one part
    (a signature, usually on the last piece, stays on the merged part)."""
    from google.genai import types

    merged: list[Any] = []
    for part in parts:
        last = merged[-1] if merged else None
        if (last is not None and part.function_call is None and last.function_call is None
                and part.text is not None and last.text is not None
                and bool(part.thought) == bool(last.thought)
                and not (last.thought_signature and part.thought_signature)):
            merged[-1] = types.Part(
                text=last.text + part.text, thought=last.thought,
                thought_signature=last.thought_signature or part.thought_signature,
            )
        else:
            merged.append(part)
    return merged


class _Merged:
    """The streamed chunks read as one response: the last chunk's finish, feedback, usage."""

    def __init__(self, chunks: list[Any]) -> None:
        self.prompt_feedback = next(
            (c.prompt_feedback for c in chunks if getattr(c, "prompt_feedback", None)), None
        )
        self.candidates = next(
            (c.candidates for c in reversed(chunks) if c.candidates
             and c.candidates[0].finish_reason), None
        ) or next((c.candidates for c in reversed(chunks) if c.candidates), None)
        self.usage_metadata = next(
            (c.usage_metadata for c in reversed(chunks) if c.usage_metadata), None
        )


def model_from_string(text: str) -> GeminiModel:
    """``"google:gemini-2.5-flash"`` (key from ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, as the
    SDK reads them), or ``"google:<model>@<base url>"`` for a gateway or a local test server."""
    import os

    name, sep, url = text.partition("@")
    key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    return GeminiModel(name, base_url=url if sep else None,
                       api_key=key if key or not sep else "not-needed")

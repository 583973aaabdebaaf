"""OpenAI Responses API adapter (``openai-responses:MODEL``) on the official ``openai`` SDK.

The Responses API is the one OpenAI recommends for reasoning models: a request's ``input`` is
a list of items (messages, ``function_call``, ``function_call_output``, ``reasoning``) and a
response's ``output`` is a list of the same kinds. Needs only ``toolcycle[openai]``.

What the protocol demands, and where it is handled:

- **Stateless by default**: ``store=False`` and ``include=["reasoning.encrypted_content"]``,
  so nothing is kept on OpenAI's side and ``previous_response_id`` is never needed; the loop
  sends the whole history each time, as with every other adapter.
- **Reasoning items go back unchanged**, ``encrypted_content`` included, each before the item
  that followed it (which keeps its item id): the API refuses a ``function_call`` without its
  reasoning item and a reasoning item without its following item. See ``_responses_items``.
- **``call_id`` vs item ``id``**: a ``function_call`` item has both; the neutral
  :class:`~toolcycle.messages.ToolCall` id is the ``call_id`` (what ``function_call_output``
  answers); the item id travels only with the reasoning item it belongs to.
- **Function tools** are sent with ``strict`` explicit (the API's default is strict), from
  :attr:`~toolcycle.tools.ToolDefinition.strict`.
- **``status: incomplete``**: ``max_output_tokens`` while a call was being written gives that
  call a ``parse_error`` (the loop answers it instead of running it); an incomplete response
  with nothing written, or cut by the content filter, and ``status: failed`` or a stream
  ``error`` event are :class:`~toolcycle.errors.ModelError` s with the provider's words.
- ``ModelSettings.seed`` has no Responses parameter and is not sent.

Conversions are cached per message object and per tool tuple, as in the other adapters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from ..messages import Message
from ..pricing import Price
from ._openai_endpoint import key_for, openai_client, split_url
from ._responses_items import ItemAssembly, input_items
from .base import ModelResponse, ModelSettings, StreamItem, ToolDefinition
from .openai import _raw
from .retry import (
    Failure,
    RetryPolicy,
    StreamIncomplete,
    failure_from_sdk_error,
    stream_with_retries,
    with_retries,
)
from .sdk_client import SDKModel
from .wire_cache import MessageCache

Wire = dict[str, Any]
PROVIDER = "openai-responses"
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
#: Codes of stream ``error`` events that say "try again" rather than "your request is wrong".
RETRYABLE_CODES = frozenset({"server_error", "rate_limit_exceeded"})


class StreamError(Exception):
    """An ``error`` event in a response stream (the HTTP status was already 200)."""

    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def classify(exc: BaseException) -> Failure | None:
    """The SDK's errors as :mod:`~toolcycle.models.retry` sees them, plus stream errors: an
    ``error`` event the stream yields, or the ``APIError`` the SDK raises itself for one
    whose body nests an ``error`` object. Retried only while nothing has streamed yet."""
    failure = failure_from_sdk_error(exc)
    if failure is not None:
        return failure
    if not isinstance(exc, StreamError):
        import openai  # loaded: the exception came from it

        if not isinstance(exc, openai.APIError):
            return None
        body = exc.body if isinstance(exc.body, dict) else {}
        exc = StreamError(exc.message, body.get("code"))
    return Failure(
        f"stream error: {exc.message}", None, None, exc.code in RETRYABLE_CODES, exc.code
    )


class OpenAIResponsesModel(SDKModel):
    """A model behind ``client.responses.create``.

    ``reasoning`` is sent as the request's ``reasoning`` object (e.g. ``{"effort": "low",
    "summary": "auto"}``). ``encrypted_reasoning=False`` leaves ``reasoning.encrypted_content``
    out of ``include``, for models or gateways that refuse it (reasoning then cannot be sent
    back statelessly). ``store=True`` lets OpenAI keep responses; the history still goes in
    full.
    """

    system = "openai"

    def __init__(
        self,
        model_name: str,
        *,
        client: Any | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 300.0,
        retry: RetryPolicy | None = None,
        reasoning: dict[str, Any] | None = None,
        encrypted_reasoning: bool = True,
        store: bool = False,
        price: Price | None = None,
    ) -> None:
        self.name = model_name
        self.price = price
        self.provider = PROVIDER
        self.retry = retry if retry is not None else RetryPolicy()
        self.reasoning = reasoning
        self.encrypted_reasoning = encrypted_reasoning
        self.store = store
        self._client = openai_client(client, api_key, base_url, timeout)
        self._messages = MessageCache()
        self._tools_key: tuple[ToolDefinition, ...] | None = None
        self._tools_wire: list[Wire] = []

    # ----------------------------------------------------------------- requests

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        kwargs = self.build_request(messages, settings)

        async def send() -> Any:
            return await self.client.responses.create(**kwargs)

        response = await with_retries(send, self.retry, provider=PROVIDER, model=self.name)
        return ItemAssembly().finish(response, self.name)

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        kwargs = self.build_request(messages, settings)
        assembly = ItemAssembly()

        async def events() -> AsyncIterator[Any]:
            assembly.reset()
            response = await self.client.responses.create(**kwargs, stream=True)
            async with response:
                async for event in response:
                    if event.type == "error":
                        raise StreamError(event.message, getattr(event, "code", None))
                    yield event
                    if event.type in _TERMINAL:
                        return
            raise StreamIncomplete("the stream ended before response.completed")

        stream = stream_with_retries(
            events, self.retry, provider=PROVIDER, model=self.name, classify=classify
        )
        async with aclosing(stream):
            async for event in stream:
                for item in assembly.add_event(event):
                    yield item
        yield ModelResponse(assembly.finish(assembly.final, self.name))

    # ------------------------------------------------------------ wire building

    def build_request(self, messages: Sequence[Message], settings: ModelSettings) -> Wire:
        """The keyword arguments of ``responses.create`` for this conversation."""
        # ``input`` and ``tools`` (plain JSON already) go in ``extra_body``: the SDK walks
        # typed parameters against the Responses type unions before sending, which costs
        # ~0.1 s of CPU per request with twenty tools and a long history, for no change to
        # dictionaries like ours; ``extra_body`` is merged into the JSON body as it is.
        body: Wire = {"input": self.wire_input(messages)}
        kwargs: Wire = {"model": self.name, "store": self.store, "extra_body": body}
        if self.encrypted_reasoning:
            kwargs["include"] = ["reasoning.encrypted_content"]
        if self.reasoning is not None:
            kwargs["reasoning"] = dict(self.reasoning)
        if settings.tools:
            body["tools"] = self.tools_wire(settings.tools)
            choice = settings.tool_choice
            kwargs["tool_choice"] = (
                choice
                if choice in ("auto", "required", "none")
                else {"type": "function", "name": choice}
            )
            if settings.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = settings.parallel_tool_calls
        if settings.temperature is not None:
            kwargs["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            kwargs["max_output_tokens"] = settings.max_tokens
        if settings.response_format is not None:
            form = settings.response_format
            kwargs["text"] = {"format": {"type": "json_schema", "name": form.name,
                                         "schema": form.schema}}
        if settings.extra:
            body.update(settings.extra)
        return kwargs

    def tools_wire(self, tools: tuple[ToolDefinition, ...]) -> list[Wire]:
        if tools is not self._tools_key:
            self._tools_wire = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": bool(t.strict),
                }
                for t in tools
            ]
            self._tools_key = tools
        return self._tools_wire

    def wire_input(self, messages: Sequence[Message]) -> list[Wire]:
        out: list[Wire] = []
        for message in messages:
            wire = self._messages.get(message)
            if wire is None:
                wire = input_items(message, _raw)
                self._messages.put(message, wire)
            out.extend(wire)
        self._messages.prune(messages)
        return out




def model_from_string(text: str) -> OpenAIResponsesModel:
    """``"openai-responses:gpt-5.4-mini"`` (key from ``OPENAI_API_KEY``), or
    ``"openai-responses:<model>@<base url>"`` for a gateway or a local test server."""
    name, url = split_url(text)
    return OpenAIResponsesModel(name, base_url=url, api_key=key_for(url))

"""OpenAI Chat Completions adapters: native ``tools`` mode and legacy ``functions`` mode.

Both speak through the official ``openai`` SDK (extra ``toolcycle[openai]``), so any server
that implements Chat Completions works by pointing ``base_url`` at it (llama.cpp server, vLLM,
Ollama): ``"openai-compatible:<model>@http://127.0.0.1:8080/v1"``.

The neutral history is converted at the edge only. Conversions are cached per message object
(and the tool list per ``ModelSettings.tools`` identity), so iteration ``n`` of a long run
converts one or two new messages instead of its whole history.

Wire differences handled here:

- tools mode: one ``tool`` message per result, in call order, each with ``tool_call_id``.
  Some compatible servers reject ``null`` content on an assistant message that carries tool
  calls; ``tool_call_content=""`` sends an empty string instead.
- functions mode (``functions`` / ``function_call`` / ``role: "function"``): the API knows no
  call ids and returns one call per response, so ids are synthesized to keep the neutral
  history well formed; a neutral turn with several calls (from another provider's history) is
  sent as alternating assistant/function pairs.
- ``finish_reason: "length"`` while the last call was being written: its arguments are cut
  off (even when what arrived happens to parse, or is empty), so that call gets a
  ``parse_error`` and the loop answers it with an error observation instead of running it.

Reading a model string (``<model>@<url>``, an ``openai-compatible:`` string's options), the key
and the SDK client are shared with the Responses adapter: :mod:`._openai_endpoint`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from ..errors import ModelError
from ..messages import Message, ToolCall, Usage, bounded_repr
from ..pricing import Price
from ._media_wire import has_media, openai_chat_content, openai_chat_tool_media
from ._openai_endpoint import CompatibleTarget, key_for, split_url
from ._openai_endpoint import openai_client as openai_client  # public here, as before
from ._openai_stream import ResponseAssembly, wire_usage
from .base import (
    Model,
    ModelResponse,
    ModelSettings,
    OutputMode,
    StreamItem,
    ToolDefinition,
)
from .local.control import ControlText
from .retry import RetryPolicy, StreamIncomplete, stream_with_retries, with_retries
from .sdk_client import SDKModel
from .wire_cache import MessageCache

Wire = dict[str, Any]

#: Model name prefixes whose structured output goes better without the output tool.
TOOL_SHY_MODELS = ("glm", "minimax")

#: llama-cpp-python's chatml-function-calling syntax for a call, at the start of a reply.
_CALL_AS_TEXT = re.compile(r"\s*functions\.([A-Za-z0-9_.\-]+):")


class OpenAIModel(SDKModel):
    """Chat Completions with native ``tools`` (parallel calls, ``tool_choice``, usage).

    ``client`` may be passed ready-made; otherwise one is built from ``api_key`` / ``base_url``
    (falling back to the SDK's environment variables) with the SDK's own retries switched off,
    because :mod:`toolcycle.models.retry` retries with a policy the caller controls.
    """

    system = "openai"

    def __init__(
        self,
        model_name: str,
        *,
        client: Any | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        tool_call_content: str | None = None,
        max_tokens_field: str = "max_completion_tokens",
        stream_usage: bool = True,
        provider: str = "openai",
        price: Price | None = None,
        control_text: ControlText | None = None,
    ) -> None:
        self.name = model_name
        #: A served GGUF model's control tokens, kept out of what is sent (:mod:`.local.control`).
        self.control_text = control_text
        self.price = price
        self.provider = provider
        self.retry = retry if retry is not None else RetryPolicy()
        self.tool_call_content = tool_call_content
        self.max_tokens_field = max_tokens_field
        self.stream_usage = stream_usage
        self._client = openai_client(client, api_key, base_url, timeout)
        self._messages = MessageCache()
        self._tools_key: tuple[ToolDefinition, ...] | None = None
        self._tools_wire: list[Wire] = []

    # ----------------------------------------------------------------- requests

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        kwargs = self.build_request(messages, settings)

        async def send() -> Any:
            return await self.client.chat.completions.create(**kwargs)

        completion = await with_retries(send, self.retry, provider=self.provider, model=self.name)
        if not completion.choices:
            raise ModelError("the response has no choices", provider=self.provider)
        choice = completion.choices[0]
        assembly = ResponseAssembly(self.synthesize_ids)
        assembly.add_message(choice.message)
        message = assembly.finish(choice.finish_reason, wire_usage(completion.usage), self.name)
        self._refuse_call_written_as_text(message, settings)
        return message

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        kwargs = self.build_request(messages, settings)
        kwargs["stream"] = True
        if self.stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        assembly = ResponseAssembly(self.synthesize_ids)

        async def chunks() -> AsyncIterator[Any]:
            assembly.reset()
            response = await self.client.chat.completions.create(**kwargs)
            finished = False
            async with response:
                async for chunk in response:
                    finished = finished or any(c.finish_reason for c in chunk.choices)
                    yield chunk
            if not finished:
                raise StreamIncomplete("the stream ended before a finish_reason")

        finish_reason: str | None = None
        usage = Usage(requests=1)
        stream = stream_with_retries(chunks, self.retry, provider=self.provider, model=self.name)
        async with aclosing(stream):
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = wire_usage(chunk.usage)
                for choice in chunk.choices[:1]:
                    for item in assembly.add_delta(choice.delta):
                        yield item
                    finish_reason = choice.finish_reason or finish_reason
        message = assembly.finish(finish_reason, usage, self.name)
        self._refuse_call_written_as_text(message, settings)
        yield ModelResponse(message)

    def _refuse_call_written_as_text(self, message: Message, settings: ModelSettings) -> None:
        """A compatible server that hands back a call to an offered tool as the reply's text.

        Measured with ``llama_cpp.server --chat_format chatml-function-calling`` and Qwen 0.5B:
        the model writes the format's own ``functions.sayHello:`` prefix and the server returns
        it as text, no ``tool_calls``. Taken as the answer, the run would end "successfully"
        with ``functions.sayHello:`` as its output and no tool run; the text protocol is what
        works with such a server, so the error says how to ask for it.
        """
        if self.provider != "openai-compatible" or not settings.tools or message.tool_calls:
            return
        found = _CALL_AS_TEXT.match(message.text)
        if found is None or found.group(1) not in {t.name for t in settings.tools}:
            return
        raise ModelError(
            f"the server returned a call to {found.group(1)!r} as text "
            f"({bounded_repr(message.text[:80])}), not as a tool call: its chat format gives "
            "this model no native tool calls. Put the model behind the text protocol: add "
            "'?tools=text' to the model string ('&constrained=true' for structured output)",
            provider=self.provider, model=self.name,
        )

    def output_modes(self) -> tuple[OutputMode, ...]:
        """Models known to fail the output tool (pydantic-ai#1192: GLM and MiniMax answer
        "Hello" with no call) get the provider's response format first."""
        if self.name.lower().rsplit("/", 1)[-1].startswith(TOOL_SHY_MODELS):
            return ("native", "prompted", "tool")
        return super().output_modes()

    # ------------------------------------------------------------ wire building

    #: Legacy functions mode has no call ids, so the assembly makes them up.
    synthesize_ids = False

    def build_request(self, messages: Sequence[Message], settings: ModelSettings) -> Wire:
        """The keyword arguments of ``chat.completions.create`` for this conversation."""
        kwargs: Wire = {"model": self.name, "messages": self.wire_messages(messages)}
        if settings.tools:
            self.add_tools(kwargs, settings)
        if settings.temperature is not None:
            kwargs["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            kwargs[self.max_tokens_field] = settings.max_tokens
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        if settings.response_format is not None:
            form = settings.response_format
            kwargs["response_format"] = {
                "type": "json_schema", "json_schema": {"name": form.name, "schema": form.schema}}
        if settings.extra:
            kwargs["extra_body"] = dict(settings.extra)
        if self.control_text is not None:
            for key in ("messages", "tools"):
                if key in kwargs:
                    kwargs[key] = self.control_text.neutralise_json(kwargs[key])
        return kwargs

    def add_tools(self, kwargs: Wire, settings: ModelSettings) -> None:
        kwargs["tools"] = self.tools_wire(settings.tools)
        choice = settings.tool_choice
        if choice in ("auto", "required", "none"):
            kwargs["tool_choice"] = choice
        else:
            kwargs["tool_choice"] = {"type": "function", "function": {"name": choice}}
        if settings.parallel_tool_calls is not None:
            kwargs["parallel_tool_calls"] = settings.parallel_tool_calls

    def tools_wire(self, tools: tuple[ToolDefinition, ...]) -> list[Wire]:
        if tools is not self._tools_key:
            self._tools_wire = [self.tool_wire(t) for t in tools]
            self._tools_key = tools
        return self._tools_wire

    def tool_wire(self, tool: ToolDefinition) -> Wire:
        function: Wire = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
        if tool.strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def wire_messages(self, messages: Sequence[Message]) -> list[Wire]:
        out: list[Wire] = []
        for message in messages:
            wire = self._messages.get(message)
            if wire is None:
                wire = self.convert(message)
                self._messages.put(message, wire)
            out.extend(wire)
        self._messages.prune(messages)
        return out

    def convert(self, message: Message) -> list[Wire]:
        """One neutral message as one or more wire messages (tool results split per id)."""
        if message.role == "tool":
            return [
                {"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                for r in message.results
            ] + openai_chat_tool_media(message)
        if message.role == "user" and has_media(message):
            return [{"role": "user", "content": openai_chat_content(message)}]
        if message.role != "assistant":
            return [{"role": message.role, "content": message.text}]
        calls = message.tool_calls
        wire: Wire = {"role": "assistant", "content": message.text or None}
        if calls:
            if wire["content"] is None:
                wire["content"] = self.tool_call_content
            wire["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _raw(c)},
                }
                for c in calls
            ]
        elif wire["content"] is None:
            wire["content"] = ""
        return [wire]


class OpenAIFunctionsModel(OpenAIModel):
    """Chat Completions in legacy ``functions`` mode, for servers that predate ``tools``.

    ``tool_choice="required"`` has no legacy equivalent: with exactly one function it becomes
    a forced call of that function, otherwise ``"auto"``. ``parallel_tool_calls`` is ignored
    (the protocol returns one call per response).
    """

    synthesize_ids = True

    def output_modes(self) -> tuple[OutputMode, ...]:
        """A server that predates ``tools`` predates ``response_format`` too."""
        return ("tool", "prompted")

    def add_tools(self, kwargs: Wire, settings: ModelSettings) -> None:
        kwargs["functions"] = self.tools_wire(settings.tools)
        choice = settings.tool_choice
        if choice == "required":
            tools = settings.tools
            choice = tools[0].name if len(tools) == 1 else "auto"
        kwargs["function_call"] = choice if choice in ("auto", "none") else {"name": choice}

    def tool_wire(self, tool: ToolDefinition) -> Wire:
        return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}

    def wire_messages(self, messages: Sequence[Message]) -> list[Wire]:
        out = super().wire_messages(messages)
        if not any(m.get("_pair") for m in out):
            return out
        return _interleave(out)

    def convert(self, message: Message) -> list[Wire]:
        if message.role == "tool":
            results = message.results
            return [
                {"role": "function", "name": r.name, "content": r.content}
                | ({"_pair": True} if len(results) > 1 else {})
                for r in results
            ] + openai_chat_tool_media(message)
        calls = message.tool_calls
        if message.role != "assistant" or not calls:
            return super().convert(message)
        text = message.text or self.tool_call_content
        wires: list[Wire] = []
        for index, call in enumerate(calls):
            wire: Wire = {
                "role": "assistant",
                "content": text if index == 0 else self.tool_call_content,
                "function_call": {"name": call.name, "arguments": _raw(call)},
            }
            if len(calls) > 1:
                wire["_pair"] = True
            wires.append(wire)
        return wires


def _interleave(messages: list[Wire]) -> list[Wire]:
    """Turn ``a1 a2 f1 f2`` (several calls of one neutral turn) into ``a1 f1 a2 f2``."""
    out: list[Wire] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if not message.get("_pair") or message["role"] != "assistant":
            out.append({k: v for k, v in message.items() if k != "_pair"})
            index += 1
            continue
        calls = []
        while (
            index < len(messages)
            and messages[index].get("_pair")
            and (messages[index]["role"] == "assistant")
        ):
            calls.append(messages[index])
            index += 1
        results = []
        while (
            index < len(messages)
            and messages[index].get("_pair")
            and (messages[index]["role"] == "function")
        ):
            results.append(messages[index])
            index += 1
        for call, result in zip(calls, results, strict=False):
            out.append({k: v for k, v in call.items() if k != "_pair"})
            out.append({k: v for k, v in result.items() if k != "_pair"})
        out.extend({k: v for k, v in c.items() if k != "_pair"} for c in calls[len(results) :])
    return out


def _raw(call: ToolCall) -> str:
    """The arguments string to send back. Arguments that did not parse go back as ``{}``:
    compatible servers (llama.cpp, vLLM) parse this field and fail on broken JSON, and the
    error observation answering the call already tells the model what was wrong."""
    if call.arguments is None:
        return "{}"
    if call.raw_arguments:
        return call.raw_arguments
    return ToolCall.from_args(call.id, call.name, call.arguments).raw_arguments


def model_from_string(text: str) -> OpenAIModel:
    """``"openai:gpt-5.4-mini"`` (key from ``OPENAI_API_KEY``), or ``"openai:<model>@<url>"``."""
    name, url = split_url(text)
    return OpenAIModel(name, base_url=url, api_key=key_for(url))


def functions_model_from_string(text: str) -> OpenAIFunctionsModel:
    """``"openai-functions:<model>"`` or ``"openai-functions:<model>@<base url>"``."""
    name, url = split_url(text)
    return OpenAIFunctionsModel(name, base_url=url, api_key=key_for(url))


def compatible_model_from_string(text: str) -> Model:
    """``"openai-compatible:<model>@http://127.0.0.1:8080/v1"``: any Chat Completions server.

    Local servers need no key, so a placeholder is used when ``OPENAI_API_KEY`` is unset;
    tool-call messages carry ``""`` content and ``max_tokens`` is sent under its classic name,
    which is what llama.cpp, vLLM and Ollama accept.

    ``?tools=text`` (or ``json``; ``react``) after the URL puts the model behind a text tool
    protocol, for servers whose chat format has no native tool calls (``llama_cpp.server``
    with plain chatml returns a call as text, which native tool calling would take for the
    answer); ``&constrained=true`` (or ``lazy``: calls only) adds grammar-constrained replies
    through ``response_format``. ``?tools=native`` is the default. ``&control_tokens=<pack or
    .gguf path>`` reads the served model's vocabulary and keeps its control tokens' text out
    of what is sent (:mod:`.local.control`). Other query parameters stay in the URL.
    """
    target = CompatibleTarget.parse(text)
    model = OpenAIModel(
        target.name,
        base_url=target.url,
        api_key=key_for(target.url),
        tool_call_content="",
        max_tokens_field="max_tokens",
        provider="openai-compatible",
        control_text=target.control_text(),
    )
    if target.tools == "native":
        return model
    if target.tools == "react":
        from .text.react import ReActModel

        return ReActModel(model)
    from .text.constrained import constrained_option
    from .text.protocol import JsonToolsModel

    return JsonToolsModel(model, constrained=constrained_option(
        target.constrained, "openai-compatible model string") or False)


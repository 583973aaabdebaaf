"""Requests an MCP server sends its client: elicitation (ask the user) and sampling (ask a model).

Both are opt-in. A server learns at the handshake which the client offers, and
server-everything, like many servers, registers the tools that need them only when offered.

- **Elicitation** (``MCPTools.stdio(..., on_elicit=answer)``): the server asks for input (a
  form described by a JSON Schema, or a URL to open). ``answer`` receives an
  :class:`ElicitationRequest` and returns an :class:`ElicitationAnswer` (accept with content,
  decline, cancel), directly or as an awaitable. Accepted content is checked against the
  requested schema before it is sent: a wrong answer is the caller's bug, said to the server
  as an error, never sent as if the user gave it. A callback that raises is an error reply too;
  the tool call that waited on it fails on the server's side, not the run.
- **Sampling** (``sampling=Sampling(...)``): the server asks for a completion. It is served by
  the model of the run whose tool call the server is answering (or a fixed model), its tokens
  are added to that run's usage (so the run's token limits see them), and it is bounded: at
  most ``max_requests`` per run, each capped at ``max_tokens`` output tokens whatever the
  server asks. With calls of several runs in flight on one server the request cannot be told
  apart (the protocol does not say which call it serves): it is refused unless a fixed model
  was given, whose usage then belongs to no run.
"""

from __future__ import annotations

import base64
import binascii
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigurationError
from ..media import MediaPart
from ..messages import Message, Part, TextPart

if TYPE_CHECKING:
    import mcp.types as mcp_types

    from ..context import RunContext, RunModel
    from ..models.base import Model

#: JSON-RPC error codes sent back to the server.
_INVALID_PARAMS = -32602
_INTERNAL_ERROR = -32603
_REFUSED = -1  # the spec's "user rejected" code for sampling


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """What a server asks the user for. ``mode="form"``: ``schema`` is the JSON Schema of the
    answer's content (an object of flat fields). ``mode="url"``: ``url`` is a page to open (the
    answer carries no content)."""

    server: str
    message: str
    mode: Literal["form", "url"]
    schema: dict[str, Any] | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """The user's answer: ``accept`` (with ``content`` for a form), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None

    @classmethod
    def accept(cls, content: dict[str, Any] | None = None) -> ElicitationAnswer:
        return cls("accept", content)

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        return cls("decline")

    @classmethod
    def cancel(cls) -> ElicitationAnswer:
        return cls("cancel")


OnElicit = Callable[[ElicitationRequest], "ElicitationAnswer | Awaitable[ElicitationAnswer]"]


@dataclass(frozen=True, slots=True)
class Sampling:
    """How a server's sampling requests are served (see the module docstring).

    ``model``: ``None`` for the model of the run whose tool call is in flight, or a model (or
    model string) that serves every request. ``max_requests``: per run (per server connection
    for requests no run is waiting on). ``max_tokens``: the most output tokens one request gets.
    """

    model: Model | str | None = None
    max_requests: int = 10
    max_tokens: int = 1024
    _resolved: list[Model] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        from ..models.base import Model

        problems = []
        for label, value in (("max_requests", self.max_requests),
                             ("max_tokens", self.max_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{label} must be an integer >= 1, got {value!r}")
        if self.model is not None and not isinstance(self.model, Model | str):
            problems.append(f"model must be a Model, a model string or None, got "
                            f"{type(self.model).__name__}")
        if problems:
            raise ConfigurationError(problems, subject="MCP sampling")

    def fixed_model(self) -> Model | None:
        """The fixed model, resolved once (a model string builds its adapter here)."""
        if self.model is None:
            return None
        if not self._resolved:
            from ..models import resolve_model

            self._resolved.append(resolve_model(self.model))
        return self._resolved[0]


class InFlight:
    """The run contexts of the tool calls now waiting on one server: whom a sampling request
    serves. A call registers its context for as long as it waits."""

    def __init__(self) -> None:
        self._calls: dict[int, RunContext[Any]] = {}
        #: Sampling requests served per run id ("" for requests no run was waiting on).
        self.served: dict[str, int] = {}

    def enter(self, ctx: RunContext[Any] | None) -> int:
        key = id(object())
        if ctx is not None:
            self._calls[key] = ctx
        return key

    def leave(self, key: int) -> None:
        self._calls.pop(key, None)

    def runs(self) -> list[RunContext[Any]]:
        """One context per distinct run waiting now."""
        seen: dict[str, RunContext[Any]] = {}
        for ctx in self._calls.values():
            seen.setdefault(ctx.run_id, ctx)
        return list(seen.values())


def elicitation_callback(describe: str, answer: OnElicit) -> Any:
    """The SDK's ``elicitation_callback`` for ``answer`` (see the module docstring)."""
    import mcp.types as types

    async def callback(context: Any, params: Any) -> Any:
        url = getattr(params, "url", None)
        request = ElicitationRequest(
            server=describe, message=str(params.message),
            mode="url" if url is not None else "form", url=url,
            schema=getattr(params, "requested_schema", None))
        try:
            given = answer(request)
            if inspect.isawaitable(given):
                given = await given
        except Exception as exc:
            return types.ErrorData(code=_INTERNAL_ERROR,
                                   message=f"the client's elicitation handler failed: "
                                           f"{type(exc).__name__}: {exc}"[:500])
        if not isinstance(given, ElicitationAnswer):
            return types.ErrorData(code=_INTERNAL_ERROR, message=(
                f"the client's elicitation handler returned {type(given).__name__}, "
                f"not an ElicitationAnswer"))
        problem = _content_problem(given, request)
        if problem:
            return types.ErrorData(code=_INVALID_PARAMS, message=problem)
        content = given.content if given.action == "accept" and request.mode == "form" else None
        return types.ElicitResult(action=given.action, content=content)

    return callback


def _content_problem(given: ElicitationAnswer, request: ElicitationRequest) -> str | None:
    """Why accepted form content does not fit the requested schema, or ``None``."""
    if given.action != "accept" or request.mode != "form":
        return None
    if not isinstance(given.content, dict):
        return "an accepted form answer must carry its content as a dict"
    if not request.schema:
        return None
    from .._tool_schema import compile_validator, describe_error

    try:  # compiled without fetching anything: the schema comes from the server
        validator = compile_validator(request.schema)
        errors = [describe_error(e) for e in validator.iter_errors(given.content)]
    except Exception as exc:  # the server's schema, not the caller's answer, is broken
        return f"the requested schema cannot be used: {str(exc).splitlines()[0][:200]}"
    if not errors:
        return None
    return f"the answer does not fit the requested schema: {'; '.join(errors[:5])}"[:500]


def sampling_callback(describe: str, sampling: Sampling, in_flight: InFlight) -> Any:
    """The SDK's ``sampling_callback``: serve a server's ``sampling/createMessage``."""
    import mcp.types as types

    async def callback(context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        runs = in_flight.runs()
        fixed = sampling.fixed_model()
        ctx = runs[0] if len(runs) == 1 else None
        if len(runs) > 1 and fixed is None:
            return types.ErrorData(code=_REFUSED, message=(
                "sampling refused: tool calls of several runs are waiting on this server and "
                "the request does not say which one it serves"))
        model = fixed if fixed is not None else None if ctx is None else ctx.model
        if model is None:
            return types.ErrorData(code=_REFUSED, message=(
                "sampling refused: no run is waiting on this server and no model was given "
                "for its requests"))
        run_key = "" if ctx is None else ctx.run_id
        if in_flight.served.get(run_key, 0) >= sampling.max_requests:
            return types.ErrorData(code=_REFUSED, message=(
                f"sampling refused: the limit of {sampling.max_requests} request(s) per run "
                f"is reached"))
        try:
            messages = sampling_messages(params)
        except ValueError as exc:
            return types.ErrorData(code=_INVALID_PARAMS, message=f"sampling refused: {exc}")
        in_flight.served[run_key] = in_flight.served.get(run_key, 0) + 1
        return await _complete(describe, model, messages, params, sampling.max_tokens, ctx)

    return callback


async def _complete(describe: str, model: RunModel, messages: list[Message],
                    params: mcp_types.CreateMessageRequestParams, cap: int,
                    ctx: RunContext[Any] | None) -> Any:
    import time

    import mcp.types as types

    from ..context import SampledRequest
    from ..models.base import ModelSettings, usage_of
    from ..pricing import cost_of

    settings = ModelSettings(max_tokens=min(params.max_tokens, cap),
                             temperature=params.temperature)
    started = time.perf_counter()
    try:
        reply = await model.request(messages, settings)
    except Exception as exc:
        return types.ErrorData(code=_INTERNAL_ERROR,
                               message=f"sampling failed: {type(exc).__name__}: {exc}"[:500])
    usage = usage_of(reply).copy()
    usage.cost = cost_of(usage, model, reply.model_name)  # billed like the run's own requests
    if ctx is not None and ctx.record_sampling is not None:  # a run's call: a traced step
        ctx.record_sampling(SampledRequest(
            describe, model.name, usage, (time.perf_counter() - started) * 1000.0, reply.text,
            reply.finish_reason))
    elif ctx is not None:  # a context made outside a run's loop: its usage is all there is
        ctx.usage.add(usage)
    stop = "maxTokens" if reply.finish_reason in ("length", "max_tokens") else "endTurn"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=reply.text),
        model=model.name, stop_reason=stop)


def sampling_messages(params: mcp_types.CreateMessageRequestParams) -> list[Message]:
    """The request as neutral messages: its system prompt, then its turns. Text stays text; a
    user turn's image or audio becomes a :class:`~toolcycle.media.MediaPart` (a model that
    cannot take it refuses, and the server hears why). Anything else (tool use, media of a
    type toolcycle does not send) is refused with :class:`ValueError`: not served rather than
    silently dropped."""
    messages = [Message.system(params.system_prompt)] if params.system_prompt else []
    for number, item in enumerate(params.messages, 1):
        blocks = item.content if isinstance(item.content, list) else [item.content]
        parts: list[Part] = []
        for block in blocks:
            kind = getattr(block, "type", None)
            if kind == "text":
                parts.append(TextPart(str(getattr(block, "text", ""))))
            elif kind in ("image", "audio") and item.role == "user":
                parts.append(_media(block, number))
            else:
                raise ValueError(f"message {number} holds {kind!r} content; only text, and "
                                 f"images or audio from the user, are served")
        messages.append(Message(item.role, parts))
    if not any(m.role == "user" for m in messages):
        raise ValueError("the request holds no user message")
    return messages


def _media(block: Any, number: int) -> MediaPart:
    """An MCP image or audio block as a media part; :class:`ValueError` if it is not one."""
    try:
        return MediaPart(base64.b64decode(str(block.data), validate=True), str(block.mime_type))
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"message {number}: its {block.type} cannot be sent: {exc}") from exc

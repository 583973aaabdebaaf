"""A local server speaking OpenAI Chat Completions and Anthropic Messages, for adapter tests.

The official SDKs talk to it through ``base_url`` (``<url>/v1`` for OpenAI, ``<url>`` for
Anthropic). Every request is validated the way the real services do (see ``openai_wire`` and
``anthropic_wire``); an invalid one is answered 400 with the provider-shaped error and recorded
in :attr:`ProviderServer.rejections`, so a test fixture can fail any test whose adapter sent
something a real API would refuse. Replies come from a script (see ``script``), as JSON or SSE
depending on ``stream``. Faults (429 with ``Retry-After``, 5xx, slowness, dropped connections)
are script entries too.

The server runs uvicorn in a background thread with its own event loop, so one instance serves
a whole test session; :meth:`ProviderServer.reset` clears the script and records between tests.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from . import anthropic_wire, format_wire, gemini_wire, openai_wire, responses_wire
from .script import Entry, Fault, Reply, ScriptError


@dataclass(slots=True)
class Recorded:
    """One request the server received and what it answered."""

    provider: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int = 200
    usage: dict[str, Any] = field(default_factory=dict)
    #: streamed: ``"stream": true`` in the body, or Gemini's ``:streamGenerateContent``
    streamed: bool = False


class _DroppedResponse(Response):
    """Promises a long body, sends a fragment, then fails: the client sees the connection
    close mid-response (uvicorn aborts it), as with a network drop."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"4096")],
            }
        )
        await send({"type": "http.response.body", "body": b'{"id": "trunc', "more_body": True})
        raise ConnectionAbortedError("dropped on purpose by the test server")


class ProviderServer:
    """Scripted, validating provider endpoints. Set :attr:`require_tool_call_content` to act
    like compatible servers that refuse ``null`` content on assistant tool-call messages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: deque[Entry] = deque()
        self.requests: list[Recorded] = []
        self.rejections: list[str] = []
        self.require_tool_call_content = False
        #: The model's context window in tokens: a larger request is refused (``None``: any).
        self.context_window: int | None = None
        #: Answer a JSON-schema response format with 400, as a model without one does.
        self.refuse_formats = False
        self.cache = anthropic_wire.PromptCache()
        self.issued = responses_wire.Issued()
        self.signed = gemini_wire.Issued()
        self._previous_keys: list[str] = []
        self._number = 0
        self._generation = 0  # bumped by reset(): late handlers of a finished test stand down
        self.url = ""
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
                Route("/v1/responses", self._responses, methods=["POST"]),
                Route("/v1beta/models/{call:path}", self._gemini, methods=["POST"]),
            ]
        )
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- control

    def script(self, entries: Iterable[Entry]) -> None:
        """Append entries to the script (consumed one per request)."""
        with self._lock:
            self._script.extend(entries)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.rejections.clear()
            self.require_tool_call_content = False
            self.context_window = None
            self.refuse_formats = False
            self.cache = anthropic_wire.PromptCache()
            self.issued = responses_wire.Issued()
            self.signed = gemini_wire.Issued()
            self._previous_keys = []
            self._generation += 1

    @property
    def remaining(self) -> int:
        return len(self._script)

    def take_rejections(self) -> list[str]:
        """Return and clear the rejections (for tests that expect some)."""
        with self._lock:
            taken, self.rejections = self.rejections, []
        return taken

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(
            self.app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        started = threading.Event()
        while not self._server.started:
            started.wait(0.01)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)

    # ---------------------------------------------------------------- handling

    def _next(self, body: dict[str, Any]) -> Reply | Fault:
        with self._lock:
            if not self._script:
                raise ScriptError("the script is exhausted")
            entry = self._script.popleft()
            self._number += 1
        if isinstance(entry, Reply | Fault):
            return entry
        return entry(body)

    async def _prologue(
        self, request: Request, provider: str
    ) -> tuple[dict[str, Any], Recorded, Reply | Fault | Response]:
        """Parse, record, authenticate and validate; return the scripted entry or an error."""
        body = await request.json()
        streamed = bool(body.get("stream")) or request.url.path.endswith(
            ":streamGenerateContent")
        record = Recorded(provider, body, dict(request.headers), streamed=streamed)
        with self._lock:
            self.requests.append(record)
        error = self._authenticate(request, provider) or self._validate(body, provider)
        if error is not None:
            record.status = error.status_code
            return body, record, error
        try:
            entry = self._next(body)
            if isinstance(entry, Reply):
                _WIRES[provider].check_reply(body, entry)
                format_wire.check_reply(format_wire.schema_of(provider, body), entry)
        except ScriptError as exc:
            self._reject(f"script: {exc}")
            record.status = 400
            return body, record, _error(provider, 400, f"script error: {exc}", "script_error")
        return body, record, entry

    def _authenticate(self, request: Request, provider: str) -> Response | None:
        if provider in ("openai", "responses"):
            ok = request.headers.get("authorization", "").startswith("Bearer ")
        elif provider == "gemini":
            ok = bool(request.headers.get("x-goog-api-key"))
        else:
            key = request.headers.get("x-api-key") or request.headers.get("authorization")
            ok = bool(key) and bool(request.headers.get("anthropic-version"))
        if ok:
            return None
        self._reject(f"{provider}: missing credentials or version header")
        return _error(provider, 401, "invalid x-api-key", "authentication_error")

    def _validate(self, body: dict[str, Any], provider: str) -> Response | None:
        try:
            if provider == "openai":
                openai_wire.validate(body, require_tool_call_content=self.require_tool_call_content)
            elif provider == "responses":
                responses_wire.validate(body, self.issued)
            elif provider == "gemini":
                gemini_wire.validate(body, self.signed)
            else:
                anthropic_wire.validate(body)
            format_wire.schema_of(provider, body, self.refuse_formats)
            format_wire.check_window(provider, body, self.context_window)
        except (openai_wire.WireError, anthropic_wire.WireError) as exc:
            self._reject(f"{provider}: {exc.message}")
            return _error(provider, 400, exc.message, "invalid_request_error")
        return None

    def _reject(self, problem: str) -> None:
        with self._lock:
            self.rejections.append(problem)

    async def _fault(self, provider: str, fault: Fault, record: Recorded) -> Response | None:
        if fault.delay:
            generation = self._generation
            await asyncio.sleep(fault.delay)
            if generation != self._generation:  # the test that asked for it is over
                return _error(provider, 503, "stale request from a finished test", "api_error")
        if fault.drop:
            record.status = -1
            return _DroppedResponse()
        if fault.status is None:
            return None
        record.status = fault.status
        headers = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(fault.status, "api_error")
        return _error(provider, fault.status, fault.message, kind, headers)

    async def _scripted(
        self, request: Request, provider: str
    ) -> tuple[dict[str, Any], Recorded, Reply | Response, int | None]:
        """The request's reply after its faults: an error response ends the request, a drop
        on a stream says after how many events the stream breaks."""
        body, record, entry = await self._prologue(request, provider)
        drop_after: int | None = None
        while isinstance(entry, Fault):
            if entry.drop and record.streamed:
                drop_after, entry = entry.drop_after, self._next(body)
                record.status = -1
                continue
            response = await self._fault(provider, entry, record)
            if response is not None:
                return body, record, response, drop_after
            entry = self._next(body)
        return body, record, entry, drop_after

    async def _openai(self, request: Request) -> Response:
        body, record, entry, drop_after = await self._scripted(request, "openai")
        if isinstance(entry, Response):
            return entry
        prompt, cached, self._previous_keys = openai_wire.prompt_usage(body, self._previous_keys)
        number = self._number
        if not body.get("stream"):
            data = openai_wire.completion(body, entry, number, prompt, cached)
            record.usage = data["usage"]
            return JSONResponse(data)
        chunks = openai_wire.chunks(body, entry, number, prompt, cached)
        record.usage = chunks[-1].get("usage") or {}
        lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        return _sse(lines, drop_after, entry.event_delay)

    async def _responses(self, request: Request) -> Response:
        body, record, entry, drop_after = await self._scripted(request, "responses")
        if isinstance(entry, Response):
            return entry
        number = self._number
        output = responses_wire.output_items(body, entry, number, self.issued)
        usage, self._previous_keys = responses_wire.usage(body, entry, output, self._previous_keys)
        record.usage = usage
        data = responses_wire.response(body, entry, number, output, usage)
        if not body.get("stream"):
            return JSONResponse(data)
        events = responses_wire.events(data)
        lines = [f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events]
        return _sse(lines, drop_after, entry.event_delay)

    async def _gemini(self, request: Request) -> Response:
        model, _, method = request.path_params["call"].partition(":")
        body, record, entry, drop_after = await self._scripted(request, "gemini")
        if isinstance(entry, Response):
            return entry
        out = gemini_wire.parts(entry, self.signed, self._number)
        data = gemini_wire.response(body, entry, out, self._number, model)
        record.usage = data["usageMetadata"]
        if method != "streamGenerateContent":
            return JSONResponse(data)
        lines = [f"data: {json.dumps(c)}\r\n\r\n" for c in gemini_wire.chunks(data)]
        return _sse(lines, drop_after, entry.event_delay)

    async def _anthropic(self, request: Request) -> Response:
        body, record, entry, drop_after = await self._scripted(request, "anthropic")
        if isinstance(entry, Response):
            return entry
        accounting = self.cache.account(body)
        number = self._number
        data = anthropic_wire.message(body, entry, number, accounting)
        record.usage = data["usage"]
        if not body.get("stream"):
            return JSONResponse(data)
        events = anthropic_wire.events(body, entry, number, accounting)
        lines = [f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events]
        return _sse(lines, drop_after, entry.event_delay)


_WIRES: dict[str, Any] = {
    "openai": openai_wire, "anthropic": anthropic_wire, "responses": responses_wire,
    "gemini": gemini_wire,
}


def _sse(lines: list[str], drop_after: int | None, delay: float) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for index, line in enumerate(lines):
            if drop_after is not None and index == drop_after:
                raise ConnectionAbortedError("stream dropped on purpose by the test server")
            if delay and index:
                await asyncio.sleep(delay)
            yield line.encode()

    return StreamingResponse(body(), media_type="text/event-stream")


def _error(
    provider: str, status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    if provider == "gemini":
        status_name = {429: "RESOURCE_EXHAUSTED", 401: "UNAUTHENTICATED"}.get(
            status, "INVALID_ARGUMENT" if status == 400 else "INTERNAL")
        return JSONResponse(gemini_wire.error_body(message, status, status_name),
                            status_code=status, headers=headers)
    body = (
        openai_wire.error_body(message, kind)
        if provider in ("openai", "responses")
        else anthropic_wire.error_body(message, kind)
    )
    return JSONResponse(body, status_code=status, headers=headers)

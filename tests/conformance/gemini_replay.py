"""A scripted model whose every request goes through the ``google`` (Gemini) adapter.

As ``responses_replay`` does for the Responses wire: the scripted reply is rendered as a
Gemini ``generateContent`` answer and read back by
:class:`~toolcycle.models.google.GeminiModel` through the official ``google-genai`` SDK,
whose request is checked by the test server's Gemini rules (``providers.gemini_wire``) on
the way; the tools' schemas go through the adapter's JSON Schema conversion. The HTTP hop is
an in-process ``httpx.MockTransport``.
"""

from __future__ import annotations

import contextvars
import functools
import json
from collections.abc import Sequence
from typing import Any

import httpx2 as httpx
from google import genai
from google.genai import types
from providers import gemini_wire  # tests/ is on sys.path: the test server's wire rules
from providers.openai_wire import WireError
from providers.script import Call, Reply

from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.google import GeminiModel
from toolcycle.models.retry import NO_RETRIES
from toolcycle.models.scripted import ScriptedModel


class ThroughGemini(Model):
    """``scripted`` decides each reply; the adapter carries it over the Gemini wire."""

    system = "gcp.gemini"

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted
        self.name = "gemini-replay"
        self.signed = gemini_wire.Issued()
        self.rejections: list[str] = []
        self._reply: Message | None = None
        self._number = 0
        self.adapter = GeminiModel(self.name, client=_client().aio, retry=NO_RETRIES)

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self._reply = await self.scripted.request(messages, settings)
        _ANSWERING.set(self)  # the shared client's transport answers in this task
        return await self.adapter.request(messages, settings)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = json.loads(request.content)
        try:
            gemini_wire.validate(body, self.signed)
        except WireError as exc:
            self.rejections.append(exc.message)
            return httpx.Response(400, json=gemini_wire.error_body(exc.message))
        assert self._reply is not None
        reply = Reply(
            text=self._reply.text,
            calls=[Call(c.name, c.arguments or {}) for c in self._reply.tool_calls],
        )
        gemini_wire.check_reply(body, reply)
        self._number += 1
        out = gemini_wire.parts(reply, self.signed, self._number)
        return httpx.Response(
            200, json=gemini_wire.response(body, reply, out, self._number, self.name)
        )


#: The replay answering the request in flight: the transport runs in the requesting task.
_ANSWERING: contextvars.ContextVar[ThroughGemini] = contextvars.ContextVar("gemini_replay")


@functools.cache
def _client() -> genai.Client:
    """One SDK client for every replay: building one (and its TLS contexts) per task was a
    sixth of the whole replay's time. Requests go to the replay of the requesting task."""
    mock = httpx.MockTransport(lambda request: _ANSWERING.get()._answer(request))
    return genai.Client(api_key="replay", http_options=types.HttpOptions(
        base_url="http://gemini.replay", api_version="v1beta",
        httpx_async_client=httpx.AsyncClient(transport=mock, trust_env=False),
        httpx_client=httpx.Client(transport=mock, trust_env=False),
    ))

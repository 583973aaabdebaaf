"""A scripted model whose every request goes through the ``openai-responses`` adapter.

The BFCL replays drive the loop with :class:`~toolcycle.models.scripted.ScriptedModel`; for the
Responses wire the scripted reply is instead rendered as a Responses API answer and read back
by :class:`~toolcycle.models.openai_responses.OpenAIResponsesModel` through the official SDK,
whose request is checked by the test server's Responses rules (``providers.responses_wire``)
on the way. The HTTP hop is an in-process ``httpx.MockTransport``: 800 tasks stay fast, and
what is tested is what the adapter sends and reads, not the socket.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2 as httpx
import openai
from providers import responses_wire  # tests/ is on sys.path: the test server's wire rules
from providers.openai_wire import WireError, error_body
from providers.script import Call, Reply

from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.openai_responses import OpenAIResponsesModel
from toolcycle.models.retry import NO_RETRIES
from toolcycle.models.scripted import ScriptedModel

_USAGE = {
    "input_tokens": 1,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 1,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 2,
}


class ThroughResponses(Model):
    """``scripted`` decides each reply; the adapter carries it over the Responses wire."""

    system = "openai"

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted
        self.name = "gpt-replay"
        self.issued = responses_wire.Issued()
        self.rejections: list[str] = []
        self._reply: Message | None = None
        self._number = 0
        client = openai.AsyncOpenAI(
            api_key="sk-replay",
            base_url="http://responses.replay/v1",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(self._answer),
                                          trust_env=False),
        )
        self.adapter = OpenAIResponsesModel(self.name, client=client, retry=NO_RETRIES)

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self._reply = await self.scripted.request(messages, settings)
        return await self.adapter.request(messages, settings)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = json.loads(request.content)
        try:
            responses_wire.validate(body, self.issued)
        except WireError as exc:
            self.rejections.append(exc.message)
            return httpx.Response(400, json=error_body(exc.message, "invalid_request_error"))
        assert self._reply is not None
        reply = Reply(
            text=self._reply.text,
            calls=[Call(c.name, c.raw_arguments, c.id) for c in self._reply.tool_calls],
        )
        responses_wire.check_reply(body, reply)
        self._number += 1
        output = responses_wire.output_items(body, reply, self._number, self.issued)
        usage = dict(_USAGE)  # the replays compare state and observations, not tokens
        return httpx.Response(
            200, json=responses_wire.response(body, reply, self._number, output, usage)
        )

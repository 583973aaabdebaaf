"""Blank assistant text (rel-20): the Messages API refuses empty and whitespace-only text
blocks, so the Anthropic adapter never sends them; and a history that repair_reply made
(rel-18: re-keyed ids, placeholder names) is accepted by both wire servers."""

from __future__ import annotations

import pytest

from toolcycle import Agent
from toolcycle.events import TextDeltaEvent
from toolcycle.messages import Message, TextPart, ToolCall, ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.models.repair import repair_reply

from .conftest import (
    anthropic_model,
    functions_model,
    gemini_model,
    openai_model,
    responses_model,
)
from .script import Reply
from .server import ProviderServer
from .test_openai_adapter import TOOLS


def _history(*turns: Message) -> list[Message]:
    history = [Message.system("t"), Message.user("go")]
    used: set[str] = set()
    for turn in turns:
        repaired, _ = repair_reply(turn, used)
        used.update(c.id for c in repaired.tool_calls)
        history.append(repaired)
        calls = repaired.tool_calls
        history.append(Message.tool_results([ToolResult(c.id, c.name, "x", True) for c in calls])
                       if calls else Message.user("again"))
    return history


BLANK_BESIDE_A_CALL = Message("assistant", [TextPart(" \n"), ToolCall.from_args("c1", "add", {})])


async def test_whitespace_text_is_not_sent_to_anthropic(server: ProviderServer) -> None:
    """Without repair: the adapter alone must drop the blank block (and patch a blank turn)."""
    server.script([Reply(text="done")])
    history = [Message.user("go"), Message.assistant("  "), Message.user("again"),
               BLANK_BESIDE_A_CALL,
               Message.tool_results([ToolResult("c1", "add", "3")])]
    await anthropic_model(server).request(history, TOOLS)
    sent = server.requests[-1].body["messages"]
    assert [b["type"] for b in sent[1]["content"]] == ["text"]
    assert sent[1]["content"][0]["text"] == "(empty)"
    assert [b["type"] for b in sent[3]["content"]] == ["tool_use"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses", "gemini"])
async def test_repaired_histories_are_accepted(server: ProviderServer, provider: str) -> None:
    server.script([Reply(text="done")])
    history = _history(
        Message("assistant", [ToolCall.from_args("c1", "functions.add", {})]),
        Message("assistant", [ToolCall.from_args("c1", "add", {}),
                              ToolCall.from_args("c1", "add", {})]),
        Message("assistant", [TextPart("   ")]),
        Message("assistant", []),
        BLANK_BESIDE_A_CALL,
    )
    makers = {"openai": openai_model, "anthropic": anthropic_model, "responses": responses_model,
              "gemini": gemini_model}
    model = makers[provider](server)
    reply = await model.request(history, ModelSettings(tools=TOOLS.tools))
    assert reply.text == "done"


@pytest.mark.parametrize("provider", ["openai", "functions", "anthropic", "responses", "gemini"])
async def test_a_blank_turn_is_recorded_as_streamed_and_the_run_goes_on(
    server: ProviderServer, provider: str
) -> None:
    """r2-15: the trace, the history and the stream agree on a blank turn (no "(empty)" the
    model never wrote), and the next request, which carries it, is accepted by every wire."""
    server.script([Reply(text="   "), Reply(text="the answer")])
    makers = {"openai": openai_model, "functions": functions_model,
              "anthropic": anthropic_model, "responses": responses_model,
              "gemini": gemini_model}
    stream = Agent(makers[provider](server), "t").stream("go")
    deltas: dict[int, str] = {}
    async for event in stream:
        if isinstance(event, TextDeltaEvent):
            deltas[event.iteration] = deltas.get(event.iteration, "") + event.text
    result = await stream.get_result()
    assert result.output == "the answer"
    assert result.trace.steps[0].thought == deltas.get(1, "") == "   "
    assert [m.text for m in result.messages if m.role == "assistant"] == ["   ", "the answer"]

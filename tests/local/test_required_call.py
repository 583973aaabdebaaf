"""A text protocol honours ``tool_choice``: a reply that calls no tool where a call was
required (a tool named, or ``"required"``) is asked once more, with that reply and a turn
saying so, before it is taken. A native API never answers a required call with text; the
loop, a playbook's first call and structured output rely on that."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.messages import Message, TextPart, ToolResult, Usage
from toolcycle.models.base import ModelResponse, ModelSettings, TextDelta, ToolDefinition
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.choice import NO_CALL_MADE
from toolcycle.models.text.protocol import JsonToolsModel, TextProtocolModel
from toolcycle.models.text.react import ReActModel

ADD = ToolDefinition("add", "Add two numbers.", {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})
CALL = 'Thought: add them\nAction: add\nAction Input: {"a": 1, "b": 2}'
GUESS = "Thought: I know this\nFinal Answer: it is 4"


def _react(*replies: str) -> tuple[ReActModel, ScriptedModel]:
    """Each reply costs 10 tokens in and 1 out, so the usage shows how many were paid."""
    inner = ScriptedModel([Message("assistant", [TextPart(r)], usage=Usage(10, 1, requests=1))
                           for r in replies])
    return ReActModel(inner), inner


@pytest.mark.parametrize("choice", ["add", "required"])
async def test_a_reply_without_a_call_where_one_was_required_is_asked_again(choice: str) -> None:
    model, inner = _react(GUESS, CALL)
    message = await model.request([Message.user("1 + 2?")],
                                  ModelSettings(tools=[ADD], tool_choice=choice))
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("add", {"a": 1, "b": 2})]
    assert message.usage is not None and message.usage.requests == 2  # both were paid
    second = inner.requests[1].last_message.text
    assert second.startswith(NO_CALL_MADE)
    assert ("Call the tool add now." if choice == "add" else "Call one of the tools now."
            ) in second


async def test_it_is_asked_once_and_a_second_refusal_stands() -> None:
    model, inner = _react(GUESS, GUESS, CALL)
    message = await model.request([Message.user("1 + 2?")],
                                  ModelSettings(tools=[ADD], tool_choice="add"))
    assert message.tool_calls == [] and message.text == "it is 4"
    assert len(inner.requests) == 2


@pytest.mark.parametrize("settings", [ModelSettings(tools=[ADD], tool_choice="auto"),
                                      ModelSettings(tools=[ADD], tool_choice="none"),
                                      ModelSettings(tool_choice="required")])  # no tools
async def test_a_free_choice_takes_the_text_at_once(settings: ModelSettings) -> None:
    model, inner = _react(GUESS, CALL)
    message = await model.request([Message.user("1 + 2?")], settings)
    assert message.text == "it is 4" and len(inner.requests) == 1


async def test_the_json_protocol_without_its_grammar_is_asked_again_too() -> None:
    inner = ScriptedModel(['{"answer": "4"}', '{"name": "add", "arguments": {"a": 1, "b": 2}}'])
    model: TextProtocolModel = JsonToolsModel(inner)
    message = await model.request([Message.user("1 + 2?")],
                                  ModelSettings(tools=[ADD], tool_choice="add"))
    assert [c.name for c in message.tool_calls] == ["add"]
    assert inner.requests[1].last_message.text.startswith(NO_CALL_MADE)


async def test_streamed_the_ignored_replys_words_are_never_shown() -> None:
    model, _ = _react(GUESS, CALL)
    items = [i async for i in model.stream([Message.user("1 + 2?")],
                                           ModelSettings(tools=[ADD], tool_choice="add"))]
    assert not [i for i in items if isinstance(i, TextDelta)]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert [c.name for c in final.message.tool_calls] == ["add"]
    assert final.message.usage is not None and final.message.usage.requests == 2


async def test_streamed_a_second_refusal_streams_its_own_words() -> None:
    model, _ = _react(GUESS, "Final Answer: four")
    items = [i async for i in model.stream([Message.user("1 + 2?")],
                                           ModelSettings(tools=[ADD], tool_choice="add"))]
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "four"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_an_agent_whose_first_call_is_named_gets_it_through_the_loop() -> None:
    model, inner = _react(GUESS, CALL, "Final Answer: 3")
    agent: Agent[None, str] = Agent(model, "You add.", [add],
                                    model_settings=ModelSettings(tool_choice="add"))
    result = await agent.run("1 + 2?")
    assert result.output == "3"
    calls: list[Any] = [c for s in result.trace.steps for c in s.tool_calls]
    assert [(c.name, c.result) for c in calls] == [("add", "3")]
    assert result.usage.requests == 3  # the refused reply was paid for
    assert len(inner.requests) == 3


async def test_the_calls_of_a_reply_asked_again_are_numbered_by_the_conversations_turns(
        ) -> None:
    """Found by test_protocol_fuzz: counted with the added turn, the re-asked reply's ids were
    the next turn's too."""
    model, _ = _react(GUESS, CALL, CALL.replace('"a": 1', '"a": 5'))
    history = [Message.user("1 + 2?")]
    first = await model.request(history, ModelSettings(tools=[ADD], tool_choice="add"))
    history += [first, Message.tool_results([ToolResult(first.tool_calls[0].id, "add", "3")])]
    second = await model.request(history, ModelSettings(tools=[ADD]))
    assert first.tool_calls[0].id != second.tool_calls[0].id


async def test_an_empty_refused_reply_is_no_turn_of_its_own() -> None:
    """An empty assistant turn is one a chat API rejects (the inner ScriptedModel checks)."""
    inner = ScriptedModel(['{"answer": ""}', '{"name": "add", "arguments": {"a": 1, "b": 2}}',
                           '{"answer": "3"}'])
    agent: Agent[None, str] = Agent(JsonToolsModel(inner), "You add.", [add],
                                    model_settings=ModelSettings(tool_choice="add"))
    result = await agent.run("1 + 2?")
    assert result.output == "3" and len(inner.requests) == 3
    assert inner.requests[1].message_count == 2  # system, then one user turn with the nudge

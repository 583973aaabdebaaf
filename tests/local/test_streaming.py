"""Streaming through the text protocols (new-05): the answer streams as it is written, calls
are held back and come out whole as ToolCallDeltas, and the final message is what `request`
returns. The inner ScriptedModel streams its text in 8-character chunks, as a server would."""

from __future__ import annotations

from toolcycle import Agent
from toolcycle.messages import Message, TextPart
from toolcycle.models.base import ModelResponse, ModelSettings, TextDelta, ToolCallDelta
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.models.text.react import ReActModel
from toolcycle.models.text.streaming import (
    json_answer_so_far,
    partial_json_string,
    react_answer_so_far,
)

ANSWER = r"The sum of 20 and 22 is 42, because twenty plus twenty-two makes \"forty-two\"."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def deltas_of(agent: Agent[None, str], prompt: str) -> tuple[list[str], str]:
    texts, output = [], ""
    async for event in agent.stream(prompt):
        name = type(event).__name__
        if name == "TextDeltaEvent":
            texts.append(event.text)  # type: ignore[attr-defined]
        elif name == "FinalResult":
            output = event.output  # type: ignore[attr-defined]
    return texts, output


async def test_a_json_answer_streams_in_pieces_and_a_call_is_held_back() -> None:
    inner = ScriptedModel(['{"name": "add", "arguments": {"a": 20, "b": 22}}',
                           f'{{"answer": "{ANSWER}"}}'])
    texts, output = await deltas_of(Agent(JsonToolsModel(inner), "x", [add]), "20 + 22?")
    assert output == ANSWER.replace('\\"', '"')
    assert len(texts) > 5 and "".join(texts) == output  # nothing of the call was shown
    assert not any("{" in t for t in texts)


async def test_prose_and_react_final_answers_stream_too() -> None:
    prose = "It is forty-two, as anyone can check by counting."
    texts, output = await deltas_of(Agent(JsonToolsModel(ScriptedModel([prose])), "x"), "?")
    assert len(texts) > 3 and "".join(texts) == output == prose
    react = ReActModel(ScriptedModel(['Thought: add them\nAction: add\nAction Input: {"a": 1, '
                                      '"b": 2}', "Thought: done\nFinal Answer: the sum is 3, "
                                      "which is small"]))
    texts, output = await deltas_of(Agent(react, "x", [add]), "1 + 2?")
    assert output == "the sum is 3, which is small"
    assert len(texts) > 2 and "".join(texts) == output


async def test_the_stream_ends_with_whole_calls_and_the_requests_message() -> None:
    model = JsonToolsModel(ScriptedModel(['I add.\n{"name": "add", "arguments": {"a": 1, '
                                          '"b": 2}}']))
    tools = Agent(model, "x", [add]).model_settings.tools
    items = [item async for item in model.stream([Message.user("1 + 2?")],
                                                ModelSettings(tools=tools))]
    calls = [i for i in items if isinstance(i, ToolCallDelta)]
    assert [(c.index, c.name, c.arguments_delta) for c in calls] == [
        (0, "add", '{"a": 1, "b": 2}')]
    assert isinstance(items[-1], ModelResponse)
    assert items[-1].message.tool_calls[0].arguments == {"a": 1, "b": 2}
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "I add."


def test_what_can_be_shown_of_a_reply_written_so_far() -> None:
    assert json_answer_so_far('{"answer": "Hel') == "Hel"
    assert json_answer_so_far('  {"answer" : "a\\"b\\n\\u00e9 done"}') == 'a"b\né done'
    assert json_answer_so_far('{"name": "add", "argu') == ""
    assert json_answer_so_far("Sure. ```json\n{") == "Sure."
    assert json_answer_so_far("Paris is ") == "Paris is"
    assert partial_json_string("ab\\") == "ab" and partial_json_string("ab\\u00") == "ab"
    assert react_answer_so_far("Thought: x\nFinal Answer: 4") == "4"
    assert react_answer_so_far("Action: add\nFinal Answer: 4") == ""
    assert react_answer_so_far('Final Answer: "quoted') == ""


async def test_a_streamed_reply_cut_by_the_token_limit_runs_no_half_written_call() -> None:
    """The streamed path reads the inner model's finish reason too: the cut call is answered
    with an error, and only the complete call of the next reply runs."""
    ran: list[tuple[int, int]] = []

    def add_logged(a: int, b: int = 0) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    cut = Message("assistant", [TextPart('{"name": "add_logged", "arguments": {"a": 20, "b": 2')],
                  finish_reason="length")
    inner = ScriptedModel([cut, '{"name": "add_logged", "arguments": {"a": 20, "b": 22}}',
                           '{"answer": "42"}'])
    agent = Agent(JsonToolsModel(inner), "Use the tools.", [add_logged])
    _, output = await deltas_of(agent, "20 + 22?")
    assert ran == [(20, 22)] and output == "42"

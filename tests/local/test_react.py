"""The ReAct text protocol: parsing replies, rendering history, and running through the Agent.

The Agent runs use :class:`ScriptedModel` as the *inner text model*: it replies with scripted
ReAct text, and the wrapper must turn it into neutral calls the loop executes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult
from toolcycle.models.base import ModelSettings, ToolDefinition
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.calls import TRUNCATED
from toolcycle.models.text.react import ReActModel, parse_react

FIXTURES = Path(__file__).parent / "fixtures"

LOOKUP = ToolDefinition(
    "lookup", "Look a word up.", {"type": "object", "properties": {"word": {"type": "string"}}}
)
ADD = ToolDefinition(
    "add",
    "Add two numbers.",
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


def calls(parts: list[Any]) -> list[tuple[str, Any]]:
    return [(p.name, p.arguments) for p in parts if isinstance(p, ToolCall)]


def test_thought_action_input() -> None:
    parts = parse_react('Thought: I need to add.\nAction: add\nAction Input: {"a": 1, "b": 2}',
                        [ADD], "c")
    assert parts[0] == TextPart("I need to add.")
    assert calls(parts) == [("add", {"a": 1, "b": 2})]


def test_invented_observation_is_cut_off() -> None:
    text = (
        'Thought: add\nAction: add\nAction Input: {"a": 1, "b": 2}\nObservation: 3\n'
        "Thought: done\nFinal Answer: 3"
    )
    parts = parse_react(text, [ADD], "c")
    assert calls(parts) == [("add", {"a": 1, "b": 2})]
    assert not any(isinstance(p, TextPart) and "Final" in p.text for p in parts)


def test_final_answer_keeps_the_thought_as_thinking() -> None:
    parts = parse_react("Thought: I know it now.\nFinal Answer: 42", [ADD], "c")
    assert parts == [ThinkingPart("I know it now."), TextPart("42")]


def test_several_actions_in_one_reply_become_calls_in_order() -> None:
    text = (
        'Action: lookup\nAction Input: {"word": "a"}\n'
        'Action: lookup\nAction Input: {"word": "b"}'
    )
    parts = parse_react(text, [LOOKUP], "call_1")
    assert calls(parts) == [("lookup", {"word": "a"}), ("lookup", {"word": "b"})]
    assert [p.id for p in parts if isinstance(p, ToolCall)] == ["call_1_1", "call_1_2"]


def test_markdown_fence_python_literal_and_bare_text_input() -> None:
    fenced = parse_react('**Action:** add\n**Action Input:**\n```json\n{"a": 1, "b": 2}\n```',
                         [ADD], "c")
    assert calls(fenced) == [("add", {"a": 1, "b": 2})]
    literal = parse_react("Action: add\nAction Input: {'a': 1, 'b': 2}", [ADD], "c")
    assert calls(literal) == [("add", {"a": 1, "b": 2})]
    bare = parse_react("Action: lookup\nAction Input: serendipity", [LOOKUP], "c")
    assert calls(bare) == [("lookup", {"word": "serendipity"})]


def test_inline_call_and_broken_input() -> None:
    inline = parse_react('Action: add({"a": 1, "b": 2})', [ADD], "c")
    assert calls(inline) == [("add", {"a": 1, "b": 2})]
    # seen from Qwen2.5-Coder-1.5B (bench/learning.py, sources suite): the arguments inline,
    # with unquoted keys, then an empty Action Input; they used to be dropped for that {}
    real = parse_react('Thought: Look it up.\nAction: lookup(word: "Ellesmere Polymers")\n'
                       "Action Input: {}", [LOOKUP], "c")
    assert calls(real) == [("lookup", {"word": "Ellesmere Polymers"})]
    keyed = parse_react('Action: add(a: 1, "b": 2)', [ADD], "c")
    assert calls(keyed) == [("add", {"a": 1, "b": 2})]
    empty = parse_react("Action: add()\nAction Input: {}", [ADD], "c")
    assert calls(empty) == [("add", {})]
    # the call written inline and again as its Action Input: named by its identifier, the
    # input's object as the arguments (the whole text used to be the name, "no tool name")
    twice = parse_react('Action: add(a: 1, b: 2)\nAction Input: {"a": 1, "b": 2}', [ADD], "c")
    assert calls(twice) == [("add", {"a": 1, "b": 2})]
    unknown = parse_react('Action: sum_up(a: 1)\nAction Input: {"a": 1}', [ADD], "c")
    assert calls(unknown) == [("sum_up", {"a": 1})]
    [broken] = [p for p in parse_react("Action: add\nAction Input: a=1 b=2", [ADD], "c")
                if isinstance(p, ToolCall)]
    assert broken.arguments is None and broken.parse_error


def test_several_action_input_lines_take_the_first_complete_object() -> None:
    # seen from Qwen2.5-Coder-1.5B: one Action, then three Action Input lines; the whole block
    # used to become the single parameter's string value
    text = ('Action: lookup\nAction Input: {"word": "X"}\nAction Input: {"word": "Y"}\n'
            'Action Input: {"word": "Z"}')
    assert calls(parse_react(text, [LOOKUP], "c")) == [("lookup", {"word": "X"})]
    trailing = parse_react('Action: add\nAction Input: {"a": 1, "b": 2} to add them', [ADD], "c")
    assert calls(trailing) == [("add", {"a": 1, "b": 2})]


def test_reply_without_keywords_is_the_answer() -> None:
    assert parse_react("Paris is sunny.", [ADD], "c") == [TextPart("Paris is sunny.")]


async def test_react_agent_runs_tools_and_keeps_thoughts() -> None:
    replies = [
        'Thought: I should add them.\nAction: add\nAction Input: {"a": 2, "b": 3}',
        "Thought: The tool said 5.\nFinal Answer: 5",
    ]
    inner = ScriptedModel(replies)

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    result = await Agent(ReActModel(inner), "Be brief.", [add]).run("2 plus 3?")
    assert result.output == "5"
    records = [(r.name, r.args, r.result) for r in result.tool_calls]
    assert records == [("add", {"a": 2, "b": 3}, "5")]
    assert result.trace.steps[0].thought == "I should add them."
    assert result.trace.steps[1].thinking == "The tool said 5."
    # What the inner model saw last: the action it wrote and the observation, as text.
    sent = inner.requests[-1].last_message.text
    assert sent.startswith("Observation: 5")


def test_history_is_rendered_as_react_text() -> None:
    model = ReActModel(ScriptedModel([]))
    history = [
        Message.system("Be brief."),
        Message.user("2 plus 3?"),
        Message("assistant", [TextPart("Add."), ToolCall.from_args("c1", "add", {"a": 2, "b": 3})]),
        Message.tool_results([ToolResult("c1", "add", "5")]),
    ]
    rendered = model.render_conversation(history, ModelSettings(tools=(ADD,)))
    assert [m.role for m in rendered] == ["system", "user", "assistant", "user"]
    assert "Action: add" in rendered[2].text
    assert 'Action Input: {"a": 2, "b": 3}' in rendered[2].text
    assert rendered[3].text == "Observation: 5"
    assert "- add(a?: number, b?: number): Add two numbers." in rendered[0].text


def _react_corpus() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads((FIXTURES / "replies.json").read_text())
    return [r for r in records if r["protocol"] == "react"]


@pytest.mark.parametrize(
    "record", _react_corpus(), ids=lambda r: f"{r['model']}-{r['task'][:18]}-{r['turn']}"
)
def test_react_fixture_corpus(record: dict[str, Any]) -> None:
    """Real ReAct replies parse to the calls/answer reviewed by hand."""
    tools = [ToolDefinition(name, "", schema) for name, schema in record["schemas"].items()]
    parts = parse_react(record["reply"], tools, "f")
    expected = record["expected"]
    assert [[n, a] for n, a in calls(parts)] == expected["calls"]
    answer = None if calls(parts) else "".join(p.text for p in parts if isinstance(p, TextPart))
    assert answer == expected["answer"]


def test_loose_tool_names_and_backticked_input_are_read() -> None:
    # Seen on BFCL with Qwen2.5-Coder 0.5B: a title-cased name, inline-code arguments.
    area = ToolDefinition("area_rectangle_calculate", "Area.", {"type": "object", "properties": {
        "length": {"type": "number"}, "breadth": {"type": "number"}}})
    parts = parse_react("Action: Area Rectangle Calculate\nAction Input: `{length: 7, breadth: 3}`",
                        [area, ADD], "c")
    assert calls(parts) == [("area_rectangle_calculate", {"length": 7, "breadth": 3})]


def test_a_name_followed_by_the_copied_tool_list_is_the_name() -> None:
    # Qwen2.5-Coder-1.5B copied "one of [...]" from the format line after the name it chose.
    reply = ('Thought: find it.\nAction: add, one of [lookup, add, lookup_then_add]\n'
             'Action Input: {"a": 1, "b": 2}')
    assert calls(parse_react(reply, [LOOKUP, ADD], "c")) == [("add", {"a": 1, "b": 2})]
    # the format line's words after a description of the tool (chains' baseline, 2026-11-28)
    described = ('Action: the add tool, one of [lookup, add, lookup_then_add]\n'
                 'Action Input: {"a": 1, "b": 2}')
    assert calls(parse_react(described, [LOOKUP, ADD], "c")) == [("add", {"a": 1, "b": 2})]
    assert calls(parse_react("Action: add - to sum them\nAction Input: {}", [ADD], "c")
                 ) == [("add", {})]
    # a name that is only a prefix of the text's first word is not taken
    assert calls(parse_react("Action: addition, one of [add, lookup]\nAction Input: {}",
                             [ADD, LOOKUP], "c")) == [("addition", {})]


def test_an_action_input_the_token_limit_cut_is_unreadable_not_closed() -> None:
    cut = 'Thought: add them.\nAction: add\nAction Input: {"a": 1, "b": 2'
    [call] = [p for p in parse_react(cut, [ADD], "c", truncated=True) if isinstance(p, ToolCall)]
    assert call.arguments is None and call.parse_error == TRUNCATED
    assert calls(parse_react(cut, [ADD], "c")) == [("add", {"a": 1, "b": 2})]  # forgot a brace
    closed = 'Action: add\nAction Input: {"a": 1, "b": 2}\nThought: then I will'
    assert calls(parse_react(closed, [ADD], "c", truncated=True)) == [("add", {"a": 1, "b": 2})]
    earlier = 'Action: add\nAction Input: {"a": 1\nAction: add\nAction Input: {"a": 2, "b'
    [first, last] = [p for p in parse_react(earlier, [ADD], "c", truncated=True)
                     if isinstance(p, ToolCall)]
    assert first.arguments == {"a": 1} and last.parse_error == TRUNCATED


async def test_a_reply_cut_by_the_token_limit_runs_no_half_written_call() -> None:
    """The inner model's finish reason reaches the parser: the cut call is answered with an
    error the model can act on, and the tool never runs with arguments nobody wrote."""
    ran: list[dict[str, Any]] = []

    def lookup(word: str = "default") -> str:
        """Look a word up."""
        ran.append({"word": word})
        return f"{word}: found"

    cut = Message("assistant", [TextPart('Action: lookup\nAction Input: {"word": "anti')],
                  finish_reason="length")
    inner = ScriptedModel([cut, 'Action: lookup\nAction Input: {"word": "antique"}',
                           "Final Answer: found"])
    result = await Agent(ReActModel(inner), "Be brief.", [lookup]).run("Look up antique.")
    assert ran == [{"word": "antique"}] and result.output == "found"
    first = result.tool_calls[0]
    assert first.error is not None and "output token limit" in first.error


async def test_a_named_first_call_of_a_text_run_keeps_the_text_answer_in_the_instructions(
) -> None:
    """The directive names the tool; the instructions stay those of a text run (the same
    prefix on every request), while structured output's named output tool keeps its ending."""
    from pydantic import BaseModel

    class Out(BaseModel):
        word: str

    def system_prompt(agent: Agent[Any, Any], choice: str) -> str:
        settings = ModelSettings(tools=agent.model_settings.tools, tool_choice=choice,
                                 on_repeat=agent.model_settings.on_repeat)
        model = ReActModel(ScriptedModel([]))
        return model.render_conversation([Message.system("S"), Message.user("hi")],
                                         settings)[0].text

    text_run = Agent(ReActModel(ScriptedModel([])), "S", [])
    text_run.model_settings = ModelSettings(tools=(LOOKUP,))
    free, named = system_prompt(text_run, "auto"), system_prompt(text_run, "lookup")
    assert free == named and "Final Answer: the answer to the user" in named
    structured = Agent(ReActModel(ScriptedModel([])), "S", [], output=Out)
    at_limit = system_prompt(structured, structured.model_settings.tools[-1].name)
    assert "Action: the tool that gives the final answer" in at_limit
    assert "Final Answer" not in system_prompt(structured, "required")

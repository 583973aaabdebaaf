"""``constrained="lazy"``: the model decides freely whether to call; only calls are constrained.

Through the real Agent loop with a scripted *inner* text model that records whether each
request carried the grammar (``response_format``), as llama.cpp would receive it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from toolcycle import Agent, ConfigurationError
from toolcycle.events import TextDeltaEvent
from toolcycle.messages import Message, TextPart, Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.openai import compatible_model_from_string
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.constrained import constrained_option
from toolcycle.models.text.protocol import CONSTRAINED, JsonToolsModel


def find_customer(name: str) -> dict[str, str]:
    """Look a customer up by name."""
    return {"customer_id": "C-1", "name": name}


class Reply:
    """An inner-model step that records whether it was asked under the grammar."""

    def __init__(self, text: str, log: list[bool]) -> None:
        self.text, self.log = text, log

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> str:
        self.log.append("response_format" in settings.extra)
        return self.text


async def test_a_free_answer_is_the_answer_and_no_grammar_is_asked() -> None:
    grammar: list[bool] = []
    inner = ScriptedModel([Reply("I cannot help with poems here, sorry.", grammar)])
    agent = Agent(JsonToolsModel(inner, constrained="lazy"), "", [find_customer])
    result = await agent.run("Write a poem.")
    assert result.output == "I cannot help with poems here, sorry."
    assert grammar == [False] and result.usage.requests == 1


async def test_a_free_call_is_written_again_under_the_grammar() -> None:
    grammar: list[bool] = []
    inner = ScriptedModel([
        Reply('Let me look. <tool_call>{"name": "find_customer", "arguments": {"name": '
              '"Ada",}}</tool_call>', grammar),  # free: a call, loosely written
        Reply('{"name": "find_customer", "arguments": {"name": "Ada"}}', grammar),
        Reply("Ada is C-1.", grammar),  # after the observation: free again, an answer
    ])
    agent = Agent(JsonToolsModel(inner, constrained="lazy"), "", [find_customer])
    result = await agent.run("Find Ada.")
    assert result.output == "Ada is C-1."
    assert [c.args for c in result.tool_calls] == [{"name": "Ada"}]
    assert grammar == [False, True, False]


async def test_both_replies_of_a_lazy_call_are_counted() -> None:
    def reply(text: str, tokens: int) -> Message:
        return Message("assistant", [TextPart(text)], usage=Usage(10, tokens, requests=1))

    inner = ScriptedModel([reply('{"name": "find_customer", "arguments": {"name": "Ada"}}', 5),
                           reply('{"name": "find_customer", "arguments": {"name": "Ada"}}', 7),
                           reply("Ada is C-1.", 3)])
    result = await Agent(JsonToolsModel(inner, constrained="lazy"), "", [find_customer]).run(
        "Find Ada.")
    assert result.output == "Ada is C-1."
    assert (result.usage.output_tokens, result.usage.input_tokens) == (5 + 7 + 3, 30)
    assert result.usage.requests == 3  # the adapter's two requests for the first step


async def test_the_grammar_alone_when_the_model_must_call_or_has_no_tools() -> None:
    grammar: list[bool] = []
    inner = ScriptedModel([Reply('{"name": "find_customer", "arguments": {"name": "Bo"}}',
                                 grammar), Reply('{"answer": "done"}', grammar)])
    agent = Agent(JsonToolsModel(inner, constrained="lazy"), "", [find_customer],
                  model_settings=ModelSettings(tool_choice="required"))
    await agent.run("Find Bo.", limits=None)
    assert grammar[0] is True  # required: no free reply first


async def test_lazy_streams_the_free_answer_and_the_constrained_call() -> None:
    grammar: list[bool] = []
    inner = ScriptedModel([
        Reply('{"name": "find_customer", "arguments": {"name": "Ada"}}', grammar),
        Reply('{"name": "find_customer", "arguments": {"name": "Ada"}}', grammar),
        Reply("Ada is customer C-1.", grammar),
    ])
    agent = Agent(JsonToolsModel(inner, constrained="lazy"), "", [find_customer])
    stream = agent.stream("Find Ada.")
    text = "".join([e.text async for e in stream if isinstance(e, TextDeltaEvent)])
    result = await stream.get_result()
    assert result.output == "Ada is customer C-1." and text == "Ada is customer C-1."
    assert grammar == [False, True, False]


def test_model_strings_take_lazy_and_refuse_nonsense() -> None:
    assert constrained_option("lazy", "x") == "lazy"
    assert constrained_option("TRUE", "x") is True and constrained_option("no", "x") is False
    assert constrained_option(None, "x") is None
    with pytest.raises(ValueError, match="use true, false or lazy"):
        constrained_option("maybe", "x")
    model = compatible_model_from_string("m@http://127.0.0.1:9/v1?tools=json&constrained=lazy")
    assert isinstance(model, JsonToolsModel) and model.constrained == "lazy"
    with pytest.raises(ConfigurationError, match="constrained='sometimes'"):
        Agent("openai-compatible:m@http://127.0.0.1:9/v1?tools=json&constrained=sometimes")


async def test_per_agent_setting_turns_lazy_on() -> None:
    grammar: list[bool] = []
    inner = ScriptedModel([Reply("No tool needed: hello!", grammar)])
    agent = Agent(JsonToolsModel(inner), "", [find_customer],
                  model_settings=ModelSettings(extra={CONSTRAINED: "lazy"}))
    assert (await agent.run("Say hello.")).output == "No tool needed: hello!"
    assert grammar == [False]

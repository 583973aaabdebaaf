"""A ``tool_choice`` that forces a call holds for a text answer until the first tool call."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from toolcycle import Agent, Message, ModelSettings
from toolcycle.models.base import ModelSettings as Settings
from toolcycle.models.scripted import ScriptedModel, call


def find_customer(name: str) -> str:
    """Look a customer up by name."""
    return f"{name} is customer C-1"


def _recording(choices: list[Any]) -> Any:
    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        done = any(m.role == "tool" for m in messages)
        if not done:
            return call("find_customer", {"name": "Ada"})
        if settings.tool_choice == "required":  # a forced model would have to call again
            return call("find_customer", {"name": "Ada"})
        return "Ada is C-1."
    return policy


@pytest.mark.parametrize("choice", ["required", "find_customer"])
async def test_a_forced_call_holds_until_the_first_call_then_the_model_may_answer(
        choice: str) -> None:
    choices: list[Any] = []
    agent = Agent(ScriptedModel(_recording(choices)), "", [find_customer],
                  model_settings=ModelSettings(tool_choice=choice))  # type: ignore[arg-type]
    result = await agent.run("Who is Ada?")
    assert result.output == "Ada is C-1."
    assert choices == [choice, "auto"]
    assert result.termination is not None and result.termination.reason == "completed"


async def test_auto_is_left_alone() -> None:
    choices: list[Any] = []
    agent = Agent(ScriptedModel(_recording(choices)), "", [find_customer])
    await agent.run("Who is Ada?")
    assert choices == ["auto", "auto"]


async def test_structured_output_keeps_requiring_a_call() -> None:
    """There the answer is itself a call (the output tool), so the loop keeps "required"."""
    class Answer(pydantic.BaseModel):
        customer: str

    choices: list[Any] = []

    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        if not any(m.role == "tool" for m in messages):
            return call("find_customer", {"name": "Ada"})
        return call("final_result", {"customer": "C-1"})

    agent = Agent(ScriptedModel(policy), "", [find_customer], output=Answer)
    result = await agent.run("Who is Ada?")
    assert result.output == Answer(customer="C-1")
    assert choices == ["required", "required"]


class _Forcing:
    """A tool selection asking every run to begin with a call, keeping only ``kept``."""

    def __init__(self, kept: set[str], first: str = "required") -> None:
        self.kept = kept
        self.first = first

    def select(self, task: str, tools: Any, keep: frozenset[str] = frozenset()) -> Any:
        return tuple(d for d in tools if d.name in self.kept)

    def first_call(self, task: str, offered: frozenset[str]) -> str | None:
        return self.first


@pytest.mark.parametrize(("kept", "expected"), [({"find_customer"}, ["required", "auto"]),
                                                (set(), ["auto"])])
async def test_a_selection_may_require_the_first_call_only_when_a_tool_is_offered(
        kept: set[str], expected: list[str]) -> None:
    """With no tool left to call, "required" is a request providers refuse (found by the
    engine fuzzer), so the first call is not forced."""
    choices: list[Any] = []

    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        if settings.tools and not any(m.role == "tool" for m in messages):
            return call("find_customer", {"name": "Ada"})
        return "Ada is C-1."

    agent = Agent(ScriptedModel(policy), "", [find_customer], tool_selection=_Forcing(kept))
    result = await agent.run("Who is Ada?")
    assert result.output == "Ada is C-1." and choices == expected


@pytest.mark.parametrize(("first", "expected"), [("find_customer", ["find_customer", "auto"]),
                                                 ("no_such_tool", ["auto", "auto"])])
async def test_a_selection_may_name_the_first_call_only_among_the_offered_tools(
        first: str, expected: list[str]) -> None:
    choices: list[Any] = []

    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        if not any(m.role == "tool" for m in messages):
            return call("find_customer", {"name": "Ada"})
        return "Ada is C-1."

    agent = Agent(ScriptedModel(policy), "", [find_customer],
                  tool_selection=_Forcing({"find_customer"}, first))
    result = await agent.run("Who is Ada?")
    assert result.output == "Ada is C-1." and choices == expected

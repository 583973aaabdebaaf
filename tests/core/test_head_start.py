"""The head start (toolcycle.run.head_start): a call the run's tool selection makes before the
first model request, answered, traced, counted and limited like the model's own."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Cancelled, Limits, Message, tool
from toolcycle.context import RunContext
from toolcycle.messages import ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.run.head_start import HEAD_START_ID


def find_customer(name: str) -> str:
    """Look a customer up by name."""
    if name == "boom":
        raise RuntimeError("directory down")
    return f"{name} is customer C-1"


class _Head:
    """A tool selection keeping every tool and making ``head`` first (None: no head start)."""

    def __init__(self, head: tuple[str, dict[str, Any]] | None,
                 done: bool = False) -> None:
        self.head = head
        self.done = done
        self.asked: list[tuple[str, frozenset[str]]] = []

    def select(self, task: str, tools: Any, keep: frozenset[str] = frozenset()) -> Any:
        return tuple(tools)

    def head_start(self, task: str, offered: frozenset[str]) -> tuple[str, dict[str, Any]] | None:
        self.asked.append((task, offered))
        return self.head

    def answer_when(self, task: str, offered: frozenset[str], answered_for: frozenset[str]
                    ) -> Any:
        return (lambda trace: bool(trace.tool_calls)) if self.done else None


SEEN: list[list[Message]] = []
CHOICES: list[Any] = []


def answering(messages: list[Message], settings: ModelSettings) -> Any:
    """Answers from a result about Ada; calls find_customer("Ada") itself otherwise."""
    SEEN.append(list(messages))
    CHOICES.append(settings.tool_choice)
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if results and results[-1] == "Ada is customer C-1":
        return f"Found: {results[-1]}"
    return call("find_customer", {"name": "Ada"})


def _answered(messages: list[Message]) -> list[str]:
    """The call ids the history's tool results answer, in order."""
    return [p.call_id for m in messages for p in m.parts if isinstance(p, ToolResult)]


def _agent(head: tuple[str, dict[str, Any]] | None, **kwargs: Any) -> Agent[Any, str]:
    SEEN.clear()
    CHOICES.clear()
    tools = kwargs.pop("tools", [tool(find_customer, read_only=True)])
    return Agent(ScriptedModel(answering), "Answer with the tools.", tools,
                 tool_selection=kwargs.pop("selection", _Head(head)), **kwargs)


async def test_the_call_is_made_before_the_first_request_and_the_model_reads_it() -> None:
    result = await _agent(("find_customer", {"name": "Ada"})).run("Who is Ada?")
    assert result.output == "Found: Ada is customer C-1"
    # one model request, which saw the call and its result as the first turn's
    assert result.iterations == 1 and result.usage.requests == 1
    assert [m.role for m in SEEN[0]] == ["system", "user", "assistant", "tool"]
    [made] = SEEN[0][2].tool_calls
    assert made.id.startswith(HEAD_START_ID) and made.arguments == {"name": "Ada"}
    assert SEEN[0][2].text == ""
    # traced as iteration 0, counted as a call, answered once
    assert [s.iteration for s in result.trace.steps] == [0, 1]
    [record] = result.tool_calls
    assert (record.name, record.iteration, record.result) == (
        "find_customer", 0, "Ada is customer C-1")
    assert result.usage.tool_calls == 1 and result.trace.iterations == 1
    ids = [c.id for m in result.messages for c in m.tool_calls]
    assert ids == _answered(result.messages) == [made.id]


async def test_a_history_passed_back_holds_it_and_the_next_run_makes_its_own() -> None:
    agent = _agent(("find_customer", {"name": "Ada"}))
    first = await agent.run("Who is Ada?")
    second = await agent.run("And Ada again?", message_history=first.messages)
    ids = [c.id for m in second.messages for c in m.tool_calls]
    assert len(ids) == len(set(ids)) == 2  # one per run, never the same id


@pytest.mark.parametrize("head", [None, ("no_such_tool", {"name": "Ada"})])
async def test_no_head_start_without_one_or_for_a_tool_not_offered(
        head: tuple[str, dict[str, Any]] | None) -> None:
    result = await _agent(head).run("Who is Ada?")
    assert [s.iteration for s in result.trace.steps] == [1, 2]
    assert result.tool_calls[0].iteration == 1


async def test_none_where_a_call_can_need_approval() -> None:
    """The approval is a person's decision about a call the model asked for."""
    gated = tool(find_customer, read_only=True, requires_approval=True)
    await _agent(("find_customer", {"name": "Ada"}), tools=[gated]).run("Who is Ada?")
    assert [m.role for m in SEEN[0]] == ["system", "user"]  # the model's request came first


async def test_refused_arguments_are_an_observation_and_the_model_goes_on() -> None:
    result = await _agent(("find_customer", {"nme": "Ada"})).run("Who is Ada?")
    first, second = result.tool_calls
    assert first.iteration == 0 and first.error is not None and "name" in first.error
    assert second.iteration == 1 and second.result == "Ada is customer C-1"
    assert result.output == "Found: Ada is customer C-1" and result.iterations == 2


async def test_a_failing_tool_is_an_observation_and_the_model_goes_on() -> None:
    result = await _agent(("find_customer", {"name": "boom"})).run("Who is boom?")
    first = result.tool_calls[0]
    assert first.iteration == 0 and first.error is not None and "directory down" in first.error
    assert result.output == "Found: Ada is customer C-1"


async def test_the_runs_tool_call_limit_counts_it() -> None:
    """The head start takes the one call allowed: the limit is reached, and the model is
    asked for its answer with the tools withdrawn."""
    agent = _agent(("find_customer", {"name": "Bob"}),
                   limits=Limits(max_tool_calls=1, max_iterations=2))
    result = await agent.run("Who is Ada?")
    first, second = result.tool_calls[:2]
    assert first.iteration == 0 and first.result == "Bob is customer C-1"
    assert second.error == "Tools are disabled now: answer directly."
    assert result.termination is not None and result.termination.reason == "max_tool_calls"


async def test_a_selection_saying_the_calls_are_done_has_the_first_request_ask_the_answer(
        ) -> None:
    selection = _Head(("find_customer", {"name": "Ada"}), done=True)
    result = await _agent(None, selection=selection).run("Who is Ada?")
    assert CHOICES == ["none"] and result.iterations == 1


async def test_a_cancel_inside_the_head_start_keeps_history_trace_and_usage() -> None:
    def cancelling(ctx: RunContext[Any], name: str) -> str:
        """Look a customer up, and cancel the run."""
        ctx.cancel_token.cancel("stop")
        return "Ada is customer C-1"

    agent = _agent(("cancelling", {"name": "Ada"}),
                   tools=[tool(cancelling, read_only=True)])
    with pytest.raises(Cancelled) as caught:
        await agent.run("Who is Ada?")
    partial = caught.value.result
    assert partial is not None and SEEN == []  # no model request was made
    ids = [c.id for m in partial.messages for c in m.tool_calls]
    assert ids == _answered(partial.messages) and len(ids) == 1
    assert partial.trace.tool_calls[0].iteration == 0 and partial.usage.tool_calls == 1
    assert partial.trace.status == "cancelled"

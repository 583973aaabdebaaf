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


# -- AnswerWhenDone: the answer asked for once the selection's calls are done --------------


def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return "" if order_id == "none" else f"order {order_id}: shipped"


class _DoneAfter:
    """A tool selection whose run is done once ``tool`` has returned something."""

    def __init__(self, tool: str, seen: list[frozenset[str]] | None = None) -> None:
        self.tool = tool
        self.seen = seen if seen is not None else []

    def select(self, task: str, tools: Any, keep: frozenset[str] = frozenset()) -> Any:
        return tuple(tools)

    def answer_when(self, task: str, offered: frozenset[str], answered_for: frozenset[str]
                    ) -> Any:
        self.seen.append(answered_for)
        return lambda trace: any(c.name == self.tool and c.error is None and c.result
                                 for c in trace.tool_calls)


def _wandering(choices: list[Any], calls: list[dict[str, str]]) -> Any:
    """A model that makes ``calls`` in turn, then answers; under "none" it answers at once."""
    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        made = sum(1 for m in messages if m.role == "tool")
        if settings.tool_choice == "none" or made >= len(calls):
            return "The order shipped."
        return call("lookup_order" if "order_id" in calls[made] else "find_customer",
                    calls[made])
    return policy


async def test_the_answer_is_asked_for_once_the_selections_calls_are_done() -> None:
    choices: list[Any] = []
    model = ScriptedModel(_wandering(choices, [{"name": "Ada"}, {"order_id": "7"},
                                               {"name": "Bob"}, {"name": "Cy"}]))
    agent = Agent(model, "", [find_customer, lookup_order],
                  tool_selection=_DoneAfter("lookup_order"))
    result = await agent.run("Where is order 7?")
    assert result.output == "The order shipped."
    assert choices == ["auto", "auto", "none"]  # not the two wandering calls after it
    assert [c.name for c in result.trace.tool_calls] == ["find_customer", "lookup_order"]
    # the trace says which request asked for the answer, in every form it takes
    from toolcycle.tracing.trace import Trace

    assert [step.tool_choice for step in result.trace.steps] == [None, None, "none"]
    assert "iteration 3 (tool_choice none)" in result.trace.render()
    again = Trace.from_dict(result.trace.to_dict())
    assert again.steps[2].tool_choice == "none" and again.steps[0].tool_choice is None


async def test_a_call_that_found_nothing_leaves_the_model_free() -> None:
    choices: list[Any] = []
    model = ScriptedModel(_wandering(choices, [{"order_id": "none"}, {"name": "Ada"}]))
    agent = Agent(model, "", [find_customer, lookup_order],
                  tool_selection=_DoneAfter("lookup_order"))
    result = await agent.run("Where is order 7?")
    assert choices == ["auto", "auto", "auto"] and result.output == "The order shipped."


async def test_structured_output_is_never_asked_to_answer_without_its_call() -> None:
    """There the answer is itself a call: "none" would leave the run no way to end."""

    class Answer(pydantic.BaseModel):
        status: str

    choices: list[Any] = []

    def policy(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        if not any(m.role == "tool" for m in messages):
            return call("lookup_order", {"order_id": "7"})
        return call("final_result", {"status": "shipped"})

    agent = Agent(ScriptedModel(policy), "", [lookup_order], output=Answer,
                  tool_selection=_DoneAfter("lookup_order"))
    result = await agent.run("Where is order 7?")
    assert result.output == Answer(status="shipped") and "none" not in choices


async def test_stand_ins_are_named_to_the_test_and_none_under_an_approval_policy() -> None:
    """The selection is told which tools its stand-ins answer (none where a policy must see
    every call), so a routine standing in for a tool is not taken for the tool itself."""
    from toolcycle import Tool
    from toolcycle.approval import Approve

    class _Standing(_DoneAfter):
        def stand_ins(self, task: str, offered: frozenset[str]) -> dict[str, Tool[Any]]:
            return {"lookup_order": Tool.from_function(lookup_order)}

    seen: list[frozenset[str]] = []
    model = ScriptedModel(["Shipped."])
    await Agent(model, "", [lookup_order], tool_selection=_Standing("x", seen)).run("Order 7?")
    approving = Agent(ScriptedModel(["Shipped."]), "", [lookup_order],
                      tool_selection=_Standing("x", seen), approval=lambda ctx, request: Approve())
    await approving.run("Order 7?")
    assert seen == [frozenset({"lookup_order"}), frozenset()]


async def test_calls_made_despite_the_answer_request_are_run_and_asked_again() -> None:
    """A model that ignores "none" (no grammar holds a text protocol, a provider may too)
    has its calls run as on any request (only the limit's forced request refuses them), and
    the next request asks for the answer again."""
    choices: list[Any] = []

    def stubborn(messages: list[Message], settings: Settings) -> Any:
        choices.append(settings.tool_choice)
        made = sum(1 for m in messages if m.role == "tool")
        if made < 3:
            return call("lookup_order", {"order_id": str(7 + made)})
        return "Order 7 shipped."

    agent = Agent(ScriptedModel(stubborn), "", [lookup_order],
                  tool_selection=_DoneAfter("lookup_order"))
    result = await agent.run("Where is order 7?")
    assert choices == ["auto", "none", "none", "none"]
    assert [c.result for c in result.trace.tool_calls] == [
        "order 7: shipped", "order 8: shipped", "order 9: shipped"]
    assert result.output == "Order 7 shipped."

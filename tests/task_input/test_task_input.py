"""Typed task input: validation errors, templates, callable instructions, ctx.input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from toolcycle import Agent, ConfigurationError, InputError, RunContext
from toolcycle.models.scripted import ScriptedModel, call


class Customer(BaseModel):
    name: str
    tier: str = "basic"


class Ticket(BaseModel):
    title: str
    priority: int
    customer: Customer
    tags: list[str] = []


TICKET = {"title": "Printer on fire", "priority": 1, "customer": {"name": "Ada"},
          "tags": ["hardware"]}


def test_template_instructions_and_the_input_as_the_prompt() -> None:
    model = ScriptedModel(["triaged"])
    agent = Agent(model, "Triage ticket {title} from {customer.name} ({customer.tier}, "
                         "first tag {tags.0}); {{braces}} stay", input_type=Ticket)
    result = agent.run_sync(input=TICKET)
    system, user = result.messages[:2]
    assert system.text == ("Triage ticket Printer on fire from Ada (basic, first tag hardware);"
                           " {braces} stay")
    assert json.loads(user.text) == {**TICKET, "customer": {"name": "Ada", "tier": "basic"}}
    assert result.trace.user_prompt == user.text


def test_a_prompt_given_with_the_input_is_the_user_message() -> None:
    agent = Agent(ScriptedModel(["ok"]), "About {title}.", input_type=Ticket)
    result = agent.run_sync("Summarise it.", input=Ticket.model_validate(TICKET))
    assert [m.text for m in result.messages[:2]] == ["About Printer on fire.", "Summarise it."]


def test_every_input_problem_is_listed_and_nothing_is_sent() -> None:
    model = ScriptedModel(["unused"])
    agent = Agent(model, "x", input_type=Ticket)
    with pytest.raises(InputError) as info:
        agent.run_sync(input={"title": 3, "customer": {}})
    problems = info.value.problems
    assert problems == ["title: Input should be a valid string", "priority: Field required",
                        "customer.name: Field required"]
    assert "input for Ticket (3 problem(s))" in str(info.value)
    assert model.requests == []
    with pytest.raises(InputError, match="takes input="):
        agent.run_sync("no input")
    with pytest.raises(InputError, match="needs an agent with input_type"):
        Agent(ScriptedModel(["x"])).run_sync("hi", input={"a": 1})


def test_callable_instructions_read_the_input_and_deps_from_the_context() -> None:
    seen: list[Any] = []

    def instructions(ctx: RunContext[str]) -> str:
        return f"{ctx.deps}: handle {ctx.input.title}"

    def look(ctx: RunContext[str]) -> str:
        """Look at the ticket."""
        seen.append(ctx.input)
        return "looked"

    agent = Agent(ScriptedModel([call("look"), "done"]), instructions, tools=[look],
                  input_type=Ticket)
    result = agent.run_sync(input=TICKET, deps="desk 4")
    assert result.messages[0].text == "desk 4: handle Printer on fire"
    assert isinstance(seen[0], Ticket) and seen[0].customer.name == "Ada"
    # without input_type, a callable gets the context too
    plain = Agent(ScriptedModel(["ok"]), lambda ctx: f"run {ctx.agent_name}", name="helper")
    assert plain.run_sync("hi").messages[0].text == "run helper"


def test_dataclass_and_typeddict_inputs() -> None:
    @dataclass
    class Point:
        x: int
        y: int

    class Query(TypedDict):
        q: str

    point = Agent(ScriptedModel(["ok"]), "At {x},{y}", input_type=Point)
    assert point.run_sync(input={"x": 1, "y": "2"}).messages[0].text == "At 1,2"
    query = Agent(ScriptedModel(["ok"]), "Search {q}", input_type=Query)
    assert query.run_sync(input={"q": "cats"}).messages[0].text == "Search cats"


@pytest.mark.parametrize("template, problem", [
    ("{title.__class__}", "dotted path"),
    ("{0}", "dotted path"),
    ("{title[0]}", "dotted path"),
    ("{nope}", "no field 'nope'"),
    ("{customer.email}", "no field 'customer.email'"),
    ("{title:>99999999}", "widths under 1000"),
    ("{title!a}", "conversion"),
    ("{title", "literal brace"),
])
def test_unsafe_or_wrong_templates_fail_at_construction(template: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        Agent(ScriptedModel(["x"]), template, input_type=Ticket)


def test_configuration_problems_are_reported_together() -> None:
    with pytest.raises(ConfigurationError) as info:
        Agent(ScriptedModel(["x"]), "{nope} {title.x.__init__}", input_type=Ticket)
    assert len(info.value.problems) == 2
    with pytest.raises(ConfigurationError, match="callable instructions"):
        Agent(ScriptedModel(["x"]), lambda: "no ctx")  # type: ignore[arg-type,misc]
    with pytest.raises(ConfigurationError, match="has no JSON Schema"):
        Agent(ScriptedModel(["x"]), "x", input_type=object())  # type: ignore[arg-type]


def test_instructions_callable_must_return_text() -> None:
    agent = Agent(ScriptedModel(["x"]), lambda ctx: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigurationError, match="must return a string"):
        agent.run_sync("hi")


def test_the_agent_is_typed_by_its_input() -> None:
    agent = Agent(ScriptedModel(["x"]), "t {title}", input_type=Ticket)
    if False:  # a type check only: reveal_type(agent) is Agent[Any, str, Ticket]
        agent.run_sync(input=Ticket.model_validate(TICKET))
    assert agent.input_type is Ticket

"""Options a parameter's description lists, and the one a task names: a failed call with a
value the task never wrote is made again with that option (toolcycle.playbook.respell, used
by the respelling stand-in of toolcycle.playbook.respell)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcycle import Agent, Message, RunContext, tool
from toolcycle.context import CancelToken
from toolcycle.messages import Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.evidence import Repair
from toolcycle.playbook.reflector import pitfall_advice
from toolcycle.playbook.respell import (
    described_options,
    named_options,
    respelled_call,
    respelling_tool,
    respelling_tools,
)
from toolcycle.playbook.strategy import Strategy

MINUTES = {"network": [15, 60, 240, 1440], "desktop": [30, 120, 480, 1440]}
LEGEND = "unknown priority …: give a P-code, P1 (critical), P2 (high), P3 (medium) or P4 (low)"


def sla_target(priority: str, team: str) -> str:
    """The response-time target for a ticket of one priority handled by one team.

    Args:
        priority: The ticket's priority.
        team: The team handling it (network, desktop, security, ...).
    """
    name = next((t for t in MINUTES if t in team.lower()), None)
    if name is None:
        raise KeyError(f"no team {team!r}")
    if priority not in {"P1", "P2", "P3", "P4"}:
        raise ValueError(f"unknown priority {priority!r}: give a P-code, P1 (critical), "
                         "P2 (high), P3 (medium) or P4 (low)")
    return json.dumps({"team": name, "response_minutes": MINUTES[name][int(priority[1]) - 1]})


SLA = tool(sla_target, read_only=True)
TASK = "What is the response time target for a low-priority desktop ticket?"


@pytest.mark.parametrize(("description", "options"), [
    ("The team handling it (network, desktop, security, ...).",
     ["network", "desktop", "security"]),
    ("The unit, one of: celsius, fahrenheit or kelvin.", ["celsius", "fahrenheit", "kelvin"]),
    ("A region such as `eu-west`, `us-east`.", ["eu-west", "us-east"]),
    ('Sort order, e.g. "newest" or "oldest".', ["newest", "oldest"]),
    ("The channel (email | sms | push)", ["email", "sms", "push"]),
    ("Kind (a, b) or kind (B, c)", ["a", "b", "c"]),  # once each, any case
    ("The team handling it.", []),
    ("A date like 2026-01-31.", []),  # one example is no list of options
    ("Free text (any words you like, really, as long as they are shorter than five words "
     "each, or longer ones)", []),  # not short plain terms
    ("(...)", []), ("", []), ("(, , ,)", []), ("{}", []), ("[]", []), ("null", []),
])
def test_the_options_a_description_lists(description: str, options: list[str]) -> None:
    assert described_options(description) == options


def test_a_hostile_description_costs_bounded_work() -> None:
    assert described_options("(" + "a," * 200_000) == []
    assert described_options("x" * 5000 + " (network, desktop)") == []  # past what is read


@pytest.mark.parametrize(("arguments", "prompt", "expected"), [
    ({"priority": "P4", "team": "IT"}, TASK, {"priority": "P4", "team": "desktop"}),
    ({"priority": "P4", "team": "IT"}, "Target for a low Desktop ticket?",
     {"priority": "P4", "team": "desktop"}),  # the option as the description spells it
    ({"priority": "P4", "team": "IT"}, "network or desktop: which is faster?",
     {"priority": "P4", "team": "IT"}),  # two options named: no guess
    ({"priority": "P4", "team": "IT"}, "What is the target for an IT ticket?",
     {"priority": "P4", "team": "IT"}),  # the task wrote the value itself
    ({"priority": "P4", "team": "IT"}, "What does the desktops team promise?",
     {"priority": "P4", "team": "IT"}),  # "desktops" is not the whole word "desktop"
    ({"priority": "P4", "team": "IT"}, "", {"priority": "P4", "team": "IT"}),
    ({"priority": "P4", "team": ""}, TASK, {"priority": "P4", "team": ""}),
    ({"priority": "P4", "team": None}, TASK, {"priority": "P4", "team": None}),
    ({"priority": "P4", "team": ["IT"]}, TASK, {"priority": "P4", "team": ["IT"]}),
    ({"priority": "P4", "team": "IT", "extra": "x"}, TASK,
     {"priority": "P4", "team": "desktop", "extra": "x"}),  # a key the schema lacks is kept
])
def test_the_one_option_a_task_names_replaces_a_value_it_does_not_write(
        arguments: dict[str, Any], prompt: str, expected: dict[str, Any]) -> None:
    assert named_options(arguments, SLA, prompt) == expected


def _ctx(prompt: str | None) -> RunContext[Any]:
    return RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(), prompt=prompt)


async def test_a_failed_call_is_made_again_with_the_option_the_task_names() -> None:
    respelling = respelling_tool(SLA)
    assert respelling is not None
    text = await respelling.invoke(_ctx(TASK), {"priority": "P4", "team": "IT"})
    assert text.startswith("sla_target failed (KeyError: \"no team 'IT'\") for team \"IT\"; "
                           'called it again with team "desktop" as the task wrote it')
    assert text.endswith('{"team": "desktop", "response_minutes": 1440}')
    assert respelled_call("sla_target", text)
    with pytest.raises(KeyError, match="'IT'"):  # the task names two options
        await respelling.invoke(_ctx("network or desktop, low priority?"),
                                {"priority": "P4", "team": "IT"})
    with pytest.raises(KeyError, match="'IT'"):  # the task names none
        await respelling.invoke(_ctx("What is the low-priority target?"),
                                {"priority": "P4", "team": "IT"})


def _pitfall(legend: bool) -> Strategy:
    if legend:  # an argument lesson: its reshaped call wraps the respelling one
        repair = Repair("argument", "sla_target", argument="priority", example="P4")
        return Strategy(id="p", domain="helpdesk", kind="pitfall", applies_when=["priority"],
                        advice=pitfall_advice("sla_target", LEGEND, repair, timeout=False),
                        tools=["sla_target"], support=3, detail=f"{LEGEND}|{repair.signature}",
                        error_class=LEGEND, repair=repair)
    return Strategy(id="q", domain="helpdesk", kind="pitfall", applies_when=["ticket"],
                    advice="sla_target fails with: no team …. Check the arguments.",
                    tools=["sla_target"], support=3, detail="no team …", error_class="no team …")


def _run_with(strategy: Strategy, arguments: dict[str, Any]) -> Agent[Any, str]:
    pb = Playbook(":memory:", routines=True, learn=False)
    pb.store.put([strategy])

    def model(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("sla_target", arguments)
        return str(getattr(results[-1], "content", "")).splitlines()[-1]

    return Agent(ScriptedModel(model), "Answer with the tools.", [SLA], name="helpdesk",
                 playbook=pb)


SEQUENCE = Strategy(id="s", domain="helpdesk", kind="sequence", applies_when=["ticket"],
                    advice="Call sla_target(priority, team), then answer.",
                    tools=["sla_target"], support=3)


async def test_a_sequences_tool_gets_the_repair() -> None:
    assert set(respelling_tools([SEQUENCE], {"sla_target": SLA})) == {"sla_target"}
    result = await _run_with(SEQUENCE, {"priority": "P4", "team": "IT"}).run(TASK)
    [record] = result.trace.tool_calls
    assert record.error is None and respelled_call("sla_target", record.result)
    assert result.output == '{"team": "desktop", "response_minutes": 1440}'


async def test_a_pitfall_that_reshapes_no_argument_makes_no_repair() -> None:
    """Its tool may have a fallback to another tool (toolcycle.playbook.fallback), which a
    repair standing in for the same tool would shadow."""
    assert respelling_tools([_pitfall(legend=False)], {"sla_target": SLA}) == {}
    result = await _run_with(_pitfall(legend=False), {"priority": "P4", "team": "IT"}).run(TASK)
    assert "no team 'IT'" in (result.trace.tool_calls[0].error or "")


async def test_a_reshaped_call_and_an_option_mend_one_call_together() -> None:
    """"low" is reshaped to its code by the lesson, "IT" to the option the task names."""
    result = await _run_with(_pitfall(legend=True), {"priority": "low", "team": "IT"}).run(TASK)
    [record] = result.trace.tool_calls
    assert record.error is None and record.result is not None
    assert respelled_call("sla_target", record.result)  # the outer call's report first
    assert 'called it again with priority "P4"' in record.result
    assert 'called it again with team "desktop"' in record.result
    assert result.output == '{"team": "desktop", "response_minutes": 1440}'


async def test_a_call_that_worked_is_the_tools_own() -> None:
    result = await _run_with(_pitfall(legend=True), {"priority": "P4", "team": "network"}
                             ).run(TASK)
    [record] = result.trace.tool_calls
    assert record.result == sla_target("P4", "network")  # a wrong team, but no failure


@pytest.mark.parametrize(("budget", "mended"), [(3, True), (2, False)])
async def test_each_call_the_repairs_make_counts_once_against_the_budget(
        budget: int, mended: bool) -> None:
    """(low, IT): the model's call, then (low, desktop), then (P4, desktop): three calls of
    the tool, each counted once though two stand-ins are nested."""
    from toolcycle.limits import Limits

    agent = _run_with(_pitfall(legend=True), {"priority": "low", "team": "IT"})
    result = await agent.run(TASK, limits=Limits(max_tool_calls=budget))
    [record] = result.trace.tool_calls
    assert (record.error is None) is mended, record.error


def test_a_schemas_enum_is_the_options_whatever_its_description_says() -> None:
    """The typed list comes first, in any language; a description in another language
    names no options the word lists could read."""
    from toolcycle import Tool
    schema = {"type": "object", "required": ["équipe"], "properties": {"équipe": {
        "type": "string", "enum": ["réseau", "poste", "sécurité"],
        "description": "L'équipe qui traite le ticket"}}}
    guichet = Tool.from_schema("sla", "Délai de réponse.", schema, lambda **kw: "ok")
    assert named_options({"équipe": "IT"}, guichet, "Délai pour un ticket poste urgent ?") == {
        "équipe": "poste"}
    assert named_options({"équipe": "IT"}, guichet, "Délai pour un ticket urgent ?") == {
        "équipe": "IT"}  # the task names none of them

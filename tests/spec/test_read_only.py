"""Agent specs declare lookups read-only per tool, in JSON and gram alike, and binding honours
it (issue 69: declaring a lookup read_only is the natural path, so that the playbook's probes
and routines can run)."""

from __future__ import annotations

import pytest

from toolcycle import Tool, tool
from toolcycle.models.scripted import ScriptedModel
from toolcycle.spec import AgentSpec, SpecError
from toolcycle.spec.gram_format import dump_gram, load_gram

JSON = """{"name": "desk", "instructions": "Look things up.", "tools": [
 {"name": "find_order", "read_only": true, "parameters": {"type": "object",
  "properties": {"customer": {"type": "string"}}, "required": ["customer"]}},
 {"name": "cancel_order", "parameters": {"type": "object",
  "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}]}"""


def find_order(customer: str) -> str:
    return f"order of {customer}: O-1"


def cancel_order(order_id: str) -> str:
    return f"cancelled {order_id}"


def test_json_declares_read_only_per_tool_and_writes_it_back() -> None:
    spec = AgentSpec.from_json(JSON)
    assert spec.read_only == ["find_order"]
    tools = {t["name"]: t for t in spec.to_dict()["tools"]}
    assert tools["find_order"]["read_only"] is True and "read_only" not in tools["cancel_order"]
    assert AgentSpec.from_json(spec.to_json()) == spec


def test_gram_declares_read_only_per_tool_and_round_trips() -> None:
    spec = AgentSpec.from_json(JSON)
    text = dump_gram(spec)
    assert "read_only: true" in text
    assert load_gram(text) == spec
    assert load_gram("""[desk:Agent |
  [find_order:Tool {read_only: true} |
    (customer::String)==>(::String)
  ]
]""").read_only == ["find_order"]


def test_binding_makes_the_declared_tools_read_only_and_no_others() -> None:
    spec = AgentSpec.from_json(JSON)
    agent = spec.bind([find_order, cancel_order], model=ScriptedModel(["ok"]))
    assert agent.tools["find_order"].policy.read_only
    assert not agent.tools["cancel_order"].policy.read_only


def test_the_implementations_other_policies_are_kept() -> None:
    slow = Tool.from_function(find_order, timeout=3.0, max_calls=2)
    agent = AgentSpec.from_json(JSON).bind([slow, cancel_order], model=ScriptedModel(["ok"]))
    policy = agent.tools["find_order"].policy
    assert policy.read_only and policy.timeout == 3.0 and policy.max_calls == 2
    # a library that already declares it read-only stays so, whatever the spec says
    declared = tool(read_only=True)(cancel_order)
    agent = AgentSpec.from_json(JSON).bind([find_order, declared], model=ScriptedModel(["ok"]))
    assert agent.tools["cancel_order"].policy.read_only


@pytest.mark.parametrize("bad", ['"yes"', "1", "null"])
def test_read_only_must_be_a_boolean(bad: str) -> None:
    with pytest.raises(SpecError, match="'read_only' must be true or false"):
        AgentSpec.from_json(JSON.replace('"read_only": true', f'"read_only": {bad}'))
    with pytest.raises(SpecError, match="read_only must be true or false"):
        load_gram('[desk:Agent |\n  [find_order:Tool {read_only: "yes"} |\n'
                  '    (customer::String)==>(::String)\n  ]\n]')


def test_read_only_naming_no_tool_of_the_spec_is_an_error() -> None:
    spec = AgentSpec.from_json(JSON)
    spec.read_only.append("refund")
    with pytest.raises(SpecError, match="'refund', which is no tool of the spec"):
        spec.check_tools()

"""Agent specs (gram and JSON) reference an agent offered as a tool by its name: the spec
declares the tool and the input it takes, the tool library holds ``agent.as_tool()``."""

from __future__ import annotations

import json

import pytest

from toolcycle import Agent, AgentSpec, ConfigurationError, ToolLibrary
from toolcycle.testing import ScriptedModel, call

from .helpers import check_team

GRAM = """
[lead:Agent {
  description: "Writes answers with the researcher's facts",
  instruction: "Ask the researcher, then answer."
} |
  [researcher:Tool {
    description: "Researches a question"
  } |
    (input::String)==>(::String)
  ]
]
"""

JSON = json.dumps({
    "name": "lead", "instructions": "Ask the researcher, then answer.",
    "tools": [{"name": "researcher", "description": "Researches a question",
               "parameters": {"type": "object", "properties": {"input": {"type": "string"}},
                              "required": ["input"]}}],
})


def _library() -> ToolLibrary:
    researcher = Agent(ScriptedModel(["fact: 42"]), name="researcher")
    return ToolLibrary([researcher.as_tool()])


@pytest.mark.parametrize("spec", [AgentSpec.from_gram(GRAM), AgentSpec.from_json(JSON)],
                         ids=["gram", "json"])
async def test_a_spec_binds_an_agent_as_a_tool_by_name(spec: AgentSpec) -> None:
    model = ScriptedModel([call("researcher", {"input": "the answer?"}), "It is 42."])
    lead = spec.bind(_library(), model=model)
    result = await lead.run("what is the answer?")
    assert result.output == "It is 42."
    assert [r.agent_name for r in result.runs] == ["researcher"]
    assert result.tool_calls[0].result == "fact: 42"
    check_team(result)


def test_a_spec_whose_input_the_agent_does_not_take_is_refused() -> None:
    data = json.loads(JSON)
    data["tools"][0]["parameters"] = {"type": "object", "properties": {"query": {
        "type": "string"}}, "required": ["query"]}
    with pytest.raises(ConfigurationError, match="query"):
        AgentSpec.from_json(json.dumps(data)).bind(_library(), model=ScriptedModel(["x"]))

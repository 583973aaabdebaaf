"""A real local model (Qwen2.5-Coder-1.5B, llama.cpp in process, temperature 0) calls an MCP
server's tool (the SDK's quickstart server) and answers from its result."""

from __future__ import annotations

import json

import pytest
from conftest import PYTHON, SDK_EXAMPLE

from toolcycle import Agent, Limits
from toolcycle.mcp import MCPTools
from toolcycle.models import ModelSettings
from toolcycle.models.local.llama import DEFAULT_SEED

pytestmark = pytest.mark.real_model


async def test_local_model_calls_an_mcp_tool() -> None:
    tools = [MCPTools.stdio(PYTHON, SDK_EXAMPLE)]
    agent = Agent("local:qwen2.5-coder-1.5b", "Use the tools to answer.", tools=tools,
                  limits=Limits(max_iterations=3),
                  model_settings=ModelSettings(temperature=0.0, seed=DEFAULT_SEED))
    async with agent:
        result = await agent.run("What is 1234 + 4321? Use the add tool.")
    first = result.tool_calls[0]
    assert first.name == "add" and first.error is None, result.trace.render()
    assert first.args == {"a": 1234, "b": 4321}
    assert json.loads(first.result or "") == {"result": 5555}
    assert "5555" in result.output.replace(",", ""), result.trace.render()

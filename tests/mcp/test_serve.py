"""`toolcycle mcp serve`: a bound spec's tools and the agent itself, served by the SDK's own
server, driven by the SDK's own client and by toolcycle's, over stdio and streamable HTTP."""

from __future__ import annotations

import re
import shlex
import signal
import sys
from collections.abc import Iterator

import pytest
from conftest import ROOT, free_port, http_server
from mcp import Client, StdioServerParameters

from toolcycle import Agent
from toolcycle.mcp import MCPTools
from toolcycle.testing import ScriptedModel, call

#: docs/mcp.md's stdio command as written, run by this interpreter, with a scripted model for
#: the agent tool (the spec names an OpenAI model).
DOCUMENTED = re.findall(r"```bash\n(toolcycle mcp serve .*?)\n",
                        (ROOT / "docs" / "mcp.md").read_text())
SERVE = ["-m", *shlex.split(DOCUMENTED[0]), "--model", "python:tests.mcp.serve_model:model"]


async def test_served_over_stdio_to_the_sdk_client() -> None:
    params = StdioServerParameters(command=sys.executable, args=SERVE, cwd=str(ROOT))
    async with Client(params) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"sayHello", "hello_world_agent"}
        assert listed["sayHello"].input_schema["properties"]["personName"]["type"] == "string"
        hello = await client.call_tool("sayHello", {"personName": "Grace"})
        assert not hello.is_error
        assert hello.content[0].text == "Hello, Grace! Nice to meet you."  # type: ignore[union-attr]
        bad = await client.call_tool("sayHello", {"personName": 3})
        assert bad.is_error and "Invalid arguments" in bad.content[0].text  # type: ignore[union-attr]
        ran = await client.call_tool("hello_world_agent", {"input": "Hi, I'm Ada"})
        assert not ran.is_error
        assert ran.content[0].text == "Done: Hello, Ada! Nice to meet you."  # type: ignore[union-attr]


async def test_served_over_stdio_to_toolcycles_client() -> None:
    served = MCPTools.stdio(sys.executable, *SERVE, cwd=ROOT)
    model = ScriptedModel([[call("sayHello", {"personName": "Lin"}),
                            call("hello_world_agent", {"input": "hello"})], "ok"])
    async with Agent(model, tools=[served]) as agent:
        result = await agent.run("greet")
    answers = [p.content for m in result.messages for p in m.parts if p.kind == "tool_result"]
    assert answers == ["Hello, Lin! Nice to meet you.", "Done: Hello, Ada! Nice to meet you."]


@pytest.fixture
def served_http() -> Iterator[str]:
    port = free_port()
    with http_server([sys.executable, *SERVE, "--http", f"127.0.0.1:{port}"], port,
                     signal.SIGINT, cwd=ROOT) as url:
        yield url


async def test_served_over_http_to_both_clients(served_http: str) -> None:
    async with Client(served_http) as client:
        ran = await client.call_tool("hello_world_agent", {"input": "hi"})
        assert ran.content[0].text == "Done: Hello, Ada! Nice to meet you."  # type: ignore[union-attr]
    model = ScriptedModel([call("sayHello", {}), "ok"])
    async with Agent(model, tools=[MCPTools.http(served_http)]) as agent:
        result = await agent.run("greet")
    answers = [p.content for m in result.messages for p in m.parts if p.kind == "tool_result"]
    assert answers == ["Hello, world! Nice to meet you."]


def test_bad_address_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from toolcycle.cli import main

    assert main(["mcp", "serve", "examples/hello_world.gram", "--http", "nowhere"]) == 2
    assert "--http expects HOST:PORT" in capsys.readouterr().err


async def test_served_in_process_outcomes() -> None:
    """The SDK client on the SDK server in-process: structured output, and every failure a
    result with isError (never a dropped connection)."""
    from pydantic import BaseModel

    from toolcycle import tool
    from toolcycle.errors import ConfigurationError
    from toolcycle.mcp.serve import agent_server

    class Sum(BaseModel):
        total: int

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    def broken() -> str:
        """Always fails."""
        raise OSError("disk unplugged")

    model = ScriptedModel([call("final_result", {"total": 3}), "not structured"])
    agent = Agent(model, tools=[add, broken], name="adder", output=Sum)
    async with Client(agent_server(agent)) as client:
        ran = await client.call_tool("adder", {"input": "1+2"})
        assert ran.structured_content == {"total": 3} and not ran.is_error
        failed = await client.call_tool("adder", {"input": "again"})  # no output call
        assert failed.is_error and "The agent failed" in failed.content[0].text  # type: ignore[union-attr]
        assert (await client.call_tool("add", {"a": 2, "b": 2})).content[0].text == "4"  # type: ignore[union-attr]
        crash = await client.call_tool("broken", {})
        assert crash.is_error and "OSError: disk unplugged" in crash.content[0].text  # type: ignore[union-attr]
        bad = await client.call_tool("adder", {"task": "x"})
        assert bad.is_error and "exactly one argument" in bad.content[0].text  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="also one of its tools' names"):
        agent_server(Agent(ScriptedModel([]), tools=[add], name="add"))

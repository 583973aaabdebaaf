"""Durable runs in one process, on the session's throwaway PostgreSQL server: a durable run is
the same run as a plain one (the same messages, observations, usage and errors), each model
request and tool call is a recorded step, a workflow id runs once, and step outputs round-trip
exactly. The kill-and-recover path is tests/durable/test_kill.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from dbos import DBOS
from postgres_cluster import PostgresCluster

from toolcycle import Agent, Limits, MaxIterationsExceeded, Message, Tool, ToolCall, Usage
from toolcycle.durable import DurableAgent
from toolcycle.messages import TextPart, ThinkingPart
from toolcycle.testing import ScriptedModel, call


@pytest.fixture(scope="module")
def dbos_launched(postgres_cluster: PostgresCluster) -> Iterator[None]:
    """DBOS launched on a fresh database of the session's cluster, destroyed afterwards."""
    _drop_closed_log_handlers()
    DBOS(config={"name": "toolcycle-durable-tests", "log_level": "WARNING",
                 "system_database_url": postgres_cluster.create_database()})
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


def _drop_closed_log_handlers() -> None:
    """DBOS flushes its logger's handlers when launched; a handler added while an earlier test
    captured the output (under pytest-xdist, any earlier file in the same worker) writes to a
    stream that capture has closed since, and the flush raises."""
    logger = logging.getLogger("dbos")
    for handler in list(logger.handlers):
        stream = getattr(handler, "stream", None)
        if stream is not None and getattr(stream, "closed", False):
            logger.removeHandler(handler)


def add(a: int, b: int) -> int:
    """Add two integers (sync, on a worker thread)."""
    return a + b


async def fetch(key: str) -> dict[str, Any]:
    """An async tool."""
    await asyncio.sleep(0)
    return {"key": key, "n": [1, 2.5, None]}


def broken(reason: str) -> str:
    """A tool that raises."""
    raise LookupError(f"no such thing: {reason}")


def slow() -> str:
    """A tool that gives up by itself."""
    raise TimeoutError("upstream took too long")


SCRIPT: list[Any] = [
    [call("add", {"a": 2, "b": 3}, id="a1"), call("fetch", {"key": "x"}, id="f1")],
    [call("broken", {"reason": "r"}, id="b1"), call("add", {"a": "two"}, id="a2"),
     call("nope", {}, id="n1"), call("slow", {}, id="s1")],
    "all done",
]


def _agent(name: str) -> tuple[Agent[Any, str, Any], ScriptedModel]:
    model = ScriptedModel(list(SCRIPT))
    tools = [Tool.from_function(add, idempotent=True), Tool.from_function(fetch, concurrent=True),
             broken, slow]
    return Agent(model, "Be brief.", tools, name=name), model


def _comparable(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


@pytest.mark.usefixtures("dbos_launched")
async def test_a_durable_run_is_the_same_run_as_a_plain_one() -> None:
    plain_agent, _ = _agent("same-plain")
    plain = await plain_agent.run("go", run_id="r")
    agent, model = _agent("same")
    durable = await DurableAgent(agent).run("go", workflow_id="same-1")

    assert durable.output == plain.output == "all done"
    assert _comparable(durable.messages) == _comparable(plain.messages)
    assert durable.usage == plain.usage
    assert durable.run_id == "same-1"
    assert [(c.name, c.error, c.result) for c in durable.tool_calls] == [
        (c.name, c.error, c.result) for c in plain.tool_calls]
    assert len(model.requests) == 3

    steps = await DBOS.list_workflow_steps_async("same-1")
    names = [s["function_name"] for s in steps]
    assert names.count("toolcycle.model_request") == 3
    # every executed call is a *started* step and a result step; the invalid and unknown
    # calls never reach a tool, so they are no steps
    assert names.count("toolcycle.tool_started") == 4
    assert sorted(n for n in names if n.startswith("toolcycle.tool:")) == [
        "toolcycle.tool:add", "toolcycle.tool:broken", "toolcycle.tool:fetch",
        "toolcycle.tool:slow"]


@pytest.mark.usefixtures("dbos_launched")
async def test_a_workflow_id_runs_once() -> None:
    agent, model = _agent("once")
    durable = DurableAgent(agent)
    first = await durable.run("go", workflow_id="once-1")
    again = await durable.run("go", workflow_id="once-1")
    fetched = await durable.result("once-1")
    assert len(model.requests) == 3  # the second run and the fetch asked nothing
    assert _comparable(again.messages) == _comparable(fetched.messages) == _comparable(
        first.messages)
    assert again.trace.to_dict() == first.trace.to_dict()


@pytest.mark.usefixtures("dbos_launched")
async def test_a_failed_durable_run_raises_as_a_plain_one_with_its_partial_result() -> None:
    model = ScriptedModel([call("add", {"a": 1, "b": 1}, id="x1")] * 3)
    agent = Agent(model, "", [add], name="fails", limits=Limits(max_iterations=2,
                                                              on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as raised:
        await DurableAgent(agent).run("go", workflow_id="fails-1")
    result = raised.value.result
    assert result is not None and result.usage.requests == 2
    assert result.trace.status == "failure" and len(result.trace.steps) == 2


def test_model_replies_round_trip_exactly_as_step_outputs() -> None:
    """What the model step records (``Message.to_dict``) comes back equal, through pickle (the
    default DBOS serializer) and through JSON."""
    reply = Message("assistant", [
        ThinkingPart("hmm", "sig", None), ThinkingPart("", None, "opaque=="),
        TextPart("Let me look ✓ \u0000 \ud7ff"),
        ToolCall("c1", "add", {"a": 1, "b": [2, {"c": None}]}, '{"a": 1, "b": [2, {"c": null}]}'),
        ToolCall("c2", "add", None, '{"a": 1,', "Expecting value"),
        ToolCall("c3", "_invalid_name", {}, "{}", None, "bad name!", "orig id"),
    ], Usage(10, 5, 3, 2, requests=1, tool_calls=3, reasoning_tokens=4), "tool_calls", "m")
    for copy in (pickle.loads(pickle.dumps(reply.to_dict())),
                 json.loads(json.dumps(reply.to_dict()))):
        assert Message.from_dict(copy) == reply


def test_idempotent_is_a_tool_policy_checked_at_construction() -> None:
    from toolcycle import ConfigurationError, ToolPolicy, tool

    @tool(idempotent=True)
    def read(key: str) -> str:
        """Read a value."""
        return key

    assert read.policy.idempotent and read.bind(lambda key: key).policy.idempotent
    assert not Tool.from_function(add).policy.idempotent
    with pytest.raises(ConfigurationError, match="idempotent must be True or False"):
        Tool.from_function(add, policy=ToolPolicy(idempotent="yes"))  # type: ignore[arg-type]


class _Toolset:
    """A toolset (as an MCP server's tools are): its tools are listed per run."""

    def __init__(self) -> None:
        self.tools = [Tool.from_function(add)]

    async def get_tools(self) -> list[Tool[Any]]:
        return self.tools

    async def close(self) -> None:
        pass


@pytest.mark.usefixtures("dbos_launched")
async def test_a_toolsets_tools_run_as_steps_too() -> None:
    model = ScriptedModel([call("add", {"a": 4, "b": 5}, id="t1"), "9"])
    agent = Agent(model, "", [_Toolset()], name="toolset")
    result = await DurableAgent(agent).run("go", workflow_id="toolset-1")
    assert result.output == "9" and result.tool_calls[0].result == "9"
    names = [s["function_name"] for s in await DBOS.list_workflow_steps_async("toolset-1")]
    assert "toolcycle.tool:add" in names


@pytest.mark.usefixtures("dbos_launched")
async def test_a_forced_durable_run_keeps_its_status() -> None:
    """A durable run a limit forced to answer says so, from the run and from the workflow's
    recorded outcome alike (docs/status.md): before, both said "success"."""
    model = ScriptedModel(lambda _m, s: "a guess" if s.tool_choice == "none"
                          else call("add", {"a": 1, "b": 1}))
    agent = Agent(model, "", [add], name="forced", limits=Limits(max_iterations=1))
    durable = DurableAgent(agent)
    result = await durable.run("go", workflow_id="forced-1")
    assert result.status == "forced" and not result.succeeded and result.output == "a guess"
    fetched = await durable.result("forced-1")
    assert fetched.status == "forced" and fetched.termination.limit == "max_iterations"

"""A paused team resumed and then cancelled before a paused member goes on: the member's run is
closed as well (docs/teams.md, "Pausing for a person").

Each cancel lands while the resumed team is between its resume and the member's: in a callback
on the resume (the run's task cancelled, or its cancel token), or beside a sibling member
resumed in the same concurrent batch. Every agent's run must then end stated ``cancelled`` and
join ``result.runs``, every call id of every history be answered exactly once, the trace and
the usage add up, the snapshot stay consumed, and the approved call not run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolcycle import Agent, CancelToken, Limits, RunResult, SnapshotConsumed
from toolcycle.events import RunFailure, RunResumed
from toolcycle.testing import ScriptedModel, call

from .helpers import Desk, check_team


def check_closed(result: RunResult[Any], agents: list[str]) -> None:
    """The team ended cancelled as one: each agent's run stated so, each nested under the call
    that ran it, every history well-formed and the usage exact."""
    assert result.status == "cancelled" and result.termination.reason == "cancelled"
    assert [(r.agent_name, r.status, r.termination.reason) for r in result.runs] == [
        (name, "cancelled", "cancelled") for name in agents]
    for run in (result, *result.runs):
        assert run.trace.status == "cancelled" and run.trace.ended_at is not None
    check_team(result)


class Held:
    """An ``on_resume`` callback that holds the first resume of the run named ``at`` until the
    test acts (the test's moment "resumed, the member not yet")."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.reached = asyncio.Event()
        self.release = asyncio.Event()
        self.failures: list[RunFailure] = []

    async def on_resume(self, event: RunResumed) -> None:
        if event.trace.agent_name == self.at and not self.reached.is_set():
            self.reached.set()
            await self.release.wait()

    def on_failure(self, event: RunFailure) -> None:
        self.failures.append(event)


async def test_a_resumed_teams_task_cancelled_before_its_member_goes_on_closes_the_member(
) -> None:
    desk = Desk([call("delete", {"path": "/tmp/c"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"])
    paused = await desk.boss.run("go")
    snapshot = json.loads(json.dumps(paused.snapshot))
    approve = [paused.pending_approvals[0].approve()]
    held = Held("boss")
    task = asyncio.create_task(desk.boss.resume(snapshot, approve, callbacks=held))
    await held.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    [failure] = [f for f in held.failures if f.result.agent_name == "boss"]
    result = failure.result
    check_closed(result, ["janitor"])
    assert result.tool_calls[0].run is result.runs[0].trace
    assert result.runs[0].run_id == paused.runs[0].run_id
    assert desk.deleted == []
    with pytest.raises(SnapshotConsumed):  # the claim made before the cancel stands
        await desk.boss.resume(snapshot, approve)
    assert desk.deleted == []


async def test_a_cancel_inside_a_resumed_member_closes_the_grandchild_it_had_not_resumed(
) -> None:
    desk = Desk([call("delete", {"path": "/tmp/g"}), "gone"], [])
    held = Held("manager")
    manager = Agent(ScriptedModel([call("janitor", {"input": "clean"}), "managed"]),
                    tools=[desk.janitor.as_tool()], name="manager", callbacks=held)
    top = Agent(ScriptedModel([call("manager", {"input": "see to it"}), "top: done"]),
                tools=[manager.as_tool()], name="top", callbacks={"on_failure": held.on_failure})
    paused = await top.run("clean")
    snapshot = json.loads(json.dumps(paused.snapshot))
    approve = [paused.pending_approvals[0].approve()]
    task = asyncio.create_task(top.resume(snapshot, approve))
    await held.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    [failure] = [f for f in held.failures if f.result.agent_name == "top"]
    check_closed(failure.result, ["manager", "janitor"])
    assert desk.deleted == []
    with pytest.raises(SnapshotConsumed):
        await top.resume(snapshot, approve)


async def test_a_token_cancelled_beside_a_resumed_member_closes_its_paused_sibling() -> None:
    token = CancelToken()
    left = Desk([call("delete", {"path": "/l"}), "l"], [])
    right = Desk([call("delete", {"path": "/r"}), "r"], [])

    def walk_away(event: RunResumed) -> None:  # the left member resumes: the person leaves
        token.cancel("the person walked away")

    left.janitor = Agent(left.janitor.model, tools=[*left.janitor.tools.values()],
                         name="janitor", callbacks={"on_resume": walk_away})
    boss = Agent(ScriptedModel([[call("left", {"input": "x"}), call("right", {"input": "y"})],
                                "both"]),
                 tools=[left.janitor.as_tool("left", concurrent=True),
                        right.janitor.as_tool("right", concurrent=True)], name="boss")
    paused = await boss.run("go")
    approve = [request.approve() for request in paused.pending_approvals]
    failures: list[RunFailure] = []
    with pytest.raises(Exception, match="walked away"):
        await boss.resume(paused.snapshot, approve, cancel_token=token,
                          callbacks={"on_failure": failures.append})

    [failure] = [f for f in failures if f.result.agent_name == "boss"]
    check_closed(failure.result, ["janitor", "janitor"])
    assert left.deleted == [] and right.deleted == []
    with pytest.raises(SnapshotConsumed):
        await boss.resume(paused.snapshot, approve)


async def test_a_members_call_answered_at_the_deadline_hangs_the_closed_run_under_it() -> None:
    """The team's deadline passes before the resumed member goes on: its call is answered
    "not completed" and its paused run closed after that answer; the call's record must then
    hold the closed run (it held the paused one: a trace nesting a run still "paused", whose
    deferred call had no record)."""
    desk = Desk([call("delete", {"path": "/tmp/t"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"], limits=Limits(timeout=0.05))
    paused = await desk.boss.run("go")

    async def late(event: RunResumed) -> None:  # callbacks are not raced: the deadline passes
        await asyncio.sleep(0.1)

    result = await desk.boss.resume(json.loads(json.dumps(paused.snapshot)),
                                    [paused.pending_approvals[0].approve()],
                                    callbacks={"on_resume": late})
    assert result.termination.reason == "timeout" and desk.deleted == []
    record = result.tool_calls[0]
    assert (record.error or "").startswith("not completed: the run's timeout")
    [member] = result.runs
    assert member.status == "cancelled" and record.run is member.trace
    assert member.trace.status == "cancelled"
    assert [(c.name, c.error) for c in member.trace.tool_calls] == [
        ("delete", "not executed: the run ended (CANCELLED)")]
    check_team(result)

"""A team cancelled while a member's pause is being reported (the member's ``on_pause`` is
awaited): the member's pause is the team's business alone (no person holds its snapshot), so
its run ends cancelled with every call of its history answered, and joins ``result.runs``.
(Found by the engine fuzzer, seed 108003: the member's trace was nested "paused" under the
call, its run in no ``runs``, its deferred call never answered.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcycle import Agent, Cancelled, CancelToken, RunResult
from toolcycle.events import RunFailure, RunPaused
from toolcycle.testing import ScriptedModel, call

from .helpers import Desk, check_team


class HeldPause:
    """An ``on_pause`` callback that holds the pause of the run of agent ``at`` until the
    test cancels (a member's events reach its callers' callbacks too)."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.reached = asyncio.Event()

    async def on_pause(self, event: RunPaused) -> None:
        if event.result.agent_name == self.at:
            self.reached.set()
            await asyncio.sleep(3600)


def desk_with(held: HeldPause) -> Desk:
    desk = Desk([call("delete", {"path": "/tmp/p"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"])
    desk.janitor = Agent(desk.janitor.model, tools=[*desk.janitor.tools.values()],
                         name="janitor", callbacks={"on_pause": held.on_pause})
    desk.boss = Agent(desk.boss.model, tools=[desk.janitor.as_tool()], name="boss")
    return desk


def check_cancelled_team(result: RunResult[Any]) -> None:
    assert result.status == "cancelled" and result.agent_name == "boss"
    [member] = result.runs
    assert (member.agent_name, member.status) == ("janitor", "cancelled")
    assert member.termination.reason == "cancelled" and member.pending_approvals == []
    assert result.tool_calls[0].run is member.trace and member.trace.status == "cancelled"
    assert [(c.name, c.error) for c in member.tool_calls] == [
        ("delete", "not executed: the run ended (CANCELLED)")]
    check_team(result)


async def test_a_task_cancelled_while_a_members_pause_is_reported_closes_the_member() -> None:
    held = HeldPause("janitor")
    desk = desk_with(held)
    failures: list[RunFailure] = []
    task = asyncio.create_task(desk.boss.run("go", callbacks={"on_failure": failures.append}))
    await held.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [failure] = [f for f in failures if f.result.agent_name == "boss"]
    check_cancelled_team(failure.result)
    assert desk.deleted == []


async def test_a_token_cancelled_while_a_members_pause_is_reported_closes_the_member() -> None:
    held = HeldPause("janitor")
    desk = desk_with(held)
    token = CancelToken()
    task = asyncio.create_task(desk.boss.run("go", cancel_token=token))
    await held.reached.wait()
    token.cancel("the person left")
    with pytest.raises(Cancelled) as caught:
        await task
    assert caught.value.result is not None
    check_cancelled_team(caught.value.result)
    assert desk.deleted == []


async def test_a_cancel_as_a_managers_pause_is_reported_closes_the_member_paused_inside_it(
) -> None:
    """The janitor paused inside the manager, whose own pause is being reported when the
    team is cancelled: the manager ends cancelled, and the janitor's paused run (listed in
    ``runs`` as paused a moment before) is closed in its place."""
    held = HeldPause("manager")
    desk = Desk([call("delete", {"path": "/tmp/g"}), "gone"], [])
    manager = Agent(ScriptedModel([call("janitor", {"input": "clean"}), "managed"]),
                    tools=[desk.janitor.as_tool()], name="manager",
                    callbacks={"on_pause": held.on_pause})
    top = Agent(ScriptedModel([call("manager", {"input": "see to it"}), "top: done"]),
                tools=[manager.as_tool()], name="top")
    failures: list[RunFailure] = []
    task = asyncio.create_task(top.run("clean", callbacks={"on_failure": failures.append}))
    await held.reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [failure] = [f for f in failures if f.result.agent_name == "top"]
    result = failure.result
    assert [(r.agent_name, r.status) for r in result.runs] == [("manager", "cancelled"),
                                                               ("janitor", "cancelled")]
    manager_run = result.runs[0]
    assert manager_run.tool_calls[0].run is result.runs[1].trace
    assert all(r.trace.status == "cancelled" for r in result.runs)
    check_team(result)
    assert desk.deleted == []

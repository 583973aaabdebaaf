"""A handoff target's own ``tool_selection`` holds once the run is handed to it: the target
is offered the tools its selection keeps for the run's task, as when it runs by itself, before
and after its toolsets are listed, and after a pause."""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, ToolSelection, tool
from toolcycle.testing import HistoryChecker, ScriptedModel, call

from .helpers import check_team, refund, reset_password

TASK = "refund order A1"


class Accounts:
    """A toolset (as an MCP server is one), listed before each request once handed to."""

    async def get_tools(self) -> list[Any]:
        return [reset_password]

    async def close(self) -> None:
        return None


def billing_model(offered: list[list[str]]) -> ScriptedModel:
    """Records the tools each request offers; refunds, then answers."""
    def reply(messages: list[Message], settings: Any) -> Any:
        offered.append([t.name for t in settings.tools])
        if messages[-1].role == "tool" and "refunded" in messages[-1].parts[0].content:
            return "refunded A1"
        return call("refund", {"order": "A1"})
    return ScriptedModel(reply)


def test_the_selection_alone_keeps_refund_for_the_task() -> None:
    """The premise: billing run by itself is offered refund alone for this task."""
    offered: list[list[str]] = []
    billing = Agent(billing_model(offered), tools=[refund, reset_password], name="billing",
                    tool_selection=ToolSelection(max_tools=1))
    assert billing.run_sync(TASK).output == "refunded A1"
    assert offered == [["refund"], ["refund"]]


async def test_a_handoff_target_is_offered_what_its_own_selection_keeps() -> None:
    offered: list[list[str]] = []
    billing = Agent(billing_model(offered), tools=[refund, reset_password], name="billing",
                    tool_selection=ToolSelection(max_tools=1))
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                   handoffs=[billing])
    result = await triage.run(TASK)
    assert result.output == "refunded A1" and result.agent_name == "billing"
    assert offered == [["refund"], ["refund"]]
    assert result.trace.tools_offered is None  # (the starting agent's offer: all its tools)
    check_team(result)


async def test_a_handoff_targets_selection_applies_to_its_toolsets_tools() -> None:
    offered: list[list[str]] = []
    billing = Agent(billing_model(offered), tools=[refund, Accounts()], name="billing",
                    tool_selection=ToolSelection(max_tools=1))
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                   handoffs=[billing])
    result = await triage.run(TASK)
    assert result.output == "refunded A1"
    assert offered == [["refund"], ["refund"]]  # reset_password listed, not selected
    check_team(result)


async def test_a_handed_run_resumed_after_a_pause_keeps_the_targets_selection() -> None:
    refunded: list[str] = []

    @tool(requires_approval=True)
    def gated_refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return f"refunded {order}"

    offered: list[list[str]] = []

    def reply(messages: list[Message], settings: Any) -> Any:
        offered.append([t.name for t in settings.tools])
        if messages[-1].role == "tool" and "refunded" in messages[-1].parts[0].content:
            return "refunded A1"
        return call("gated_refund", {"order": "A1"})

    billing = Agent(ScriptedModel(reply), tools=[gated_refund, reset_password], name="billing",
                    tool_selection=ToolSelection(max_tools=1))
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                   handoffs=[billing])
    paused = await triage.run(TASK)
    assert paused.status == "paused" and offered == [["gated_refund"]]
    final = await triage.resume(json.loads(json.dumps(paused.snapshot)),
                                [paused.pending_approvals[0].approve()])
    assert final.output == "refunded A1" and refunded == ["A1"]
    assert offered == [["gated_refund"], ["gated_refund"]]
    HistoryChecker("both").check(final.messages)

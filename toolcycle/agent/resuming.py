"""Resuming a paused run, the agent's side: as which agent it goes on (the one it was handed
to, after a handoff), with which core (its tool selection's, its toolsets' tools), sealed with
which key; and what must be listed first (the toolsets of that agent and of the team members
paused inside the run, whose snapshots name the tools those toolsets gave them).

The engine's side (checking the snapshot, binding the answers, rebuilding the state) is
:mod:`toolcycle.run.approvals`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from ..context import CancelToken
from ..events import Callbacks, Event
from ..messages import Message
from ..models.base import ModelSettings
from ..run.approvals import reselected, resume_state
from ..run.snapshot import recorded_agent
from ..run.state import AgentCore, RunState
from ..run.team import HandoffTool, MemberTool, sealed_as
from ..run.toolsets import refresher
from .handoffs import AgentHandoff
from .team_agent import TeamAgent


def handed_agent(agent: TeamAgent, snapshot: dict[str, Any] | str | bytes) -> TeamAgent:
    """The agent a paused run of ``agent`` had been handed to (a handoff target of ``agent``,
    or of its targets, named by the snapshot), else ``agent``: the agent that resumes it.
    The name only chooses among agents the caller configured; the one chosen then checks the
    snapshot in full, under the starting agent's key (:func:`paused_core`)."""
    name = recorded_agent(snapshot)
    if name is None or name == agent.name:
        return agent
    seen, queue = {agent.name}, [agent]
    while queue:
        for tool in queue.pop(0)._own_core()[0].tools.values():
            if isinstance(tool, HandoffTool) and isinstance(tool.target, AgentHandoff):
                target = tool.target.agent
                if target.name == name:
                    return target
                if target.name not in seen:
                    seen.add(target.name)
                    queue.append(target)
    return agent


def paused_core(agent: TeamAgent, active: TeamAgent, snapshot: dict[str, Any] | str | bytes,
                listed: tuple[AgentCore, ModelSettings] | None = None
                ) -> tuple[AgentCore, ModelSettings]:
    """The core that resumes a paused run of ``agent`` (``listed``: with the toolsets' tools;
    else as they were last listed, :class:`ResumeListing`):
    ``agent``'s with the tools its selection offered the run, or the core of the agent the run
    was handed to (``active``) with the tools its own selection offered, sealed as ``agent``
    seals (its snapshot key and ledger)."""
    core, settings = listed or active._listed_core()
    if active is not agent:  # sealed as the starting agent, selected as the target selects
        first = agent._own_core()[0]
        core = replace(core, snapshot_key=first.snapshot_key,
                       snapshot_ledger=first.snapshot_ledger)
    return reselected(core, settings, snapshot, active.tool_selection)


def listing(agent: TeamAgent, active: TeamAgent, state: RunState
            ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None:
    """How a resumed run lists the toolsets of the agent it goes on as (``None``: it has
    none): ``agent``'s with its tool selection, or a handoff target's with its own, sealed
    as ``agent``."""
    if not active._toolsets:
        return None
    if active is agent:
        return refresher(agent._run_core, agent.tool_selection, state, state.setup.user_prompt)
    target = AgentHandoff(active).refresher(state.setup.user_prompt)
    assert target is not None  # (it has toolsets)
    return sealed_as(target, agent._own_core()[0])


def resume_as(agent: TeamAgent, snapshot: dict[str, Any] | str | bytes, approvals: object,
              deps: Any, cancel_token: CancelToken | None, listeners: Callbacks,
              sink: Callable[[Event], None] | None, listed: tuple[AgentCore, ModelSettings]
              ) -> RunState:
    """``Agent.resume``'s state: the paused run goes on as the agent it was paused under
    (``agent``, or the one it was handed to: ``listed`` is that agent's core and settings,
    its toolsets' tools included); its task input is ``agent``'s."""
    active = handed_agent(agent, snapshot)
    core, settings = paused_core(agent, active, snapshot, listed)
    state = resume_state(core, active.model, settings, snapshot, approvals, deps, cancel_token,
                         listeners, sink, None if agent._task is None else agent._task.validate)
    state.refresh_tools = listing(agent, active, state)
    return state


class ResumeListing:
    """What a resume lists before it checks the snapshot (a :class:`CoreLister`): the
    toolsets of the agent the run goes on as, and those of the paused members' agents."""

    __slots__ = ("active", "snapshot")

    def __init__(self, agent: TeamAgent, snapshot: dict[str, Any] | str | bytes) -> None:
        self.active = handed_agent(agent, snapshot)
        self.snapshot = snapshot

    @property
    def _toolsets(self) -> tuple[Any, ...]:
        """Not empty when anything must be listed (the stream then lists when iterated)."""
        return self.active._toolsets or ((self,) if _members_of(self.snapshot) else ())

    def _own_core(self) -> tuple[AgentCore, ModelSettings]:
        return self.active._own_core()

    async def _run_core(self) -> tuple[AgentCore, ModelSettings]:
        await list_paused_members(self.active, self.snapshot)
        return await self.active._run_core()


async def list_paused_members(agent: TeamAgent, snapshot: object) -> None:
    """List the toolsets of the agents whose runs paused inside ``agent``'s (a snapshot's
    ``members``, however deep), so that their cores hold the tools their snapshots name.
    The snapshot is not checked yet: what cannot be read here is left to the check."""
    data = _data(snapshot)
    members = _members_of(data)
    if not members:
        return
    try:
        calls = {c.id: c.name for c in Message.from_dict(data["messages"][-1]).tool_calls}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return
    core = handed_agent(agent, data)._own_core()[0]
    for call_id, member in members.items():
        tool = core.tools.get(calls.get(call_id, ""))
        if isinstance(tool, MemberTool):
            await tool.member.list_for_resume(member)


def _data(snapshot: object) -> Any:
    try:
        return json.loads(snapshot) if isinstance(snapshot, str | bytes) else snapshot
    except ValueError:
        return None


def _members_of(snapshot: object) -> dict[str, Any]:
    data = _data(snapshot)
    members = data.get("members") if isinstance(data, dict) else None
    return members if isinstance(members, dict) else {}

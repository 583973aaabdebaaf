"""An agent offered to other agents as a tool (``Agent.as_tool``): the agent's side.

The engine runs the call inside the calling run (:mod:`toolcycle.run.team`: one team, one
run); this module says what the tool looks like to the model and how a call's arguments become
the called agent's run. With ``input_type`` the tool's parameters are the input's JSON Schema
(an object input) or ``{"input": <schema>}`` (any other type), and the arguments are
validated as the input; without, the tool takes ``{"input": "<the task, in words>"}``, the
called agent's user prompt. The called agent's output (structured or text) is the call's value.
A called agent without an approval policy of its own has its calls decided by the calling
agent's (the team's) policy; a call that waits for a person pauses the called agent's run and,
with it, the whole team (:mod:`toolcycle.run.paused`): :meth:`AgentMember.open_paused` and
:meth:`AgentMember.resumed_state` bring the member's run back when the team resumes.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from ..context import CancelToken
from ..errors import ConfigurationError
from ..limits import Limits
from ..messages import ToolCall
from ..result import RunResult
from ..run.approvals import open_paused, resumed_state
from ..run.loop import run as run_loop
from ..run.paused import PausedRun
from ..run.state import AgentCore, RunState
from ..run.team import MemberTool, adjusted, team_timeout
from ..tools import TOOL_NAME_PATTERN, ToolPolicy, ToolSpec
from .handoffs import AgentHandoff as AgentHandoff  # (its home before the split)
from .resuming import handed_agent, list_paused_members, listing, paused_core
from .team_agent import TeamAgent


class AgentMember:
    """:class:`toolcycle.run.team.Member` for one agent (what its tool's calls run)."""

    __slots__ = ("agent", "wrapped")

    def __init__(self, agent: TeamAgent, wrapped: bool) -> None:
        self.agent = agent
        self.wrapped = wrapped  # the input is arguments["input"], not the arguments

    @property
    def name(self) -> str:
        return self.agent.name

    def child_state(self, arguments: dict[str, Any], parent: RunState, call: ToolCall,
                    cancel_token: CancelToken) -> RunState:
        agent = self.agent
        if agent.input_type is None:
            prompt, value = str(arguments["input"]), None
        else:
            prompt, value = None, arguments["input"] if self.wrapped else arguments
        resolved = agent._run_limits(None)
        timeout = team_timeout(parent, resolved.timeout)
        core, settings = agent._own_core()
        state = agent._new_state(
            prompt, parent.ctx.deps, None,
            None if timeout == resolved.timeout else Limits(timeout=timeout), cancel_token,
            None, uuid.uuid4().hex, parent.emitter.sink, _team_core(core, parent), settings,
            task_input=value, listeners=parent.listeners,
            parent_call=(parent.setup.run_id, call.id))
        state.ancestors = (*parent.ancestors, parent)
        if state.refresh_tools is not None:  # its toolsets' tools, under the team's policy
            state.refresh_tools = adjusted(state.refresh_tools, lambda c: _team_core(c, parent))
        return state

    def open_paused(self, snapshot: dict[str, Any]) -> PausedRun:
        active = handed_agent(self.agent, snapshot)
        return open_paused(snapshot, paused_core(self.agent, active, snapshot)[0], active.model)

    def resumed_state(self, paused: PausedRun, parent: RunState, call: ToolCall,
                      cancel_token: CancelToken) -> RunState:
        agent = self.agent
        active = handed_agent(agent, paused.data)
        core, settings = paused_core(agent, active, paused.data)
        if active is agent:  # (a run handed on goes on as the handoff made it)
            core = _team_core(core, parent)
        listeners = agent._own_core()[0].callbacks
        state = resumed_state(
            paused, core, active.model, settings, parent.ctx.deps, cancel_token,
            listeners.joined(parent.listeners) if parent.listeners else listeners,
            parent.emitter.sink, None if agent._task is None else agent._task.validate,
            (parent.setup.run_id, call.id))
        state.timeout_left = team_timeout(parent, state.timeout_left)  # the team's deadline
        state.ancestors = (*parent.ancestors, parent)
        refresh = listing(agent, active, state)
        state.refresh_tools = refresh if refresh is None or active is not agent else adjusted(
            refresh, lambda c: _team_core(c, parent))
        return state

    async def run(self, state: RunState) -> RunResult[Any]:
        return await run_loop(state)

    async def list_for_resume(self, snapshot: dict[str, Any]) -> None:
        active = handed_agent(self.agent, snapshot)
        await list_paused_members(active, snapshot)
        if active._toolsets:
            await active._run_core()  # (kept: _listed_core)


def _team_core(core: AgentCore, parent: RunState) -> AgentCore:
    """A member's core in the team: its calls decided by its own policy, else by the team's
    (the calling agent's, which governs every agent it calls, gated or not); a call either
    defers waits for a person, and pauses the team."""
    team = parent.setup.core.approval
    if core.approval is None and team is not None:
        return replace(core, approval=team, gated=True)
    return core


def member_tool(agent: TeamAgent, name: str | None, description: str | None,
                policy: ToolPolicy | None) -> MemberTool:
    """The tool that runs ``agent`` (see the module docstring); raises
    ``ConfigurationError`` for a name a model cannot call."""
    tool_name = name or agent.name
    problems = []
    if not isinstance(tool_name, str) or not TOOL_NAME_PATTERN.fullmatch(tool_name):
        problems.append(f"name {tool_name!r} is not a tool name (letters, digits, _ and -; "
                        "give as_tool(name=...))")
    if description is not None and not isinstance(description, str):
        problems.append("description must be a string")
    if problems:
        raise ConfigurationError(problems, subject=f"agent {agent.name!r} as a tool")
    text = description or agent.description or f"Ask the agent {agent.name!r} to do a task."
    parameters, wrapped = _parameters(agent)
    return MemberTool(ToolSpec(tool_name, text, parameters), AgentMember(agent, wrapped),
                      policy=policy)


def _parameters(agent: TeamAgent) -> tuple[dict[str, Any], bool]:
    """The tool's argument schema, and whether the input sits under ``"input"``."""
    task = agent._task
    if task is None:
        return {"type": "object", "properties": {"input": {
            "type": "string", "description": "The task for the agent, in words."}},
            "required": ["input"]}, False
    schema = task.schema
    if schema.get("type") == "object" and "$ref" not in schema:
        return schema, False
    return {"type": "object", "properties": {"input": schema}, "required": ["input"],
            **({"$defs": schema["$defs"]} if "$defs" in schema else {})}, True

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
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from ..context import CancelToken
from ..errors import ConfigurationError
from ..events import Callbacks, Event
from ..limits import Limits
from ..messages import ToolCall
from ..models.base import Model, ModelSettings
from ..result import RunResult
from ..run.approvals import open_paused, reselected, resume_state, resumed_state
from ..run.loop import run as run_loop
from ..run.paused import PausedRun
from ..run.snapshot import recorded_agent
from ..run.state import AgentCore, RunState, ToolSelector
from ..run.team import HandoffTool, MemberTool, sealed_as, team_timeout
from ..run.toolsets import refresher
from ..tools import TOOL_NAME_PATTERN, ToolPolicy, ToolSpec
from .task_input import TaskInput


class TeamAgent(Protocol):
    """What a member's tool needs of its agent (:class:`toolcycle.agent.Agent` is one; a
    protocol, so that this module does not import the agent's)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_type(self) -> Any: ...
    @property
    def _task(self) -> TaskInput | None: ...
    @property
    def model(self) -> Model: ...
    @property
    def _toolsets(self) -> tuple[Any, ...]: ...
    @property
    def tool_selection(self) -> ToolSelector | None: ...
    def _own_core(self) -> tuple[AgentCore, ModelSettings]: ...
    async def _run_core(self) -> tuple[AgentCore, ModelSettings]: ...
    def _run_limits(self, limits: Limits | None) -> Limits: ...
    def _new_state(self, user_prompt: str | None, deps: Any, message_history: None,
                   limits: Limits | None, cancel_token: CancelToken | None, callbacks: None,
                   run_id: str | None, sink: Callable[[Event], None] | None,
                   core: AgentCore | None = None, settings: ModelSettings | None = None, *,
                   task_input: Any, listeners: Callbacks | None,
                   parent_call: tuple[str, str] | None) -> RunState: ...


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
        state.refresh_tools = listing(agent, active, state)
        return state

    async def run(self, state: RunState) -> RunResult[Any]:
        return await run_loop(state)


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
    """The core that resumes a paused run of ``agent`` (``listed``: with the toolsets' tools):
    ``agent``'s with the tools its selection offered the run, or the core of the agent the run
    was handed to (``active``) sealed as ``agent`` seals (its snapshot key and ledger)."""
    core, settings = listed or active._own_core()
    if active is agent:
        return reselected(core, settings, snapshot, agent.tool_selection)
    first = agent._own_core()[0]
    return replace(core, snapshot_key=first.snapshot_key,
                   snapshot_ledger=first.snapshot_ledger), settings


def listing(agent: TeamAgent, active: TeamAgent, state: RunState
            ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None:
    """How a resumed run lists the toolsets of the agent it goes on as (``None``: it has
    none): ``agent``'s with its tool selection, or a handoff target's sealed as ``agent``."""
    if not active._toolsets:
        return None
    if active is agent:
        return refresher(agent._run_core, agent.tool_selection, state, state.setup.user_prompt)
    return sealed_as(active._run_core, agent._own_core()[0])


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


def _team_core(core: AgentCore, parent: RunState) -> AgentCore:
    """A member's core in the team: its calls decided by its own policy, else by the team's
    (the calling agent's); a call either defers waits for a person, and pauses the team."""
    if core.gated and core.approval is None:
        return replace(core, approval=parent.setup.core.approval)
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


class AgentHandoff:
    """:class:`toolcycle.run.team.HandoffTarget` for one agent."""

    __slots__ = ("agent",)

    def __init__(self, agent: TeamAgent) -> None:
        self.agent = agent

    @property
    def name(self) -> str:
        return self.agent.name

    def handoff_core(self) -> tuple[AgentCore, Model, ModelSettings]:
        core, settings = self.agent._own_core()
        return core, self.agent.model, settings

    @property
    def refresher(self) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None:
        return self.agent._run_core if self.agent._toolsets else None


def handoff_tools[A: TeamAgent](targets: object, agent_type: type[A], problems: list[str]
                  ) -> list[HandoffTool]:
    """``Agent(handoffs=[...])``: a ``transfer_to_<name>`` tool per agent (an instance of
    ``agent_type``: the agent class, which this module does not import); every problem is
    added to ``problems``."""
    if not isinstance(targets, list | tuple):
        problems.append("handoffs must be a list of agents")
        return []
    built = []
    for target in targets:
        if not isinstance(target, agent_type):
            problems.append(f"handoffs: {type(target).__name__} is not an agent")
            continue
        name = f"transfer_to_{target.name}"
        if not TOOL_NAME_PATTERN.fullmatch(name):
            problems.append(f"handoffs: agent {target.name!r} has no name a tool can carry "
                            "(letters, digits, _ and -)")
        else:
            about = f": {target.description}" if target.description else ""
            built.append(HandoffTool(ToolSpec(name, f"Hand the conversation to the agent "
                                              f"{target.name!r}{about}."), AgentHandoff(target)))
    return built

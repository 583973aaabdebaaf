"""An agent offered to other agents as a tool (``Agent.as_tool``): the agent's side.

The engine runs the call inside the calling run (:mod:`toolcycle.run.team`: one team, one
run); this module says what the tool looks like to the model and how a call's arguments become
the called agent's run. With ``input_type`` the tool's parameters are the input's JSON Schema
(an object input) or ``{"input": <schema>}`` (any other type), and the arguments are
validated as the input; without, the tool takes ``{"input": "<the task, in words>"}``, the
called agent's user prompt. The called agent's output (structured or text) is the call's value.
A called agent without an approval policy of its own has its calls decided by the calling
agent's (the team's) policy; a call that would wait for a person is denied instead
(:func:`member_policy`).
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from ..approval import (
    ApprovalPolicy,
    ApprovalRequest,
    Approve,
    Decision,
    Defer,
    Deny,
)
from ..context import CancelToken, RunContext
from ..errors import ConfigurationError
from ..events import Callbacks, Event
from ..limits import Limits
from ..messages import ToolCall
from ..models.base import Model, ModelSettings
from ..result import RunResult
from ..run.loop import run as run_loop
from ..run.state import AgentCore, RunState
from ..run.team import HandoffTool, MemberTool, team_timeout
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
    def _own_core(self) -> tuple[AgentCore, ModelSettings]: ...
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
        if core.gated:  # its own policy, else the team's, and never a person (see member_policy)
            core = replace(core, approval=member_policy(
                core.approval or parent.setup.core.approval), gated=True)
        state = agent._new_state(
            prompt, parent.ctx.deps, None,
            None if timeout == resolved.timeout else Limits(timeout=timeout), cancel_token,
            None, uuid.uuid4().hex, parent.emitter.sink, core, settings, task_input=value,
            listeners=parent.listeners, parent_call=(parent.setup.run_id, call.id))
        state.ancestors = (*parent.ancestors, parent)
        return state

    async def run(self, state: RunState) -> RunResult[Any]:
        return await run_loop(state)


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


#: Why a called agent's call that needed a person was denied.
NO_PERSON = ("denied: an agent called as a tool cannot wait for a person's approval (give the "
             "calling agent an approval policy that decides this call)")


def member_policy(policy: ApprovalPolicy | None) -> ApprovalPolicy:
    """How a called agent's calls are decided: by ``policy`` (its own, else the team's), with
    a call that would wait for a person (``Defer``, or no policy for a tool with
    ``requires_approval``) denied. Why: a paused member would leave its call, and the calling
    run's, unanswered, and one snapshot cannot resume a team yet (docs/teams.md)."""
    async def decide(request: ApprovalRequest, ctx: RunContext[Any]) -> Decision:
        if policy is None:
            return Deny(NO_PERSON) if request.requires_approval else Approve()
        decision = policy(request, ctx)
        if inspect.isawaitable(decision):
            decision = await decision
        return Deny(NO_PERSON) if isinstance(decision, Defer) else decision
    return decide


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
        elif target._toolsets:
            problems.append(f"handoffs: agent {target.name!r} has toolsets (MCP servers), "
                            "which a handoff cannot connect yet")
        else:
            about = f": {target.description}" if target.description else ""
            built.append(HandoffTool(ToolSpec(name, f"Hand the conversation to the agent "
                                              f"{target.name!r}{about}."), AgentHandoff(target)))
    return built

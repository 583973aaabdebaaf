"""Handoffs (``Agent(handoffs=[billing])``): the agent's side.

The engine switches the run to the other agent (:func:`toolcycle.run.team.hand_off`); this
module offers the model a ``transfer_to_<name>`` tool per agent and says what the run becomes
once handed over: the target's core, model and settings, and how its toolsets (MCP servers)
are listed before each request from then on. The target's own ``tool_selection`` (and its
playbook's plan) choose its tools for the run's prompt, as in a run of its own: an agent
built to be offered a few of its many tools must not be offered all of them because another
agent handed it the conversation. What the starting agent was offered stays the trace's
``tools_offered`` (the playbook learns from it under that agent's name).

Handoffs go one way: a target offers only its own handoffs, fixed when it was built, so the
agents form a chain or a tree and a conversation cannot bounce between two of them until a
limit ends it; a round trip (ask a specialist, then go on) is an agent called as a tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..models.base import Model, ModelSettings
from ..run.state import AgentCore
from ..run.team import HandoffTool
from ..run.toolsets import for_task, selecting_for
from ..tools import TOOL_NAME_PATTERN, ToolSpec
from .team_agent import TeamAgent


class AgentHandoff:
    """:class:`toolcycle.run.team.HandoffTarget` for one agent."""

    __slots__ = ("agent",)

    def __init__(self, agent: TeamAgent) -> None:
        self.agent = agent

    @property
    def name(self) -> str:
        return self.agent.name

    def handoff_core(self, task: str | None) -> tuple[AgentCore, Model, ModelSettings]:
        agent = self.agent
        core, settings = for_task(*agent._own_core(), agent.tool_selection, task)
        return core, agent.model, settings

    def refresher(self, task: str | None
                  ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None:
        agent = self.agent
        if not agent._toolsets:
            return None
        return selecting_for(agent._run_core, agent.tool_selection,
                             agent._own_core()[0].playbook, task)


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

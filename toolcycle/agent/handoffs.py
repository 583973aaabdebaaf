"""Handoffs (``Agent(handoffs=[billing])``): the agent's side.

The engine switches the run to the other agent (:func:`toolcycle.run.team.hand_off`); this
module offers the model a ``transfer_to_<name>`` tool per agent and says what the run becomes
once handed over: the target's core, model and settings, and how its toolsets (MCP servers)
are listed before each request from then on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..models.base import Model, ModelSettings
from ..run.state import AgentCore
from ..run.team import HandoffTool
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

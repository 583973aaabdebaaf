"""The agent: configuration checked once, runs handed over to :mod:`toolcycle.run`.

:mod:`.agent` holds :class:`Agent` itself; :mod:`.team` offers an agent to other agents as a
tool (``Agent.as_tool``).
"""

from ..agent_stream import AgentStream
from .agent import Agent, DepsT, InputT, OutputT

__all__ = ["Agent", "AgentStream", "DepsT", "InputT", "OutputT"]

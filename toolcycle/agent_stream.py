"""Moved to :mod:`toolcycle.agent.stream` (the agent package holds the agent's stream and its
typed task input); kept so that old imports go on working, with a ``DeprecationWarning``."""

import warnings

from .agent.stream import AgentStream, thread_runner

__all__ = ["AgentStream", "thread_runner"]

warnings.warn("toolcycle.agent_stream moved to toolcycle.agent.stream", DeprecationWarning,
              stacklevel=2)

"""The agent: configuration checked once, runs handed over to :mod:`toolcycle.run`.

:mod:`.agent` holds :class:`Agent` itself; :mod:`.checks` its construction checks (and what
follows from them: the tools built, the settings every request carries); :mod:`.task_input`
its typed ``input=``; :mod:`.stream` a streaming run; :mod:`.team` an agent offered to other
agents as a tool (``Agent.as_tool``) and handed the conversation (``handoffs=``). The old
top-level modules (``toolcycle.task_input``, ``toolcycle.agent_stream``) stay as shims.
"""

from .agent import Agent, DepsT, InputT, OutputT
from .stream import AgentStream

__all__ = ["Agent", "AgentStream", "DepsT", "InputT", "OutputT"]

"""DurableAgent: an agent whose runs are DBOS workflows, so they survive a killed process.

The run is a workflow; each model request and each tool call is a step
(:mod:`toolcycle.durable.steps`). The loop runs unchanged inside the workflow: after a crash,
DBOS (on launch, or when asked) runs the workflow again from the top, the recorded steps
replay their outputs, and the run goes on from the first step that never finished. The run
keeps its id (the workflow id), so its trace is rewritten in place and its usage is summed
from the same replies.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync

from ..agent import Agent
from ..messages import Message
from ..result import RunResult
from ..tools import Tool
from .steps import EXECUTION, DurableModel, durable_tool


class DurableAgent[OutputT]:
    """Wrap ``agent`` so its runs are DBOS workflows named ``name`` (default
    ``toolcycle.run:<agent name>``).

    Build it at import time, before ``DBOS.launch()``, in every process that may recover its
    runs: DBOS finds a workflow to recover by its registered name. ``deps`` is given to every
    run's tools (it is not recorded, so a recovering process supplies its own).
    """

    def __init__(self, agent: Agent[Any, OutputT, Any], *, name: str | None = None,
                 deps: Any = None) -> None:
        self.agent = agent
        self.name = name or f"toolcycle.run:{agent.name}"
        self.deps = deps
        self._durable = _durable_copy(agent)

        async def run_workflow(user_prompt: str | None, history: list[dict[str, Any]] | None
                               ) -> RunResult[OutputT]:
            EXECUTION.set(uuid.uuid4().hex)  # a new mark for each execution (see .steps)
            messages = None if history is None else [Message.from_dict(m) for m in history]
            return await self._durable.run(user_prompt, deps=self.deps, run_id=DBOS.workflow_id,
                                           message_history=messages)

        run_workflow.__qualname__ = self.name
        self._workflow = DBOS.workflow(name=self.name)(run_workflow)

    async def run(self, user_prompt: str | None = None, *, workflow_id: str | None = None,
                  message_history: Sequence[Message] | None = None) -> RunResult[OutputT]:
        """Run durably; ``workflow_id`` (a fresh one by default) is also the run's id.

        Starting a workflow id that already exists does not run it twice: DBOS returns the
        existing workflow's outcome (waiting for it if it is still running).
        """
        history = None if message_history is None else [m.to_dict() for m in message_history]
        with SetWorkflowID(workflow_id or uuid.uuid4().hex):
            handle = await DBOS.start_workflow_async(self._workflow, user_prompt, history)
        result: RunResult[OutputT] = await handle.get_result()
        return result

    async def result(self, workflow_id: str) -> RunResult[OutputT]:
        """The outcome of the run ``workflow_id``, waiting while it runs (a recovered run
        included); raises its ``AgentError`` if it failed."""
        handle: WorkflowHandleAsync[RunResult[OutputT]] = await DBOS.retrieve_workflow_async(
            workflow_id)
        result = await handle.get_result()
        return result


def _durable_copy(agent: Agent[Any, Any, Any]) -> Agent[Any, Any, Any]:
    """The same agent (configuration checked once, at its construction) with its model and
    tools wrapped as steps; the original stays usable for plain runs."""
    durable = copy.copy(agent)
    durable.model = DurableModel(agent.model)
    core = agent._core
    durable._core = replace(core, tools={n: durable_tool(t) for n, t in core.tools.items()})
    durable._toolsets = tuple(_DurableToolset(t) for t in agent._toolsets)
    durable._expanded = None
    return durable


class _DurableToolset:
    """A toolset whose tools run as steps (an MCP server's tools, listed per run)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._last: tuple[Sequence[Tool[Any]], list[Tool[Any]]] | None = None

    async def get_tools(self) -> Sequence[Tool[Any]]:
        tools = await self.inner.get_tools()
        if self._last is None or self._last[0] is not tools:  # same list: same wrappers
            self._last = (tools, [durable_tool(t) for t in tools])
        return self._last[1]

    async def close(self) -> None:
        await self.inner.close()

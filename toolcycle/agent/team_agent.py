"""What the team's machinery needs of an agent, as protocols: :mod:`.team` (agents as tools),
:mod:`.handoffs` and :mod:`.resuming` work on these, not on the agent class, which imports
them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..context import CancelToken
from ..events import Callbacks, Event
from ..limits import Limits
from ..models.base import Model, ModelSettings
from ..run.state import AgentCore, RunState, ToolSelector
from .task_input import TaskInput


class CoreLister(Protocol):
    """What lists a run's core: an agent, or what a resume lists first
    (:class:`toolcycle.agent.resuming.ResumeListing`)."""

    @property
    def _toolsets(self) -> tuple[Any, ...]: ...
    def _own_core(self) -> tuple[AgentCore, ModelSettings]: ...
    async def _run_core(self) -> tuple[AgentCore, ModelSettings]: ...


class TeamAgent(CoreLister, Protocol):
    """What the team's machinery (agents as tools, handoffs, resuming) needs of an agent
    (:class:`toolcycle.agent.Agent` is one; a protocol, so that these modules do not import
    the agent's)."""

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
    def tool_selection(self) -> ToolSelector | None: ...
    def _listed_core(self) -> tuple[AgentCore, ModelSettings]: ...
    def _run_limits(self, limits: Limits | None) -> Limits: ...
    def _new_state(self, user_prompt: str | None, deps: Any, message_history: None,
                   limits: Limits | None, cancel_token: CancelToken | None, callbacks: None,
                   run_id: str | None, sink: Callable[[Event], None] | None,
                   core: AgentCore | None = None, settings: ModelSettings | None = None, *,
                   task_input: Any, listeners: Callbacks | None,
                   parent_call: tuple[str, str] | None) -> RunState: ...

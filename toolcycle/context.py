"""Run-scoped context handed to tools, validators and reflection handlers, and the cancel token.

A tool asks for the context by annotating one parameter as :class:`RunContext`; that parameter is
injected by the loop and left out of the tool's JSON Schema.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from .messages import Usage


class CancelToken:
    """Cooperative cancellation shared by the caller, the loop and the tools.

    The loop checks it before every model request and between tool batches; it also cancels
    in-flight async tools when the token fires. Tools may poll :attr:`cancelled` or await
    :meth:`wait`.
    """

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None

    def cancel(self, reason: str = "cancelled by caller") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()


@dataclass(slots=True)
class RunContext[DepsT]:
    """What a tool, validator or handler may know about the run it is part of.

    ``run_state`` lives for the whole run; ``attempt_state`` is cleared when a new attempt
    starts (so an attempt's scratch data does not leak into the retry).
    """

    deps: DepsT
    usage: Usage
    cancel_token: CancelToken
    run_id: str = ""
    agent_name: str = "agent"
    iteration: int = 0
    attempt: int = 1
    run_state: dict[str, Any] = field(default_factory=dict)
    attempt_state: dict[str, Any] = field(default_factory=dict)
    tool_call_id: str | None = None
    tool_name: str | None = None

"""Model requests and tool calls as DBOS steps: the only places a durable run touches DBOS
besides the workflow itself (:mod:`toolcycle.durable.agent`).

DBOS records each step's output in its system database. When a workflow is recovered, its
function runs again from the top, and every step that has a recorded output returns that
output instead of running: the loop replays the run up to the first unrecorded step, then goes
on for real. So the loop itself stays as it is; only the model and the tools are wrapped.

Step outputs are plain JSON-shaped dicts (a :class:`~toolcycle.messages.Message` as its
``to_dict``, a tool's observation as its text), so what is replayed is exactly what was
recorded, whatever serializer DBOS is configured with.

A tool call is two steps. The first, *started*, records which execution of the workflow began
the call; the second runs the tool and records its observation. On recovery, a call whose
*started* step replays an earlier execution's mark but whose result was never recorded was cut
off while it ran: it may or may not have taken effect, so it runs again only if its tool is
declared ``idempotent``; otherwise the model is told it was interrupted. A call the loop gave
up on (its ``timeout``) is never recorded by DBOS, so a third step, *cut*, records that it timed
out, and a replay answers it as timed out again instead of taking it for interrupted.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from typing import Any

from dbos import DBOS, StepReservation

from .._observation import serialize_result
from ..context import RunContext
from ..messages import Message
from ..models.base import Model, ModelSettings
from ..tools import Tool

#: A fresh mark per execution of a durable workflow (the first one and each recovery), so a
#: replayed *started* step tells which execution began the call.
EXECUTION: contextvars.ContextVar[str] = contextvars.ContextVar("toolcycle_durable_execution")

MODEL_STEP = "toolcycle.model_request"
TOOL_STARTED_STEP = "toolcycle.tool_started"
TOOL_STEP = "toolcycle.tool"
TOOL_CUT_STEP = "toolcycle.tool_cut"


class DurableModel(Model):
    """A model whose every request is a DBOS step: a recovered run gets the recorded reply.

    Outside a workflow the step runs as a plain call, so the wrapper is harmless there.
    """

    def __init__(self, inner: Model) -> None:
        self.inner: Model = inner
        self.name = inner.name
        self.system = inner.system

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        async def call() -> dict[str, Any]:
            return (await self.inner.request(messages, settings)).to_dict()

        recorded = await DBOS.run_step_async({"name": MODEL_STEP}, call)
        return Message.from_dict(recorded)

    async def aclose(self) -> None:
        await self.inner.aclose()


class ToolInterrupted(Exception):
    """A non-idempotent call cut off by a process that stopped: not run again."""


class UnserializableResult(Exception):
    """The tool's result could not be made JSON; its marker text is what was recorded."""


def durable_tool(tool: Tool[Any]) -> Tool[Any]:
    """The same tool (spec, policy, validation) whose calls run as DBOS steps."""
    return _DurableTool(tool)


class _DurableTool(Tool[Any]):
    """Validates with the inner tool, then invokes it inside the two steps of a call.

    Always async for the loop: the steps' checkpoints are database writes, which must not
    hold up the event loop; a sync inner tool runs on a worker thread inside its step.
    """

    __slots__ = ("inner",)

    def __init__(self, inner: Tool[Any]) -> None:
        super().__init__(inner.spec, inner.function, policy=inner.policy,
                         context_param=inner.context_param, check_schema=False)
        self.inner = inner
        self.is_async = True  # see the class docstring
        self.inline = False

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.inner.validate(arguments)

    def invoke(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
        """Reserve the call's step ids now, synchronously: the loop starts concurrent calls in
        call order, so the ids stay the same from one execution to the next whatever order
        the calls then finish in."""
        if not _in_workflow():
            return self._outcome(ctx, arguments)
        steps = DBOS.reserve_step(), DBOS.reserve_step(), DBOS.reserve_step()
        return self._run(steps, ctx, arguments)

    async def _run(self, steps: tuple[StepReservation, StepReservation, StepReservation],
                   ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
        """*started*, then the call; *cut* only when the loop gives up on the call meanwhile
        (its timeout), so that a replay answers it as this execution did."""
        started, finished, cut = steps
        mark = EXECUTION.get()

        async def begin() -> str:
            return mark

        begun_by = await started.run_async({"name": TOOL_STARTED_STEP}, begin)

        async def run() -> dict[str, Any]:
            if begun_by == mark:
                return await self._recorded(ctx, arguments)
            if await _recorded_step(cut.step_id):  # cut off by its timeout back then
                return _TIMED_OUT
            if not self.inner.policy.idempotent:
                return {"interrupted": True}
            return await self._recorded(ctx, arguments)

        try:
            outcome = await finished.run_async({"name": f"{TOOL_STEP}:{self.name}"}, run)
        except asyncio.CancelledError:
            await cut.run_async({"name": TOOL_CUT_STEP}, _cut)
            raise
        return _replay(outcome, self.name)

    async def _outcome(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> Any:
        return _replay(await self._recorded(ctx, arguments), self.name)

    async def _recorded(self, ctx: RunContext[Any], arguments: dict[str, Any]
                        ) -> dict[str, Any]:
        """Run the inner tool and say how it went, as the step's output."""
        inner = self.inner
        try:
            if inner.is_async:
                value = await inner.invoke(ctx, arguments)
            elif inner.inline:
                value = inner.invoke(ctx, arguments)
            else:
                value = await asyncio.to_thread(inner.invoke, ctx, arguments)
        except Exception as exc:  # recorded as data: replayed as the same observation
            return {"raised": type(exc).__name__, "message": str(exc),
                    "timeout": isinstance(exc, TimeoutError)}
        text, ok = serialize_result(value)
        return {"text": text, "ok": ok}


#: How a call the loop timed out replays (the loop words the observation from its own timeout).
_TIMED_OUT: dict[str, Any] = {"raised": "TimeoutError", "message": "", "timeout": True}


async def _cut() -> bool:
    return True


async def _recorded_step(step_id: int) -> bool:
    """Whether this workflow has a *cut* recorded at ``step_id`` (a step not run yet in this
    execution, so it cannot be asked by running it)."""
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None
    steps = await DBOS.list_workflow_steps_async(workflow_id)
    return any(s["function_id"] == step_id and s["function_name"] == TOOL_CUT_STEP
               for s in steps)


def _replay(outcome: dict[str, Any], name: str) -> Any:
    """The recorded outcome as the loop expects it from a tool: a value, or an exception
    named as the original was, so that the observation reads the same."""
    if outcome.get("interrupted"):
        raise ToolInterrupted(
            f"interrupted: the process running this call stopped before it finished, so it "
            f"may or may not have taken effect. `{name}` is not declared idempotent, so it was "
            "not run again; check its effect before calling it again.")
    if "raised" in outcome:
        if outcome.get("timeout"):
            raise TimeoutError(outcome["message"])
        raise type(outcome["raised"], (Exception,), {})(outcome["message"])
    if not outcome["ok"]:
        raise UnserializableResult(outcome["text"])
    return outcome["text"]


def _in_workflow() -> bool:
    try:
        return DBOS.workflow_id is not None
    except Exception:  # DBOS not launched: a plain run
        return False

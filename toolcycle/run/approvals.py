"""Tool approval in the loop: deciding a turn's calls, pausing a run, resuming it.

Only agents that gate calls (an ``approval=`` policy, or a tool with ``requires_approval``)
come here: :func:`decide_turn` runs once per turn, before any call of the turn runs, so a
person asked about a paused run sees every call of the turn that waits for them. Calls still
run in emission order: the first deferred call stops the turn there, the calls before it keep
their answers, and the run returns paused (:func:`pause`). :func:`resume_state` rebuilds the
run from its snapshot; the loop then finishes the paused turn from the first deferred call.

At the final request of a limit the run cannot pause (it must answer now): a deferral there is
a denial.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..approval import ApprovalRequest, Approve, Decision, Defer, Deny
from ..context import CancelToken
from ..events import CallbackError, Callbacks, Event, RunPaused, RunResumed
from ..messages import Message, Usage
from ..models.base import Model, ModelSettings
from ..result import RunResult, Termination
from ..tracing.trace import Trace
from . import snapshot as snapshots
from .answers import bind_answers
from .scope import CancelledByToken, LimitHit
from .state import AgentCore, RunSetup, RunState, ToolSelector, Turn, assemble, new_context
from .toolsets import selected


class PauseRun(Exception):
    """Raised by the turn's execution at its first deferred call; the loop pauses the run."""


async def decide_turn(state: RunState, turn: Turn) -> dict[str, Decision]:
    """A decision for every call of the turn that needs one (see the module docstring)."""
    core = state.setup.core
    policy = core.approval
    decisions: dict[str, Decision] = {}
    run_id = state.setup.run_id
    for call in turn.calls:
        tool = None if call.original_name is not None else core.tools.get(call.name)
        if tool is None or call.arguments is None:  # answered with an error anyway
            continue
        if policy is None:
            if tool.requires_approval:
                decisions[call.id] = Defer("default")
            continue
        request = ApprovalRequest(call.id, call.name, call.arguments, tool.requires_approval,
                                  run_id)
        try:
            decision = await _ask(state, policy, request)
        except LimitHit:  # no call of the turn runs: each is answered "not executed"
            turn.stopped = "timeout"
            return {}
        if isinstance(decision, Defer) and state.forcing:
            decision = Deny("this call needs a person's approval, which cannot be asked now: "
                            "the run is at a limit and must answer without it")
        decisions[call.id] = decision
    return decisions


async def _ask(state: RunState, policy: Callable[..., Any], request: ApprovalRequest
               ) -> Decision:
    """The policy's decision; a policy that fails or answers nonsense denies the call (the
    safe side), and its error is kept in ``result.callback_errors``. An async policy (a person
    asked over chat, a remote rule service) is awaited like every other await of the run:
    raced against the cancel token and the deadline (:class:`CancelledByToken`,
    :class:`LimitHit` propagate)."""
    try:
        decision = policy(request, state.ctx)
        if inspect.isawaitable(decision):
            decision = await state.interrupts.guard(decision)
        if isinstance(decision, Approve | Deny | Defer):
            return decision
        problem: Exception = TypeError(
            f"an approval policy must return Approve(), Deny(reason) or Defer(), got "
            f"{type(decision).__name__}")
    except (LimitHit, CancelledByToken):
        raise
    except Exception as exc:
        problem = exc
    state.emitter.errors.append(CallbackError("approval", repr(policy), problem))
    return Deny(f"not run: the approval policy failed ({type(problem).__name__}: {problem})")


async def pause(state: RunState) -> RunResult[Any]:
    """The run waits for a person: finish the trace as paused, snapshot, tell the callbacks."""
    turn = state.turn
    assert turn is not None and turn.decisions is not None
    pending = [
        ApprovalRequest(call.id, call.name, call.arguments or {},
                        state.setup.core.tools[call.name].requires_approval, state.setup.run_id)
        for call in turn.calls[turn.resume_from:]
        if isinstance(turn.decisions.get(call.id), Defer)
    ]
    names = ", ".join(f"{r.tool_name} [{r.call_id}]" for r in pending)
    state.termination = Termination("paused", "paused", f"waiting for approval of {names}")
    event = RunPaused(state.setup.run_id, state.attempt, state.iteration, pending)
    state.trace.apply(event)
    state.trace.finish("paused", state.usage, None, state.termination.to_dict(), None)
    result: RunResult[Any] = RunResult(
        output=None, messages=state.messages, new_message_index=state.new_message_index,
        usage=state.usage, trace=state.trace.trace, termination=state.termination,
        run_id=state.setup.run_id, callback_errors=state.emitter.errors,
        pending_approvals=pending, snapshot=snapshots.capture(state, pending),
    )
    event.result = result
    await state.emitter.notify(event)
    return result


def resume_state(
    core: AgentCore,
    model: Model,
    settings: ModelSettings,
    snapshot: dict[str, Any] | str | bytes,
    approvals: object,
    deps: Any,
    cancel_token: CancelToken | None,
    callbacks: Callbacks,
    sink: Callable[[Event], None] | None,
    revive_input: Callable[[Any], Any] | None = None,
    selector: ToolSelector | None = None,
) -> RunState:
    """A paused run's state, checked and ready for the loop, on the agent's ``core`` (its
    toolsets' tools included) and model ``settings``; the snapshot's run id, prompt and limits.
    Raises :class:`SnapshotError` for a snapshot this agent cannot resume and
    :class:`ConfigurationError` for approvals that do not answer it. ``revive_input`` turns the
    snapshot's task input (its JSON form) back into the agent's input type. With a tool
    ``selector`` the tools are selected for the snapshot's prompt again, as when the run
    started (selection is deterministic), so the run goes on with the tools it was offered."""
    prompt = None if selector is None else snapshots.prompt_of(snapshot, core.snapshot_key)
    if selector is not None and prompt is not None:
        core, settings = selected(core, settings, selector, prompt)
    data = snapshots.open_snapshot(snapshot, core, model)
    run_id = data["run_id"]
    pending = [replace(ApprovalRequest.from_dict(p), run_id=run_id) for p in data["pending"]]
    decisions = bind_answers(run_id, pending, approvals, signed=snapshots.is_signed(data))
    setup = RunSetup(core=core, model=model, settings=settings, limits=snapshots.limits_of(data),
                     run_id=data["run_id"], user_prompt=data.get("user_prompt"),
                     streaming=sink is not None, task_input=None if revive_input is None
                     or data.get("input") is None else revive_input(data["input"]))
    state = assemble(setup, [Message.from_dict(m) for m in data["messages"]],
                     data["new_message_index"], Trace.from_dict(data["trace"]),
                     new_context(setup, Usage.from_dict(data["usage"]), deps, cancel_token),
                     cancel_token, callbacks, sink)
    state.resumed = RunResumed(setup.run_id, decisions, state.trace.trace)
    snapshots.restore(state, data, decisions)
    pause, ledger = snapshots.pause_number(data), core.snapshot_ledger
    state.claim = lambda: _claim(ledger, setup.run_id, pause)
    return state


def _claim(ledger: object, run_id: str, pause: int) -> None:
    from ..stores.ledger import ledger_of  # SQLite (or psycopg) loads only when a run resumes

    ledger_of(ledger).claim(run_id, pause)


async def claim_pause(state: RunState) -> None:
    """A resumed run's first act: claim its pause in the ledger of consumed snapshots (raises
    :class:`~toolcycle.errors.SnapshotConsumed` if another resume did; nothing has run yet).
    Off the event loop: the claim may wait on a busy database."""
    if state.claim is not None:
        await asyncio.to_thread(state.claim)

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
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from ..approval import ApprovalRequest, Approve, Decision, Defer, Deny
from ..context import CancelToken
from ..errors import AgentError, Cancelled, SnapshotError
from ..events import CallbackError, Callbacks, Event, RunPaused, RunResumed
from ..messages import Message, Usage
from ..models.base import Model, ModelSettings
from ..result import RunResult, Termination
from ..tracing.trace import Trace
from . import snapshot as snapshots
from .answers import bind_team
from .outcome import result_of
from .paused import PausedRun
from .scope import CancelledByToken, LimitHit
from .state import AgentCore, RunSetup, RunState, ToolSelector, Turn, assemble, new_context
from .team import MemberTool, member_requests
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
                decisions[call.id] = _NOW_DENIED if forcing(state) else Defer("default")
            continue
        request = ApprovalRequest(call.id, call.name, call.arguments, tool.requires_approval,
                                  run_id)
        try:
            decision = await _ask(state, policy, request)
        except LimitHit:  # no call of the turn runs: each is answered "not executed"
            turn.stopped = "timeout"
            return {}
        if isinstance(decision, Defer) and forcing(state):
            decision = _NOW_DENIED
        decisions[call.id] = decision
    return decisions


#: A deferral at a limit's final request, where the run (or the team) must answer now.
_NOW_DENIED = Deny("this call needs a person's approval, which cannot be asked now: the run is "
                   "at a limit and must answer without it")


def forcing(state: RunState) -> bool:
    """The run, or a run of the team it sits in, is making its final request at a limit: it
    cannot pause, and nor can the members it runs meanwhile."""
    return state.forcing or any(outer.forcing for outer in state.ancestors)


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


async def pause(state: RunState, fail: Callable[[RunState, AgentError], Awaitable[None]]
                ) -> RunResult[Any]:
    """The run waits for a person: finish the trace as paused, snapshot, tell the callbacks.
    It waits on its own deferred calls and on those of the team members that paused in its
    turn: ``pending_approvals`` lists them all, in call order (a member's by the calls that lead
    to it, ``via``); the snapshot holds the members' under their calls.

    A cancel that lands while ``on_pause`` is told leaves the run you started paused (its
    callbacks hold the snapshot, which a person may resume). A team member's pause is the
    team's business (no person holds its snapshot): cancelled there, the member's run ends
    cancelled instead (``fail``: the loop's way to end a run, every call answered)."""
    turn = state.turn
    assert turn is not None
    core, run_id = state.setup.core, state.setup.run_id
    decisions = turn.decisions or {}
    own = [ApprovalRequest(call.id, call.name, call.arguments or {},
                           core.tools[call.name].requires_approval, run_id, core.name)
           for call in turn.calls[turn.resume_from:]
           if isinstance(decisions.get(call.id), Defer)]
    members = member_requests(state, turn)
    pending = [request for call in turn.calls[turn.resume_from:] for request in
               members.get(call.id, [r for r in own if r.call_id == call.id])]
    names = ", ".join(f"{r.tool_name} [{r.call_id}]" for r in pending)
    state.termination = Termination("paused", "paused", f"waiting for approval of {names}")
    event = RunPaused(run_id, state.attempt, state.iteration, pending)
    state.trace.apply(event)
    state.trace.finish("paused", state.usage, None, state.termination.to_dict(), None)
    result = result_of(state, None, pending, snapshots.capture(state, own))
    event.result = result
    try:
        await state.emitter.notify(event)
    except asyncio.CancelledError:
        if state.ancestors:
            state.termination = None
            await fail(state, Cancelled("the run's task was cancelled while its pause was "
                                        "reported", phase=state.phase))
        raise
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
    Raises :class:`SnapshotError` for a snapshot this agent cannot resume (a paused team's
    members' included) and :class:`ConfigurationError` for approvals that do not answer it
    (every run of the team: nothing runs). ``revive_input`` turns the snapshot's task input (its
    JSON form) back into the agent's input type. With a tool ``selector`` the tools are selected
    for the snapshot's prompt again, as when the run started (selection is deterministic), so
    the run goes on with the tools it was offered."""
    core, settings = reselected(core, settings, snapshot, selector)
    paused = open_paused(snapshot, core, model)
    bind_team(paused, approvals)
    state = resumed_state(paused, core, model, settings, deps, cancel_token, callbacks, sink,
                          revive_input)
    pause, ledger = snapshots.pause_number(paused.data), core.snapshot_ledger
    state.claim = lambda: _claim(ledger, state.setup.run_id, pause)  # (the whole team's)
    return state


def reselected(core: AgentCore, settings: ModelSettings, snapshot: dict[str, Any] | str | bytes,
               selector: ToolSelector | None) -> tuple[AgentCore, ModelSettings]:
    """The agent's core with the tools its selection offered the paused run (its prompt)."""
    selects = selector is not None or core.playbook is not None  # (the playbook's plan too)
    prompt = snapshots.prompt_of(snapshot, core.snapshot_key) if selects else None
    if prompt is not None:
        return selected(core, settings, selector, prompt)
    return core, settings


def open_paused(snapshot: dict[str, Any] | str | bytes, core: AgentCore, model: Model
                ) -> PausedRun:
    """The snapshot, checked for this agent, with its paused members' (each checked by its
    own agent: the one the call's tool runs); raises :class:`SnapshotError` listing every
    problem of every run."""
    data = snapshots.open_snapshot(snapshot, core, model)
    run_id = data["run_id"]
    pending = [replace(ApprovalRequest.from_dict(p), run_id=run_id, agent_name=core.name)
               for p in data["pending"]]
    members: dict[str, PausedRun] = {}
    problems: list[str] = []
    if "members" in data:
        calls = {c.id: c for c in Message.from_dict(data["messages"][-1]).tool_calls}
        for call_id, member in data["members"].items():
            tool = core.tools.get(calls[call_id].name)
            if not isinstance(tool, MemberTool):
                problems.append(f"members[{call_id!r}]: {calls[call_id].name} does not run an "
                                "agent here")
                continue
            try:
                members[call_id] = tool.member.open_paused(member)
            except SnapshotError as exc:
                problems.extend(f"members[{call_id!r}] ({tool.member.name}): {problem}"
                                for problem in exc.problems)
    if problems:
        raise SnapshotError(problems, subject=f"snapshot of run {run_id!r}")
    return PausedRun(data, pending, members, snapshots.is_signed(data))


def resumed_state(
    paused: PausedRun,
    core: AgentCore,
    model: Model,
    settings: ModelSettings,
    deps: Any,
    cancel_token: CancelToken | None,
    callbacks: Callbacks,
    sink: Callable[[Event], None] | None,
    revive_input: Callable[[Any], Any] | None = None,
    parent_call: tuple[str, str] | None = None,
) -> RunState:
    """The state of a checked paused run whose answers are bound (:func:`resume_state`; a
    team member's, inside its parent's call: ``toolcycle.agent.team``)."""
    data = paused.data
    setup = RunSetup(core=core, model=model, settings=settings, limits=snapshots.limits_of(data),
                     run_id=data["run_id"], user_prompt=data.get("user_prompt"),
                     streaming=sink is not None, task_input=None if revive_input is None
                     or data.get("input") is None else revive_input(data["input"]),
                     parent_call=parent_call)
    state = assemble(setup, [Message.from_dict(m) for m in data["messages"]],
                     data["new_message_index"], Trace.from_dict(data["trace"]),
                     new_context(setup, Usage.from_dict(data["usage"]), deps, cancel_token),
                     cancel_token, callbacks, sink)
    state.resumed = RunResumed(setup.run_id, paused.decisions, state.trace.trace)
    snapshots.restore(state, data, paused.decisions)
    if paused.members:
        assert state.turn is not None
        state.turn.resuming = dict(paused.members)
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

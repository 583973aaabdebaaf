"""One team, one run: an agent called as a tool runs inside the run that called it, and an
agent handed the conversation (a handoff) goes on with the same run.

A member's run (a *child*) is an ordinary run of its own agent, with its own history, trace,
limits and result, started by a tool call of its *parent*. What makes the team one run:

- **limits**: the child's run keeps a tuple of the runs it sits inside (``state.ancestors``,
  outermost first). Its model requests count as iterations of their current attempts, its
  tool calls as their tool calls, its usage as their usage, all as they happen
  (``RunState.next_iteration``, ``RunState.spend``, ``calls._admit``); before each request the
  child checks their limits after its own (:func:`team_limit`), and its deadline is theirs
  when that comes first. The child meets a team limit as its own (``on_limit`` decides); its
  parent then meets the same limit on its next check;
- **cancelling**: the child's cancel token is cancelled with its parent's (and the parent's
  deadline cancels the child's task with the call), so every open call id of every history is
  answered by the loop's ordinary stop;
- **records**: the child's trace hangs under the call that started it
  (``ToolCallRecord.run``), from the moment it starts, and its result joins the parent's
  ``runs`` however it ended (``state.result``, set on every way out of ``loop.run``);
- **pausing**: a child whose call waits for a person pauses; the call that runs it stays
  open (:class:`MemberPaused` reaches the parent's turn, which pauses the parent in turn:
  :func:`pause_for_members`), and the parent's snapshot carries the child's. Resuming the
  parent resumes the child's run inside the same call (``Turn.resuming``, :mod:`.paused`).

A **handoff** (``Agent(handoffs=[billing])``) is a tool ``transfer_to_billing`` whose call
ends the turn (the calls after it are not executed) and switches the run to the other agent:
its instructions (the system message), model, tools (its toolsets' listed before the next
request, all of them as its own tool selection keeps them for the run's prompt) and output
type; limits, usage, trace and history stay the run's, and its snapshots
are sealed and consumed as the agent that started it says (:func:`hand_off`, :func:`sealed_as`).
``result.agent_name`` says who answered.

This module owns the mechanics; which agent runs and how its prompt is built from the call's
arguments is the agent's side (:class:`Member`, :class:`HandoffTarget`, implemented in
:mod:`toolcycle.agent.team`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

from ..approval import ApprovalRequest, Via
from ..context import CancelToken
from ..errors import AgentError
from ..events import HandoffEvent
from ..limits import LimitName
from ..messages import Message, ToolCall
from ..models.base import ModelSettings
from ..result import RunResult
from ..tools import Tool, ToolPolicy, ToolSpec
from .paused import PausedRun
from .state import AgentCore, HandoffTarget, RunState, Turn, message_chars


class Member(Protocol):
    """An agent as the engine sees it when a call runs it (``toolcycle.agent.team``)."""

    @property
    def name(self) -> str: ...

    def child_state(self, arguments: dict[str, Any], parent: RunState, call: ToolCall,
                    cancel_token: CancelToken) -> RunState:
        """The child run's state, for the call's validated arguments (may raise
        ``InputError`` for arguments the agent's input type refuses)."""
        ...

    async def run(self, state: RunState) -> RunResult[Any]:
        """Run the child's state to its end (``toolcycle.run.loop.run``)."""
        ...

    def open_paused(self, snapshot: dict[str, Any]) -> PausedRun:
        """The agent's paused run from its snapshot, checked (raises ``SnapshotError``)."""
        ...

    def resumed_state(self, paused: PausedRun, parent: RunState, call: ToolCall,
                      cancel_token: CancelToken) -> RunState:
        """The child run's state, resumed from ``paused`` (answers bound) inside ``call``."""
        ...

    async def list_for_resume(self, snapshot: dict[str, Any]) -> None:
        """Before the team's snapshot is checked: list the toolsets the member's paused run
        (and its own paused members') had, whose tools its snapshot names."""
        ...


class MemberTool(Tool[Any]):
    """A tool whose calls run another agent (``Agent.as_tool``): the engine runs it with
    :func:`run_member`, not through a function, because the child must sit inside the run."""

    __slots__ = ("member",)

    def __init__(self, spec: ToolSpec, member: Member, policy: ToolPolicy | None = None
                 ) -> None:
        super().__init__(spec, None, policy=policy)
        self.member = member


class MemberPaused(Exception):
    """Internal: the called agent's run paused for a person; the call stays open and the
    calling run pauses too (:func:`pause_for_members`)."""

    def __init__(self, result: RunResult[Any]) -> None:
        super().__init__(result.termination.detail)
        self.result = result


class MemberFailed(Exception):
    """Internal: the called agent's run failed; its words become the call's error answer."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.text = text
        self.code = code


async def run_member(state: RunState, tool: MemberTool, call: ToolCall,
                     arguments: dict[str, Any]) -> Any:
    """Run the member for ``call`` (or resume its paused run, in a resumed turn); return its
    output (the call's value), or raise :class:`MemberFailed` or :class:`MemberPaused`. A
    cancellation of the parent propagates, the child closed first."""
    parent_token = state.ctx.cancel_token
    token = CancelToken()
    if parent_token.cancelled:  # (add_callback would cancel at once; say why first)
        raise MemberFailed(f"Agent `{tool.member.name}` was not started: the run is "
                           "cancelled", "cancelled")  # (a paused one is closed: close_members)
    turn = state.turn
    paused = None if turn is None or not turn.resuming else turn.resuming.pop(call.id, None)
    link = parent_token.add_callback(
        lambda: token.cancel(f"the calling run was cancelled ({parent_token.reason})"))
    try:
        try:
            child = (tool.member.child_state(arguments, state, call, token) if paused is None
                     else tool.member.resumed_state(paused, state, call, token))
        except AgentError as exc:  # the arguments do not make a valid input
            raise MemberFailed(f"Agent `{tool.member.name}` refused its input: {exc}",
                               exc.code) from None
        record = state.trace.open_record(call.id)
        if record is not None:
            record.run = child.trace.trace
        try:
            result = await tool.member.run(child)
        except AgentError as error:
            raise MemberFailed(f"Agent `{tool.member.name}` failed ({error.code}): "
                               f"{error.message}", error.code) from None
        finally:
            _join(state, child)
    finally:
        parent_token.remove_callback(link)
    if result.paused:
        raise MemberPaused(result)
    return result.output


def pause_for_members(turn: Turn, paused: dict[str, RunResult[Any]]) -> None:
    """Members of the turn paused (call id -> result): their calls stay open, the turn goes on
    from the first of them once resumed, and the run pauses (the caller raises ``PauseRun``)."""
    turn.paused_members = {**(turn.paused_members or {}), **paused}
    turn.resume_from = min(i for i, c in enumerate(turn.calls) if c.id in turn.paused_members)


async def close_members(state: RunState, why: str) -> asyncio.CancelledError | None:
    """The run's resumed turn goes on, or the run ends, without resuming paused members of
    the turn (it was cancelled, it failed, or their calls were answered otherwise): each is
    resumed under a cancelled token, so that its run ends cancelled with every call of its
    history answered (as a single paused run resumed cancelled does), and joins ``runs``. A
    call still open is then answered by the run's stop, as a call that was running. Members
    that paused in this run's turn, when the run ends instead of pausing (a cancel landed as a
    member's pause was reported: :func:`~.approvals.pause`), are closed the same way, from
    their snapshots, in place of their paused runs in ``runs``.

    Every member is closed even if the caller cancels the run's task meanwhile (each member's
    run closes its own books on that cancellation, as any run does); that cancellation is
    returned, for the caller to raise once its own books are closed too."""
    turn = state.turn
    if turn is None or not (turn.resuming or turn.paused_members):
        return None
    by_id = {c.id: c for c in turn.calls}
    tools = {call_id: state.setup.core.tools[by_id[call_id].name] for call_id in
             (*(turn.resuming or ()), *(turn.paused_members or ()))}
    closing = dict(turn.resuming or {})
    for call_id, result in (turn.paused_members or {}).items():
        member = tools[call_id]
        if isinstance(member, MemberTool) and result.snapshot is not None:
            closing[call_id] = member.member.open_paused(result.snapshot)
            gone = {id(run) for run in (result, *result.runs)}
            state.runs = [run for run in state.runs if id(run) not in gone]
    turn.resuming = turn.paused_members = None
    interrupted = None
    for call_id, paused in closing.items():
        tool = tools[call_id]
        assert isinstance(tool, MemberTool)  # (open_paused checked it)
        token = CancelToken()
        token.cancel(why)
        child = tool.member.resumed_state(paused, state, by_id[call_id], token)
        record = state.trace.turn_record(call_id)  # (its call may be answered already)
        if record is not None:
            record.run = child.trace.trace
        try:
            await tool.member.run(child)
        except AgentError:
            pass  # (Cancelled: its books are closed)
        except asyncio.CancelledError as exc:  # (its books are closed too)
            interrupted = exc
        finally:
            _join(state, child)
    return interrupted


def member_requests(state: RunState, turn: Turn) -> dict[str, list[ApprovalRequest]]:
    """The pending requests of the turn's paused members, by the call that runs each, every
    one with this run's call prefixed to the way to it (``ApprovalRequest.via``)."""
    name, run_id = state.setup.core.name, state.setup.run_id
    by_call = {c.id: c for c in turn.calls}
    return {call_id: [replace(request, via=(Via(name, run_id, call_id, by_call[call_id].name),
                                            *request.via))
                      for request in result.pending_approvals]
            for call_id, result in (turn.paused_members or {}).items()}


class HandoffTool(Tool[Any]):
    """``transfer_to_<agent>``: its call hands the run to ``target`` (:func:`hand_off`)."""

    __slots__ = ("target",)

    def __init__(self, spec: ToolSpec, target: HandoffTarget) -> None:
        super().__init__(spec, None)
        self.target = target


def start_handoff(state: RunState, tool: HandoffTool) -> str:
    """The handoff call: note it (the loop switches agents once the turn is answered) and
    stop the rest of the turn; the call's answer. A second handoff in the same turn, or one
    beside the output call, is not made."""
    if state.handoff is not None or state.held is not None:
        return "Not transferred: this turn already ended the agent's part."
    state.handoff = tool.target
    if state.turn is not None:  # the calls after this one are not executed
        state.turn.stopped = f"the conversation was handed to {tool.target.name}"
    return f"Transferred to {tool.target.name}: it answers from here."


async def hand_off(state: RunState) -> None:
    """Switch the run to the agent its handoff call named (the turn is closed already)."""
    target, state.handoff = state.handoff, None
    assert target is not None
    first = state.setup.core
    before = first.name
    task = state.setup.user_prompt  # (what the target's own tool selection selects for)
    core, model, settings = target.handoff_core(task)
    core = replace(core, snapshot_key=first.snapshot_key, snapshot_ledger=first.snapshot_ledger)
    state.setup = replace(state.setup, core=core, model=model, settings=settings,
                          instructions=None)
    state.output = core.output
    state.ctx.agent_name = core.name
    refresh = target.refresher(task)  # its toolsets' tools join before the next request
    state.refresh_tools = None if refresh is None else sealed_as(refresh, first)
    system = Message.system(core.instructions) if core.instructions else None
    messages = state.messages
    if messages and messages[0].role == "system":
        if system is not None:
            messages[0] = system
        else:
            del messages[0]
            state.new_message_index -= 1
    elif system is not None:
        messages.insert(0, system)
        state.new_message_index += 1
    if state.counts_tokens:
        state.history_chars = sum(message_chars(m) for m in messages)
    await state.emit(HandoffEvent(state.attempt, state.iteration, before, core.name))


Lister = Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]]


def adjusted(refresh: Lister, adjust: Callable[[AgentCore], AgentCore]) -> Lister:
    """``refresh`` (an agent's toolsets listed before each request), each core it lists
    adjusted by ``adjust``: the same adjusted core while the listing is unchanged. Why: the
    listed core is the agent's own, and a run may hold it otherwise (a member's under the
    team's approval policy, a handed run's under the starting agent's key)."""
    last: list[AgentCore] = []  # the listed core and the one made of it

    async def listed() -> tuple[AgentCore, ModelSettings]:
        core, settings = await refresh()
        if not last or last[0] is not core:
            last[:] = [core, adjust(core)]
        return last[1], settings
    return listed


def sealed_as(refresh: Lister, first: AgentCore) -> Lister:
    """``refresh``, its core sealing the run's snapshots with the key, and consuming them in
    the ledger, of the agent that started the run (``first``).

    Why: a run handed to another agent is resumed by the agent that started it (the one the
    caller holds), whose ``snapshot_key`` must check it: a target without a key of its own
    would otherwise let an unsigned snapshot through an agent that demands signed ones."""
    return adjusted(refresh, lambda core: replace(
        core, snapshot_key=first.snapshot_key, snapshot_ledger=first.snapshot_ledger))


def _join(state: RunState, child: RunState) -> None:
    """The child's result (however it ended) and its own members' join the parent's runs."""
    if child.result is not None:
        state.runs.append(child.result)
        state.runs.extend(child.result.runs)


def team_timeout(parent: RunState, own: float | None) -> float | None:
    """The child's timeout: its own, or the time its parent has left if that is shorter."""
    deadline = parent.interrupts.deadline
    if deadline is None:
        return own
    left = max(deadline - time.monotonic(), 0.001)
    return left if own is None else min(own, left)


def team_limit(state: RunState) -> LimitName | None:
    """The first limit of a run this one sits inside that its next request would pass."""
    for outer in state.ancestors:
        limit = outer.limits.reached(outer)
        if limit is not None:
            return limit
    return None


def refuse_in_team(state: RunState) -> str | None:
    """Why one more tool call is refused by the tool-call budget of a run this one sits in."""
    for outer in state.ancestors:
        refusal = outer.limits.refuse_call(outer)
        if refusal is not None:
            return f"{refusal} (a limit of the team, set on agent {outer.setup.core.name!r})"
    return None


def describe_limit(state: RunState, limit: LimitName) -> str:
    """The limit in words, with the figures of the run it belongs to: the run's own, or,
    where an outer run's was reached, that run's (a member's own limits may not set it at
    all: ``max_tool_calls=None reached`` said nothing), named."""
    outer = _limit_owner(state, limit)
    if outer is None:
        return state.limits.describe(limit, state)
    return outer.limits.describe(limit, outer) + team_note(state, limit)


def team_note(state: RunState, limit: LimitName) -> str:
    """`` (a limit of the team, set on agent 'lead')`` where ``limit`` is not the run's own
    but that of a run it sits inside; empty otherwise (nearly always)."""
    outer = _limit_owner(state, limit)
    return "" if outer is None else (
        f" (a limit of the team, set on agent {outer.setup.core.name!r})")


def _limit_owner(state: RunState, limit: LimitName) -> RunState | None:
    """The outer run whose ``limit`` this run met, or ``None`` where it is the run's own."""
    if not state.ancestors or state.limits.reached(state) == limit:
        return None
    for outer in state.ancestors:
        if outer.limits.reached(outer) == limit:
            return outer
    return None

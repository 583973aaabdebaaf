"""Tool approval in the fuzzed runs: the agent's policy, tools that require approval, and the
invariants of pausing and resuming (numbered 10).

A scenario with ``approval`` set gets a policy that approves, denies or defers each call (by a
hash of the seed and the call, so a run is reproducible), or copies of its tools that require
approval. Paused runs are resumed by the runner with the fuzzed person's answers, and every
invariant of the loop is then checked on the whole run, across its pauses.

In a team (tests/fuzz/members.py) the members' calls wait for a person too: the policy governs
every member (none has its own), and each member has ``stamp``, which requires approval. The
person's answers are then bound to the run that asked (``request.approve()``; two members may
both wait on ``call_1``), and checked against the records of every run nested in the trace.
Now and then a resume is cancelled (a cancelled token, or the task cancelled as the resume is
announced, before any paused member goes on), and a snapshot is replayed after its resume:
  10 a replayed snapshot raises ``SnapshotConsumed`` and runs no tool.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

from toolcycle import (
    Agent,
    AgentError,
    ApprovalRequest,
    Approve,
    Defer,
    Deny,
    RunContext,
    RunResult,
    SnapshotConsumed,
    SnapshotError,
    Tool,
)
from toolcycle.events import Event, RunPaused, RunResumed, ToolResultEvent
from toolcycle.tracing.trace import ToolCallRecord, Trace

from .scenario import Scenario, approval_decision
from .tools import ALL_TOOLS, ENTERED

#: A run is resumed at most this often (each pause needs a new model turn, so this is never
#: reached by a scenario that ends: the limits stop the loop long before).
MAX_RESUMES = 60

#: (run id, call id) -> the person's answer (``True``, or the reason of a denial).
Answers = dict[tuple[str, str], bool | str]


def approval_setup(s: Scenario, approved: set[tuple[str, str]] | None = None
                   ) -> tuple[list[Tool[Any]], Any]:
    """The scenario's tools and the agent's approval policy (or None); the (run id, call id)
    of each call the policy approves is added to ``approved``."""
    tools = [ALL_TOOLS[name] for name in s.tool_names]
    if s.approval is None:
        return tools, None
    if s.approval == "tools":  # every other tool requires approval; no policy: they defer
        return [Tool(t.spec, policy=replace(t.policy, requires_approval=True)).bind(t.function)
                if t.function is not None and i % 2 == 0 else t
                for i, t in enumerate(tools)], None

    def decide(request: ApprovalRequest) -> Approve | Deny | Defer:
        verdict = approval_decision(s.seed, request.call_id, request.tool_name)
        if verdict == "deny":
            return Deny(f"fuzz policy denies {request.call_id}")
        if verdict == "defer":
            return Defer()
        if approved is not None:
            approved.add((request.run_id, str(request.call_id)))
        return Approve()

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Deny | Defer:
        return decide(request)

    async def async_policy(request: ApprovalRequest, ctx: RunContext[Any]
                           ) -> Approve | Deny | Defer:
        await asyncio.sleep(0)
        return decide(request)

    return tools, async_policy if s.approval == "policy_async" else policy


def person_decisions(seed: int, round_: int, requests: list[ApprovalRequest]
                     ) -> tuple[Any, Answers]:
    """What the fuzzed person answers to a paused run's pending requests (each bound to its
    request's run: ``request.approve()``; a team's members may both wait on ``call_1``), and
    the answers by (run id, call id)."""
    rng = random.Random(f"person:{seed}:{round_}")
    verdicts = [(r, True if rng.random() < 0.6 else f"fuzz person says no to {r.call_id}")
                for r in requests]
    keyed: Answers = {(r.run_id, str(r.call_id)): verdict for r, verdict in verdicts}
    return [r.approve() if verdict is True else r.deny(str(verdict))
            for r, verdict in verdicts], keyed


def resume_cancel_drawn(seed: int) -> str | None:
    """How the first resume of a team that pauses is cancelled, if at all: ``token`` (under a
    cancelled token) or ``task`` (the task cancelled as the resume is announced, before any
    paused member goes on). A stream of its own: nothing else of the seed changes."""
    rng = random.Random(f"resume-cancel:{seed}")
    return rng.choice([None, None, None, None, "token", "task"])


def replay_drawn(seed: int, round_: int) -> bool:
    """Whether the snapshot of this resume is replayed once the resume ended."""
    return random.Random(f"replay:{seed}:{round_}").random() < 0.3


async def replay(agent: Agent[Any, Any], snapshot: Any, answers: Any,
                 stamped: list[tuple[str, str]]) -> list[str]:
    """Resume a snapshot that was resumed already: 10 it raises ``SnapshotConsumed`` and runs
    no tool (``stamped``: the members' side effects so far)."""
    entered, stamps = dict(ENTERED), list(stamped)
    found = []
    try:
        await agent.resume(snapshot, answers)
        found.append("10 a replayed snapshot was resumed again")
    except SnapshotConsumed:
        pass
    except (AgentError, ValueError, TypeError) as exc:
        found.append(f"10 a replayed snapshot raised {type(exc).__name__}, not SnapshotConsumed")
    if dict(ENTERED) != entered or stamped != stamps:
        found.append("10 a replayed snapshot ran tools")
    return found


def claimed(error: BaseException | None) -> bool:
    """Whether a resume that ended with ``error`` claimed its snapshot (a refused snapshot
    did not: nothing of it ran, and a replay of it is not consumed)."""
    return error is None or (isinstance(error, AgentError)
                             and not isinstance(error, SnapshotError))


def check_approval(events: list[Event], answers: list[Answers], result: RunResult[Any]
                   ) -> list[str]:
    """10: pauses, resumes and decisions agree between events, trace, answers and history
    (a team's: every nested run's records)."""
    found: list[str] = []
    paused = [e for e in events if isinstance(e, RunPaused)]
    resumed = [e for e in events if isinstance(e, RunResumed)]
    pauses = result.trace.pauses
    if len(pauses) != len(paused):
        found.append(f"10 the trace records {len(pauses)} pauses, on_pause fired {len(paused)}")
    if len(resumed) != len(answers):
        found.append(f"10 on_resume fired {len(resumed)} times for {len(answers)} resumes")
    records = _records(result.trace)
    for pause, given in zip(pauses, answers, strict=False):
        asked = sorted((p.get("run_id") or result.run_id, p["call_id"]) for p in pause["pending"])
        if sorted(given) != asked:
            found.append("10 the person was asked about other calls than the trace's pending")
        for key, answer in given.items():
            record = records.get(key)
            if record is None:
                found.append("10 a deferred call has no trace record after the resume")
            elif record.approval is not None:
                expected: dict[str, Any] = {"decision": "approved", "by": "person"} if (
                    answer is True) else {"decision": "denied", "reason": answer, "by": "person"}
                if record.approval != expected:
                    found.append(f"10 a deferred call's approval {record.approval} is not the "
                                 "person's answer")
    for record in records.values():
        approval = record.approval
        if approval is not None and approval["decision"] == "denied" and (
                record.result is not None or record.error != approval["reason"]):
            found.append("10 a denied call was not answered with the denial's reason")
        if approval is not None and approval["decision"] == "deferred":
            found.append("10 a call's record says deferred after the run went on")
    own = result.trace.tool_calls
    denied_events = {e.call.id for e in events
                     if isinstance(e, ToolResultEvent) and e.error_type == "denied"}
    denied_records = {r.call_id for r in own
                      if r.approval is not None and r.approval["decision"] == "denied"}
    if denied_events != denied_records:
        found.append("10 the denied calls differ between ToolResultEvents and trace records")
    if result.paused and result.snapshot is None:
        found.append("10 a paused result has no snapshot")
    return found


def _records(trace: Trace) -> dict[tuple[str, str], ToolCallRecord]:
    """Every call record of the trace and of the runs nested under its calls, by (run id,
    call id)."""
    found = {(trace.run_id, r.call_id): r for r in trace.tool_calls}
    for record in trace.tool_calls:
        if record.run is not None:
            found.update(_records(record.run))
    return found

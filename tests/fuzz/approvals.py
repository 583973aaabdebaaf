"""Tool approval in the fuzzed runs: the agent's policy, tools that require approval, and the
invariants of pausing and resuming (numbered 10).

A scenario with ``approval`` set gets a policy that approves, denies or defers each call (by a
hash of the seed and the call, so a run is reproducible), or copies of its tools that require
approval. Paused runs are resumed by the runner with the fuzzed person's answers, and every
invariant of the loop is then checked on the whole run, across its pauses.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from toolcycle import ApprovalRequest, Approve, Defer, Deny, RunContext, RunResult, Tool
from toolcycle.events import Event, RunPaused, RunResumed, ToolResultEvent

from .scenario import Scenario, approval_decision
from .tools import ALL_TOOLS

#: A run is resumed at most this often (each pause needs a new model turn, so this is never
#: reached by a scenario that ends: the limits stop the loop long before).
MAX_RESUMES = 60


def approval_setup(s: Scenario) -> tuple[list[Tool[Any]], Any]:
    """The scenario's tools and the agent's approval policy (or None)."""
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
        return Defer() if verdict == "defer" else Approve()

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Deny | Defer:
        return decide(request)

    async def async_policy(request: ApprovalRequest, ctx: RunContext[Any]
                           ) -> Approve | Deny | Defer:
        await asyncio.sleep(0)
        return decide(request)

    return tools, async_policy if s.approval == "policy_async" else policy


def check_approval(events: list[Event], answers: list[dict[str, bool | str]],
                   result: RunResult[Any]) -> list[str]:
    """10: pauses, resumes and decisions agree between events, trace, answers and history."""
    found: list[str] = []
    paused = [e for e in events if isinstance(e, RunPaused)]
    resumed = [e for e in events if isinstance(e, RunResumed)]
    pauses = result.trace.pauses
    if len(pauses) != len(paused):
        found.append(f"10 the trace records {len(pauses)} pauses, on_pause fired {len(paused)}")
    if len(resumed) != len(answers):
        found.append(f"10 on_resume fired {len(resumed)} times for {len(answers)} resumes")
    records = {r.call_id: r for r in result.trace.tool_calls}
    for pause, given in zip(pauses, answers, strict=False):
        if sorted(given) != sorted(p["call_id"] for p in pause["pending"]):
            found.append("10 the person was asked about other calls than the trace's pending")
        for call_id, answer in given.items():
            record = records.get(call_id)
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
    denied_events = {e.call.id for e in events
                     if isinstance(e, ToolResultEvent) and e.error_type == "denied"}
    denied_records = {r.call_id for r in records.values()
                      if r.approval is not None and r.approval["decision"] == "denied"}
    if denied_events != denied_records:
        found.append("10 the denied calls differ between ToolResultEvents and trace records")
    if result.paused and result.snapshot is None:
        found.append("10 a paused result has no snapshot")
    return found

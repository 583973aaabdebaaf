"""Tool approval: the typed decisions a policy (or a person) gives about a tool call.

A call needs a decision when its tool says ``requires_approval=True``, or for every call when
the agent has an ``approval=`` policy. The policy ``approve(request, ctx)`` (sync or async)
returns :class:`Approve`, :class:`Deny` (with the reason the model is told) or :class:`Defer`
(a person decides: the run pauses, see :mod:`toolcycle.run.snapshot`). Without a policy, calls
to tools that require approval are deferred.

Decisions are classes rather than strings so that a typo is a type error and a denial cannot
lose its reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from .context import RunContext

#: Who took a decision: the agent's policy, the default for tools that require approval (a
#: deferral), or a person answering a paused run (``agent.resume(approvals=...)``).
DecidedBy = Literal["policy", "default", "person"]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call."""

    by: DecidedBy = "policy"


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call; the model receives ``reason`` as an error observation."""

    reason: str
    by: DecidedBy = "policy"


@dataclass(frozen=True, slots=True)
class Defer:
    """A person decides: the run pauses with the call in ``result.pending_approvals``."""

    by: DecidedBy = "policy"


Decision = Approve | Deny | Defer


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call waiting for a decision: what a policy receives and a paused run lists."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    #: The tool says ``requires_approval=True`` (a policy may approve other tools silently).
    requires_approval: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "tool_name": self.tool_name,
                "arguments": self.arguments, "requires_approval": self.requires_approval}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApprovalRequest:
        return cls(str(data["call_id"]), str(data["tool_name"]), dict(data["arguments"]),
                   bool(data.get("requires_approval", False)))


#: ``approve(request, ctx)``: the agent-level policy, sync or async.
ApprovalPolicy = Callable[[ApprovalRequest, RunContext[Any]], Decision | Awaitable[Decision]]

#: What ``agent.resume(approvals=...)`` takes per pending call: ``True`` to run it, or the
#: reason (a non-empty string) to deny it.
ApprovalAnswer = bool | str


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """The JSON form used by snapshots and traces."""
    if isinstance(decision, Deny):
        return {"decision": "denied", "reason": decision.reason, "by": decision.by}
    if isinstance(decision, Defer):
        return {"decision": "deferred", "by": decision.by}
    return {"decision": "approved", "by": decision.by}


def decision_from_dict(data: dict[str, Any]) -> Decision:
    kind, by = data.get("decision"), data.get("by", "policy")
    if by not in ("policy", "default", "person"):
        raise ValueError(f"unknown decider {by!r}")
    if kind == "denied":
        return Deny(str(data["reason"]), by)
    if kind == "deferred":
        return Defer(by)
    if kind == "approved":
        return Approve(by)
    raise ValueError(f"unknown decision {kind!r}")


def answer_problems(pending: list[ApprovalRequest], approvals: object) -> list[str]:
    """Why ``approvals`` cannot resume a run waiting on ``pending`` (every problem at once)."""
    if not isinstance(approvals, dict):
        return [f"approvals must be a dict of call id -> True or a reason to deny, got "
                f"{type(approvals).__name__}"]
    problems: list[str] = []
    waiting = {request.call_id: request for request in pending}
    for call_id, answer in approvals.items():
        if call_id not in waiting:
            problems.append(f"approvals: {call_id!r} is not a pending call "
                            f"(pending: {', '.join(waiting) or 'none'})")
        elif answer is not True and not (isinstance(answer, str) and answer.strip()):
            problems.append(f"approvals[{call_id!r}] must be True or a non-empty reason to "
                            f"deny, got {answer!r}")
    missing = [f"{r.call_id} ({r.tool_name})" for r in pending if r.call_id not in approvals]
    if missing:
        problems.append(f"approvals: no answer for {', '.join(missing)}: every pending call "
                        "needs True or a reason to deny")
    return problems

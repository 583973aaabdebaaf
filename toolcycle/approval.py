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

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._errors_base import ConfigurationError
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


class CallId(str):
    """A pending call's id, as a string equal to (and hashing like) the model's call id, that
    also remembers the run it belongs to and the digest of the arguments a person was shown.

    So the form first taught, ``agent.resume(snapshot, {request.call_id: True})``, is bound
    too: a key taken from one run's ``pending_approvals`` is refused by another run's snapshot
    that happens to pause on the same id (``call_1`` starts every scripted run), or on other
    arguments. A plain string key carries no binding (see ``toolcycle.run.answers``).
    """

    run_id: str
    arguments_sha256: str

    def __new__(cls, value: str, run_id: str, arguments_sha256: str) -> CallId:
        made = super().__new__(cls, value)
        made.run_id, made.arguments_sha256 = run_id, arguments_sha256
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return CallId, (str(self), self.run_id, self.arguments_sha256)


@dataclass(frozen=True, slots=True)
class Via:
    """One step of the way from the run you started down to a call inside a team: the call of
    an agent that runs another agent (``Agent.as_tool``). A paused team's pending requests
    name the calls they wait under, so a person sees who asked (docs/teams.md)."""

    agent_name: str  # the calling agent
    run_id: str  # the calling agent's run
    call_id: str  # its call that runs the member
    tool_name: str  # the member's tool

    def to_dict(self) -> dict[str, str]:
        return {"agent_name": self.agent_name, "run_id": self.run_id, "call_id": self.call_id,
                "tool_name": self.tool_name}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Via:
        values = [data["agent_name"], data["run_id"], data["call_id"], data["tool_name"]]
        if not all(isinstance(value, str) for value in values):
            raise TypeError("a step of via holds agent_name, run_id, call_id and tool_name "
                            "(strings)")
        return cls(*values)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call waiting for a decision: what a policy receives and a paused run lists.

    A person answers a paused run's request with :meth:`approve` or :meth:`deny`: the
    :class:`Approval` they make names this run, this call and a digest of these arguments, so
    it cannot be replayed onto another run's snapshot that happens to reuse the call id. With
    ``run_id`` set, ``call_id`` is a :class:`CallId` bound the same way.
    """

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    #: The tool says ``requires_approval=True`` (a policy may approve other tools silently).
    requires_approval: bool = False
    #: The run the call belongs to.
    run_id: str = ""
    #: The agent whose call it is (set on a paused run's requests).
    agent_name: str = ""
    #: Inside a team: the calls of the agents above that led to the run making this call,
    #: outermost first (empty for the run's own calls).
    via: tuple[Via, ...] = ()

    def __post_init__(self) -> None:
        if self.run_id and not isinstance(self.call_id, CallId):
            object.__setattr__(self, "call_id", CallId(
                self.call_id, self.run_id, arguments_digest(self.arguments)))

    @property
    def arguments_sha256(self) -> str:
        """SHA-256 of the arguments' canonical JSON: what an :class:`Approval` is bound to."""
        call_id = self.call_id
        if isinstance(call_id, CallId) and call_id.run_id == self.run_id:
            return call_id.arguments_sha256
        return arguments_digest(self.arguments)

    def approve(self) -> Approval:
        """A person's yes to this call, of this run, with these arguments."""
        return Approval(self.run_id, str(self.call_id), self.arguments_sha256, True)

    def deny(self, reason: str) -> Approval:
        """A person's no; ``reason`` (non-empty) is the error observation the model reads."""
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigurationError([f"deny(): the reason must be a non-empty string, got "
                                      f"{reason!r}"], subject=f"answer to {self.call_id}")
        return Approval(self.run_id, str(self.call_id), self.arguments_sha256, False, reason)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (a snapshot's ``pending``, a batch record): the run is the record's;
        a team member's call adds its ``run_id``, ``agent_name`` and ``via``."""
        data: dict[str, Any] = {
            "call_id": str(self.call_id), "tool_name": self.tool_name,
            "arguments": self.arguments, "requires_approval": self.requires_approval}
        if self.via:  # a member's call (a run's own calls need not name their run or agent)
            data["run_id"], data["agent_name"] = self.run_id, self.agent_name
            data["via"] = [step.to_dict() for step in self.via]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApprovalRequest:
        via = data.get("via", [])
        if not isinstance(via, list) or not all(isinstance(step, dict) for step in via):
            raise TypeError("via: must be a list of objects")
        return cls(str(data["call_id"]), str(data["tool_name"]), dict(data["arguments"]),
                   bool(data.get("requires_approval", False)), str(data.get("run_id", "")),
                   str(data.get("agent_name", "")), tuple(Via.from_dict(step) for step in via))


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's answer to one pending call, bound to what they were shown: the run, the call
    and the SHA-256 of the call's canonical arguments. ``approved`` runs the call; otherwise
    ``reason`` is what the model is told. Made by :meth:`ApprovalRequest.approve` and
    :meth:`ApprovalRequest.deny`; :meth:`to_dict` / :meth:`from_dict` carry it through JSON
    (a web form, a queue). Resuming refuses an approval that does not match the snapshot's
    pending call (:class:`~toolcycle.errors.ApprovalMismatch`) and runs nothing."""

    run_id: str
    call_id: str
    arguments_sha256: str
    approved: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "call_id": self.call_id,
                "arguments_sha256": self.arguments_sha256, "approved": self.approved,
                "reason": self.reason}

    @classmethod
    def from_dict(cls, data: object) -> Approval:
        """An approval from its JSON form; raises :class:`ConfigurationError` listing what is
        missing or of the wrong type (it usually comes from outside the process)."""
        if not isinstance(data, dict):
            raise ConfigurationError([f"an approval is a JSON object, got "
                                      f"{type(data).__name__}"], subject="approval")
        problems = [f"{key}: a non-empty string is needed" for key in
                    ("run_id", "call_id", "arguments_sha256")
                    if not (isinstance(data.get(key), str) and data[key])]
        approved, reason = data.get("approved"), data.get("reason")
        if not isinstance(approved, bool):
            problems.append(f"approved: true or false is needed, got {approved!r}")
        elif not approved and not (isinstance(reason, str) and reason.strip()):
            problems.append("reason: a denial needs a non-empty reason")
        if problems:
            raise ConfigurationError(problems, subject="approval")
        return cls(data["run_id"], data["call_id"], data["arguments_sha256"], approved is True,
                   reason if isinstance(reason, str) else None)


def arguments_digest(arguments: Any) -> str:
    """SHA-256 of ``arguments`` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    import hashlib  # loads OpenSSL: only once a run pauses or a person answers
    import json

    payload = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                         default=str).encode()
    return hashlib.sha256(payload).hexdigest()


#: ``approve(request, ctx)``: the agent-level policy, sync or async.
ApprovalPolicy = Callable[[ApprovalRequest, RunContext[Any]], Decision | Awaitable[Decision]]

#: What ``agent.resume(approvals=...)`` takes per pending call: an :class:`Approval` (the
#: bound form), or, deprecated and refused for signed snapshots, ``True`` to run the call or
#: the reason (a non-empty string) to deny it.
ApprovalAnswer = Approval | bool | str

#: ``agent.resume``'s ``approvals``: call id -> answer, or the :class:`Approval` values alone.
Approvals = Mapping[str, ApprovalAnswer] | Iterable[Approval]


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


def bind_to_snapshot(snapshot: Mapping[str, Any], answers: Mapping[str, ApprovalAnswer]
                     ) -> dict[str, ApprovalAnswer]:
    """``answers`` by call id (``True`` or a reason to deny), bound to ``snapshot``'s pending
    calls (its run id, each call's argument digest), as :class:`Approval` values.

    For a person who decided about *this* snapshot by call id: a command line naming the
    snapshot file, a batch's decisions naming the input line. A paused team's snapshot holds
    its members' under ``members``: their pending calls are bound to their runs. An id that is
    not pending, or pending in two runs of the team, keeps its bare answer, so that the resume
    lists it with every other problem. The snapshot is only read here; the resume checks it in
    full."""
    shown: dict[str, list[tuple[str, Any]]] = {}
    for run_id, call in _pending_calls(snapshot, 0):
        shown.setdefault(call["call_id"], []).append((run_id, call.get("arguments")))
    bound: dict[str, ApprovalAnswer] = {}
    for call_id, answer in answers.items():
        where = shown.get(call_id, [])
        if isinstance(answer, Approval) or len(where) != 1:
            bound[call_id] = answer
        else:
            [(run_id, arguments)] = where
            bound[call_id] = Approval(run_id, call_id, arguments_digest(arguments),
                                      answer is True, None if answer is True else str(answer))
    return bound


def _pending_calls(snapshot: object, depth: int) -> list[tuple[str, dict[str, Any]]]:
    """(run id, pending call) of a snapshot and of its members' (read defensively: the
    snapshot is not checked yet; nesting beyond 64 is not followed)."""
    if not isinstance(snapshot, Mapping) or depth > 64:
        return []
    run_id, pending = snapshot.get("run_id"), snapshot.get("pending")
    found = [(run_id, call) for call in (pending if isinstance(pending, list) else [])
             if isinstance(run_id, str) and isinstance(call, dict)
             and isinstance(call.get("call_id"), str)]
    members = snapshot.get("members")
    for member in (members.values() if isinstance(members, Mapping) else ()):
        found.extend(_pending_calls(member, depth + 1))
    return found

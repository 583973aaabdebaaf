"""A person's answers to a paused run, checked against the calls it waits on.

An answer is bound to what the person was shown (:class:`~toolcycle.approval.Approval`: the
run, the call, a digest of the arguments), because call ids are not unique across runs
(``call_1`` starts every scripted run; a local model's text protocol numbers calls per turn),
so an answer keyed by call id alone fits any other run paused on the same id: r2-04 deleted
``/etc/passwd`` with a yes given for ``/tmp/a.log``. Every mismatch is refused with
:class:`~toolcycle.errors.ApprovalMismatch` and nothing runs.

The form first taught, ``{request.call_id: True}`` (or a reason to deny), stays: the key taken
from ``result.pending_approvals`` is a :class:`~toolcycle.approval.CallId`, which carries the
same binding. A *plain* string key (typed by hand, or read back from JSON) binds nothing: it is
refused for a signed snapshot (``snapshot_key=`` promises that only calls a person saw run)
and accepted with a :class:`DeprecationWarning` for an unsigned one, whose calls anyone who can
write it can forge anyway.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from ..approval import Approval, ApprovalRequest, Approve, CallId, Decision, Deny
from ..errors import ApprovalMismatch, ConfigurationError
from .paused import PausedRun

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bind_answers(run_id: str, pending: list[ApprovalRequest], approvals: object, *,
                 signed: bool) -> dict[str, Decision]:
    """The decisions ``approvals`` give the pending calls of run ``run_id``; raises
    :class:`ApprovalMismatch` for answers that belong elsewhere and :class:`ConfigurationError`
    for missing or malformed ones (every problem at once)."""
    subject = f"resume of run {run_id!r}"
    items = _items(approvals)
    if isinstance(items, str):
        raise ConfigurationError([items], subject=subject)
    bound = _Bound()
    decisions = bound.bind(run_id, pending, items, signed)
    bound.raise_problems(subject)
    return decisions


def bind_team(top: PausedRun, approvals: object) -> None:
    """Bind the person's answers to every paused run of a team (``PausedRun.decisions``), each
    answer to the run it names: an :class:`Approval`'s run, the run of a
    :class:`~toolcycle.approval.CallId` key, else the one run whose pending calls hold that id.
    A bare id pending in two runs answers neither (each member numbers its own calls). Every
    problem of every run is raised at once, before anything runs."""
    runs = list(top.walk())
    if len(runs) == 1:
        top.decisions = bind_answers(top.run_id, top.pending, approvals, signed=top.signed)
        return
    subject = f"resume of run {top.run_id!r}"
    items = _items(approvals)
    if isinstance(items, str):
        raise ConfigurationError([items], subject=subject)
    by_run = {run.run_id: run for run in runs}
    routed: dict[str, list[tuple[str, Any]]] = {run.run_id: [] for run in runs}
    bound = _Bound()
    for call_id, answer in items:
        named = (answer.run_id if isinstance(answer, Approval)
                 else call_id.run_id if isinstance(call_id, CallId) else None)
        holders = [run for run in runs if any(r.call_id == call_id for r in run.pending)]
        if named in by_run and by_run[named] in holders:
            routed[by_run[named].run_id].append((call_id, answer))
        elif len(holders) > 1:
            agents = ", ".join(f"{r.pending[0].agent_name or '?'} (run {r.run_id})"
                               for r in holders)
            bound.problems.append(
                f"approvals[{call_id!r}]: {call_id!r} waits in several runs of the team "
                f"({agents}); answer with the request of result.pending_approvals "
                "(request.approve(), request.deny(reason)), which names its run")
        else:
            routed[(holders[0] if holders else top).run_id].append((call_id, answer))
    for run in runs:
        run.decisions = bound.bind(run.run_id, run.pending, routed[run.run_id],
                                   top.signed or run.signed)
    bound.raise_problems(subject)


class _Bound:
    """The problems found binding answers to one or more runs, raised together."""

    __slots__ = ("bare", "mismatches", "problems")

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.mismatches: list[str] = []
        self.bare: list[str] = []

    def bind(self, run_id: str, pending: list[ApprovalRequest], items: list[tuple[str, Any]],
             signed: bool) -> dict[str, Decision]:
        """The decisions ``items`` give run ``run_id``'s ``pending`` calls (problems noted)."""
        problems, mismatches = self.problems, self.mismatches
        waiting = {request.call_id: request for request in pending}
        decisions: dict[str, Decision] = {}
        for call_id, answer in items:
            request = waiting.get(call_id)
            if request is None:
                problems.append(f"approvals: {call_id!r} is not a pending call "
                                f"(pending: {', '.join(waiting) or 'none'})")
            elif call_id in decisions:
                problems.append(f"approvals: two answers for {call_id!r}")
            elif isinstance(answer, Approval):
                found = _mismatches(run_id, request, answer)
                mismatches.extend(found)
                if not found:
                    decisions[str(call_id)] = (Approve("person") if answer.approved
                                               else Deny(str(answer.reason), "person"))
            elif answer is True or (isinstance(answer, str) and answer.strip()):
                decision = Approve("person") if answer is True else Deny(str(answer), "person")
                if isinstance(call_id, CallId):  # the key from pending_approvals binds it
                    found = _mismatches(run_id, request, Approval(
                        call_id.run_id, str(call_id), call_id.arguments_sha256, True))
                    mismatches.extend(found)
                    if not found:
                        decisions[str(call_id)] = decision
                elif signed:
                    mismatches.append(
                        f"approvals[{call_id!r}]: a bare {answer!r} under a plain call id "
                        "names no run; a signed snapshot takes only answers bound to its run "
                        "(the call id of result.pending_approvals, request.approve(), "
                        "request.deny(reason))")
                else:
                    self.bare.append(call_id)
                    decisions[call_id] = decision
            else:
                problems.append(f"approvals[{call_id!r}] must be True or a non-empty reason to "
                                "deny (or an Approval: request.approve(), request.deny(reason)), "
                                f"got {answer!r}")
        answered = {call_id for call_id, _ in items}
        missing = [f"{r.call_id} ({r.tool_name})" for r in pending if r.call_id not in answered]
        if missing:
            problems.append(f"approvals: no answer for {', '.join(missing)}: every pending "
                            "call needs request.approve() or request.deny(reason)")
        return decisions

    def raise_problems(self, subject: str) -> None:
        if self.mismatches:
            raise ApprovalMismatch(self.mismatches + self.problems, subject=subject)
        if self.problems:
            raise ConfigurationError(self.problems, subject=subject)
        if self.bare:
            warnings.warn(
                f"answers keyed by call id alone ({', '.join(self.bare)}) are deprecated: they "
                "are not bound to the run, so they could answer another run's snapshot; answer "
                "with request.approve() / request.deny(reason) from result.pending_approvals",
                DeprecationWarning, skip_file_prefixes=(_PACKAGE,))


def _items(approvals: object) -> list[tuple[str, Any]] | str:
    """``approvals`` as (call id, answer) pairs, or why it is not a form ``resume`` takes."""
    if isinstance(approvals, Mapping):
        return [(key if isinstance(key, str) else repr(key), value)
                for key, value in approvals.items()]
    if isinstance(approvals, Iterable) and not isinstance(approvals, str | bytes):
        values = list(approvals)
        if all(isinstance(value, Approval) for value in values):
            return [(value.call_id, value) for value in values]
    return ("approvals must be a list of Approval (request.approve(), request.deny(reason)) "
            f"or a dict of call id -> Approval, got {type(approvals).__name__}")


def _mismatches(run_id: str, request: ApprovalRequest, answer: Approval) -> list[str]:
    """Why ``answer`` is not an answer to ``request`` of run ``run_id``."""
    found = []
    where = f"approvals[{request.call_id!r}]"
    if answer.run_id != run_id:
        found.append(f"{where}: given for run {answer.run_id!r}, the snapshot is run "
                     f"{run_id!r}")
    if answer.call_id != request.call_id:
        found.append(f"{where}: an answer to call {answer.call_id!r}")
    if answer.arguments_sha256 != request.arguments_sha256:
        found.append(f"{where}: given for other arguments of {request.tool_name} than the "
                     "snapshot's (their digests differ)")
    if not answer.approved and not (isinstance(answer.reason, str) and answer.reason.strip()):
        found.append(f"{where}: a denial needs a non-empty reason")
    return found

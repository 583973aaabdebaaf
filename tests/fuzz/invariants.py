"""The loop's promises, checked on what one fuzzed run left behind.

Each check returns one-line reasons prefixed with the invariant's number (the numbering of
the "Run engine v2" issue, plus 7-9 for cancellation, stored traces and streams). A reason
names what disagreed, so that grouping reasons by their text without numbers and ids gives
the violation classes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolcycle import AgentError, RunResult, Usage
from toolcycle.events import (
    AttemptEnd,
    AttemptStart,
    Event,
    IterationStart,
    ModelResponseEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from toolcycle.run.head_start import HEAD_START_ID
from toolcycle.testing import HistoryChecker, ProtocolViolation

from .approvals import check_approval
from .members import check_members, check_stamps, member_usage, own_events
from .scenario import Answer, Scenario

REASONS = {"completed", "max_iterations", "max_tool_calls", "token_budget", "timeout",
           "max_attempts", "cancelled", "model_error", "error", "repeated_calls", "max_cost"}
ACTIONS = {"answered", "final_answer", "partial", "raised"}
#: Error code -> the termination reasons it may carry.
CODE_REASONS = {
    "CANCELLED": {"cancelled"}, "MAX_ITERATIONS": {"max_iterations"}, "TIMEOUT": {"timeout"},
    "USAGE_LIMIT": {"max_tool_calls", "token_budget", "max_cost"}, "MAX_ATTEMPTS": {"max_attempts"},
    "INVALID_RESPONSE": {"max_attempts"}, "SUBMIT_BEFORE_OUTPUT": {"max_attempts"},
    "MODEL_ERROR": {"model_error"}, "RATE_LIMITED": {"model_error"}, "AGENT_ERROR": {"error"},
    "REPEATED_CALLS": {"repeated_calls"},
}
LIMIT_REASONS = {"max_iterations", "max_tool_calls", "token_budget", "timeout", "max_cost",
                 "repeated_calls"}


@dataclass
class Observation:
    """Everything one run left behind, gathered by the runner."""

    scenario: Scenario
    result: RunResult[Any] | None = None
    error: BaseException | None = None
    events: list[Event] = field(default_factory=list)
    stream_events: list[Event] | None = None
    reported: RunResult[Any] | None = None  # the result handed to on_success / on_failure
    task_cancelled: bool = False  # the test cancelled the run's task while it ran
    cancel_may_be_late: bool = False  # after the outcome, or deferred by asyncio
    token_cancelled_by: str | None = None  # "loop" or "thread", when the token fired
    requests_after_cancel: int = 0
    leftover_tasks: list[str] = field(default_factory=list)
    async_bodies_after: int = 0
    sync_bodies_after: int = 0
    pool_busy_after: int = 0
    stored_status: str | None = None
    callback_raises: int = 0
    validator_bug_raised: bool = False
    hung: bool = False
    #: The fuzzed person's answers, one dict per resume of a paused run.
    answers: list[dict[str, bool | str]] = field(default_factory=list)
    #: Tool bodies entered in the run, per tool (tests/fuzz/tools.ENTERED).
    entered: dict[str, int] = field(default_factory=dict)
    #: The fuzzed run's id (a member's events are told apart by theirs).
    run_id: str = ""
    #: (run id, call id) of the calls the policy approved, and of the members' ``stamp`` calls
    #: that ran (M4); what the replays of resumed snapshots found (10), and how many ran.
    approved: set[tuple[str, str]] = field(default_factory=set)
    stamped: list[tuple[str, str]] = field(default_factory=list)
    replays: list[str] = field(default_factory=list)
    replayed: int = 0
    #: What the run did, beyond what was drawn (for the feature counts).
    seen: set[str] = field(default_factory=set)

    @property
    def final(self) -> RunResult[Any] | None:
        """The result to check: returned, carried by the error, or reported to a callback."""
        if self.result is not None:
            return self.result
        if isinstance(self.error, AgentError) and self.error.result is not None:
            return self.error.result
        return self.reported


def check(obs: Observation) -> list[str]:
    found = _check_outcome(obs) + _check_leftovers(obs) + obs.replays
    if obs.scenario.members:  # a team: members' events are checked with their runs
        obs.events, unclosed = own_events(obs.events, obs.run_id)
        if obs.stream_events is not None:
            obs.stream_events = own_events(obs.stream_events, obs.run_id)[0]
        found += unclosed
        if obs.scenario.approval is not None:  # M4 (side effects), whatever the outcome
            person = {key for given in obs.answers for key, yes in given.items() if yes is True}
            found += check_stamps(obs.stamped, obs.approved | person)
    result = obs.final
    if result is None:
        if not obs.hung:
            found.append("4 the run ended without a result (none returned, carried or reported)")
        return found
    if result.paused:  # only a cancel landing while the pause was being reported stops here
        still = f"10 the run is still paused after {len(obs.answers)} resumes"
        return found if obs.task_cancelled else [*found, still]
    if obs.scenario.approval is not None:
        found += check_approval(obs.events, obs.answers, result)
    found += check_members(result, _check_history)
    return (found + _check_history(result) + _check_agreement(obs, result) + _check_budgets(obs)
            + _check_termination(obs, result) + _check_trace_status(obs, result)
            + _check_cancel(obs) + _check_stream(obs) + _check_store(obs))


# -- 4: what may be raised ------------------------------------------------------------------


def _check_outcome(obs: Observation) -> list[str]:
    error = obs.error
    if obs.hung:
        return ["4 the run did not end within 10 s"]
    if obs.task_cancelled and not obs.cancel_may_be_late and \
            not isinstance(error, asyncio.CancelledError):
        got = "a result" if error is None else type(error).__name__
        return [f"4 task.cancel() was swallowed: the run's task ended with {got}, "
                "not CancelledError"]
    if error is None:
        return []
    if isinstance(error, asyncio.CancelledError):
        if obs.task_cancelled:
            return []
        return ["4 asyncio.CancelledError escaped a run whose task nobody cancelled"]
    if not isinstance(error, AgentError):
        return [f"4 undocumented exception {type(error).__name__}: {_short(error)}"]
    cause = error.__cause__
    if isinstance(cause, ProtocolViolation):
        return [f"4 the history broke the provider protocol: {_short(cause)}"]
    if error.code not in CODE_REASONS:
        return [f"4 undocumented error code {error.code}"]
    if error.code == "AGENT_ERROR" and not obs.validator_bug_raised:
        what = f"{type(cause).__name__}: {_short(cause)}" if cause else _short(error)
        return [f"4 crash (AGENT_ERROR): {what}"]
    if error.code in ("MODEL_ERROR", "RATE_LIMITED") and obs.scenario.model_error_at is None:
        return [f"4 MODEL_ERROR from a model that never fails: {_short(error)}"]
    if error.code == "CANCELLED" and obs.token_cancelled_by is None:
        return [f"4 Cancelled raised although nobody cancelled the token: {_short(error)}"]
    return []


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:160]


# -- 1: the history -------------------------------------------------------------------------


def _check_history(result: RunResult[Any]) -> list[str]:
    found: list[str] = []
    messages = result.messages
    seen: Counter[str] = Counter()
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            ids = [c.id for c in message.tool_calls]
            seen.update(ids)
            after = messages[index + 1] if index + 1 < len(messages) else None
            answered = [r.call_id for r in after.results] if after is not None and \
                after.role == "tool" else []
            if answered != ids:
                found.append(f"1 calls {ids} answered by {answered} in the next message")
        elif message.role == "tool":
            before = messages[index - 1] if index else None
            if before is None or before.role != "assistant" or not before.tool_calls:
                found.append("1 a tool message answers no preceding tool call")
    repeated = sorted(i for i, n in seen.items() if n > 1)
    if repeated:
        found.append(f"1 tool call ids not unique across the history: {repeated}")
    checker_found = _protocol(result)
    return found + checker_found


def _protocol(result: RunResult[Any]) -> list[str]:
    """The history must be one a provider accepts when the conversation goes on."""
    from toolcycle import Message

    try:
        HistoryChecker("both").check([*result.messages, Message.user("continue")])
    except ProtocolViolation as exc:
        return [f"1 the history cannot be continued: {_short(exc)}"]
    return []


# -- 2: trace, events, messages and usage agree ---------------------------------------------


def _check_agreement(obs: Observation, result: RunResult[Any]) -> list[str]:
    found: list[str] = []
    new = result.new_messages
    msg_calls = [c for m in new if m.role == "assistant" for c in m.tool_calls]
    msg_results = {r.call_id: r for m in new if m.role == "tool" for r in m.results}
    msg_result_ids = Counter(r.call_id for m in new if m.role == "tool" for r in m.results)
    ev_calls = [e for e in obs.events if isinstance(e, ToolCallEvent)]
    ev_results = [e for e in obs.events if isinstance(e, ToolResultEvent)]
    steps = result.trace.steps
    records = [r for s in steps for r in s.tool_calls]
    counts = {
        "message calls": Counter(c.id for c in msg_calls),
        "message results": msg_result_ids,
        "ToolCallEvents": Counter(e.call.id for e in ev_calls),
        "ToolResultEvents": Counter(e.call.id for e in ev_results),
        "trace records": Counter(r.call_id for r in records),
    }
    base = counts["message calls"]
    for label, counted in counts.items():
        if counted != base:
            missing = sum((base - counted).values())
            extra = sum((counted - base).values())
            found.append(f"2 {label} disagree with the calls in the new messages "
                         f"({missing} missing, {extra} extra)")
    unique = {i for i, n in base.items() if n == 1}
    events_by_id = {e.call.id: e for e in ev_results if e.call.id in unique}
    for record in records:
        if record.call_id not in unique:
            continue
        message = msg_results.get(record.call_id)
        event = events_by_id.get(record.call_id)
        trace_text = (record.error, True) if record.error is not None else (record.result, False)
        if message is not None and (message.content, message.is_error) != trace_text:
            found.append(f"2 a {record.kind} call's result differs between trace and message — "
                         f"trace {_clip(trace_text[0])!r}, message {_clip(message.content)!r}")
        if event is not None and (event.result.content, event.result.is_error) != trace_text:
            found.append(f"2 a {record.kind} call's result differs between trace and event — "
                         f"trace {_clip(trace_text[0])!r}, event {_clip(event.result.content)!r}")
        if event is not None and (event.attempt, event.iteration) != (record.attempt,
                                                                      record.iteration):
            found.append("2 a ToolResultEvent's attempt/iteration differ from its trace record")
        if record.name == "probe" and record.result is not None:
            try:
                seen = json.loads(record.result)
            except ValueError:  # cut by max_observation_chars
                continue
            if (seen["attempt"], seen["iteration"], seen["call_id"]) != (
                    record.attempt, record.iteration, record.call_id):
                found.append(f"2 ctx seen by a tool {seen} differs from its trace record")
    return found + _check_steps(obs, result, msg_calls)


def _clip(text: str | None) -> str:
    return (text or "")[:60]


def _check_steps(obs: Observation, result: RunResult[Any], msg_calls: list[Any]) -> list[str]:
    found: list[str] = []
    steps = result.trace.steps
    total = Usage()
    for step in steps:
        total.add(step.usage)
    if total + member_usage(result) != result.usage:  # a team's: its members' too
        found.append(f"2 usage {result.usage.to_dict()} is not the sum of the steps' "
                     f"{total.to_dict()} and the members' {member_usage(result).to_dict()}")
    usage = total  # what the run's own requests and calls used
    # a head start's step (toolcycle.run.head_start) comes first: iteration 0, no request
    if any(s.iteration == 0 for s in steps[1:]) or (steps and steps[0].iteration == 0 and (
            steps[0].attempt != 1 or steps[0].usage.requests
            or not all(r.call_id.startswith(HEAD_START_ID) for r in steps[0].tool_calls))):
        found.append("2 an iteration-0 step that is no head start, or not the first")
    if steps and steps[0].iteration == 0:
        steps = steps[1:]
    if usage.requests != len(steps):
        found.append(f"2 usage.requests={usage.requests} but the trace has {len(steps)} steps")
    if usage.tool_calls != len(msg_calls):
        found.append(f"2 usage.tool_calls={usage.tool_calls} but the model made "
                     f"{len(msg_calls)} calls")
    iterations = [s.iteration for s in steps]
    if iterations != list(range(1, len(steps) + 1)):
        found.append(f"2 step iterations {iterations[:8]} are not 1..n")
    for step in steps:
        if any((r.iteration, r.attempt) != (step.iteration, step.attempt)
               for r in step.tool_calls):
            found.append("2 a trace record's iteration/attempt differ from its step's")
            break
    attempts = [s.attempt for s in steps]
    if attempts and (attempts[0] != 1 or any(b - a not in (0, 1)
                                             for a, b in itertools.pairwise(attempts))):
        found.append(f"2 step attempts {attempts[:8]} do not count up from 1")
    starts = [e.attempt for e in obs.events if isinstance(e, AttemptStart)]
    ends = [e.attempt for e in obs.events if isinstance(e, AttemptEnd)]
    recorded = [a.attempt for a in result.trace.attempts]
    if starts != list(range(1, len(starts) + 1)):
        found.append(f"2 on_attempt_start attempts {starts} are not 1..n")
    if not obs.task_cancelled and sorted(ends) != starts:
        found.append(f"2 on_attempt_start {starts} without matching on_attempt_end {ends}")
    if not obs.task_cancelled and recorded != starts:
        found.append(f"2 trace.attempts {recorded} differ from the attempts started {starts}")
    if attempts and attempts[-1] > max(starts, default=0):
        found.append("2 a step belongs to an attempt that never started")
    iteration_starts = [e for e in obs.events if isinstance(e, IterationStart)]
    if len(iteration_starts) != len(steps):
        found.append(f"2 {len(iteration_starts)} model requests started but the trace has "
                     f"{len(steps)} steps")
    keys = {(s.attempt, s.iteration) for s in steps}
    for event in obs.events:
        if isinstance(event, ModelResponseEvent) and (event.attempt, event.iteration) not in keys:
            found.append("2 a ModelResponseEvent has no trace step")
            break
    return found


# -- 3 and 6: termination and trace status --------------------------------------------------


def _check_termination(obs: Observation, result: RunResult[Any]) -> list[str]:
    termination = result.termination
    if termination is None:
        return ["3 termination is not set"]
    found: list[str] = []
    reason, action = termination.reason, termination.action
    if reason not in REASONS or action not in ACTIONS:
        return [f"3 undocumented termination {reason}/{action}"]
    error = obs.error
    if isinstance(error, AgentError):
        if action != "raised":
            found.append(f"3 a run that raised {error.code} has action {action}")
        if reason not in CODE_REASONS.get(error.code, set()):
            found.append(f"3 {error.code} raised with termination reason {reason}")
    elif isinstance(error, asyncio.CancelledError):
        if not obs.cancel_may_be_late and reason != "cancelled":
            found.append(f"3 a cancelled task reported termination reason {reason}")
    elif error is None:
        if action == "raised":
            found.append(f"3 a run that returned has action raised ({reason})")
        if action == "answered" and reason != "completed":
            found.append(f"3 answered with reason {reason}")
        if action in ("partial", "final_answer") and reason not in LIMIT_REASONS:
            found.append(f"3 {action} with reason {reason}, not a limit")
        output = result.output
        if action != "partial":
            expected = Answer if obs.scenario.structured else str
            if not isinstance(output, expected):
                found.append(f"3 success with output {type(output).__name__}, expected "
                             f"{expected.__name__}")
    trace_termination = result.trace.termination
    if trace_termination != termination.to_dict():
        found.append("3 trace.termination differs from result.termination")
    return found


def _returned_statuses(action: str) -> set[str]:
    """The statuses a run that returned may have, by how it ended (docs/status.md): a forced
    or partial answer is never a success; an answer may pass a tool's error through."""
    return ({"forced"} if action == "final_answer" else {"partial"} if action == "partial"
            else {"paused"} if action == "paused"
            else {"success", "tool_error", "ungrounded", "mismatched"})


def _check_trace_status(obs: Observation, result: RunResult[Any]) -> list[str]:
    status = result.trace.status
    error = obs.error
    if error is None:
        expected = _returned_statuses(result.termination.action)
    elif isinstance(error, asyncio.CancelledError):
        termination = result.termination
        expected = {"cancelled"}
        if obs.cancel_may_be_late and termination is not None:  # the outcome came first
            expected = (_returned_statuses(termination.action)
                        if termination.action != "raised" else
                        {"cancelled" if termination.reason == "cancelled" else "failure"})
    elif isinstance(error, AgentError) and error.code == "CANCELLED":
        expected = {"cancelled"}
    else:
        expected = {"failure"}
    if status not in expected:
        return [f"6 trace.status is {status!r}, expected {'/'.join(sorted(expected))}"]
    if result.trace.ended_at is None:
        return ["6 trace.ended_at is not set"]
    return []


# -- 11: budgets bound every tool body, whoever called it ----------------------------------


def _check_budgets(obs: Observation) -> list[str]:
    """A playbook offer (a routine standing in, a repair, a fallback) calls the agent's tools
    inside one call of the model's; those calls are bound by the same budgets."""
    if obs.scenario.approval is not None:  # resumed runs: not counted across resumes here
        return []
    found: list[str] = []
    limit = obs.scenario.run_limits.get(
        "max_tool_calls", obs.scenario.agent_limits.get("max_tool_calls"))
    ran = sum(obs.entered.values())
    if limit is not None and ran > limit:
        found.append(f"11 {ran} tool bodies ran under max_tool_calls={limit}")
    if obs.entered.get("limited", 0) > 2:
        found.append(f"11 `limited` (max_calls=2) ran {obs.entered['limited']} times")
    return found


# -- 5, 7, 8, 9: leftovers, cancellation, stored traces, streams ----------------------------


def _check_leftovers(obs: Observation) -> list[str]:
    found: list[str] = []
    if obs.leftover_tasks:
        found.append(f"5 asyncio tasks still pending after the run: {obs.leftover_tasks[:3]}")
    if obs.async_bodies_after:
        found.append(f"5 {obs.async_bodies_after} async tool bodies still running after the run")
    if obs.sync_bodies_after:
        found.append(f"5 {obs.sync_bodies_after} sync tool bodies still running 300 ms after "
                     "the run")
    if obs.pool_busy_after:
        found.append(f"5 {obs.pool_busy_after} toolcycle worker threads still busy 300 ms after "
                     "the run")
    return found


def _check_cancel(obs: Observation) -> list[str]:
    allowed = 1 if obs.token_cancelled_by == "thread" else 0
    if obs.requests_after_cancel > allowed:
        return [f"7 {obs.requests_after_cancel} model request(s) made after the token was "
                "cancelled"]
    return []


def _check_store(obs: Observation) -> list[str]:
    if obs.stored_status is None or not obs.scenario.trace_store:
        return []
    if obs.stored_status in ("running", "missing"):
        return [f"8 the stored trace's status is {obs.stored_status!r} after the run"]
    return []


def _check_stream(obs: Observation) -> list[str]:
    if obs.stream_events is None or obs.task_cancelled:
        return []
    if [id(e) for e in obs.stream_events] != [id(e) for e in obs.events]:
        return [f"9 the stream yielded {len(obs.stream_events)} events, callbacks saw "
                f"{len(obs.events)}"]
    return []

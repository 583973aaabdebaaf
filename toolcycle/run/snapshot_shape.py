"""The shape a run snapshot must have, checked in full before anything is read from it.

A snapshot comes from outside the process (a file, a queue, a database), so it is untrusted
input even when its integrity holds: a correctly signed snapshot may come from a bug or a
future writer, and an unsigned one from anyone. :func:`shape_problems` walks every key the
resume reads and says what is missing or of the wrong type, all at once, so that resuming
raises :class:`~toolcycle.errors.SnapshotError` with the list instead of a raw ``KeyError``
or ``TypeError`` from deep inside the engine (r2-17).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

from ..approval import ApprovalRequest, decision_from_dict
from ..limits import Limits
from ..messages import Message, Usage, media_from_dict
from ..output_modes import OUTPUT_MODES
from ..tracing.trace import Trace
from . import member_runs

#: What a damaged nested record raises when it is rebuilt (a wrong type or a missing key).
_DAMAGE = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def shape_problems(data: dict[str, Any]) -> list[str]:
    """Every problem of ``data``'s shape (empty when a resume can read all of it)."""
    problems = [f"{key}: missing" for key in
                ("run_id", "messages", "new_message_index", "usage", "trace", "limits",
                 "counters", "turn", "pending") if key not in data]
    if problems:
        return problems
    if not (isinstance(data["run_id"], str) and data["run_id"]):
        problems.append("run_id: must be a non-empty string")
    if not isinstance(data.get("user_prompt"), str | None):
        problems.append("user_prompt: must be a string or null")
    messages = _rebuilt(problems, "messages", data["messages"], _messages)
    calls = {} if not messages else {c.id: c for c in messages[-1].tool_calls
                                     if isinstance(c.id, str)}
    if messages is not None and (not messages or messages[-1].role != "assistant"
                                 or not calls):
        problems.append("messages: must end with the assistant message of the paused turn")
    if not (_is_int(data["new_message_index"])
            and 0 <= data["new_message_index"] <= len(messages or [])):
        problems.append("new_message_index: must be an index into messages")
    _rebuilt(problems, "usage", data["usage"], Usage.from_dict)
    trace = _rebuilt(problems, "trace", data["trace"], Trace.from_dict)
    if trace is not None and not trace.pauses:
        problems.append("trace: records no pause")
    problems.extend(member_runs.problems(data.get("runs"), trace))
    _rebuilt(problems, "limits", data["limits"], lambda d: Limits(**d))
    problems.extend(_counter_problems(data["counters"]))
    problems.extend(_turn_problems(data["turn"], list(calls), messages is not None))
    members = _member_problems(data, calls, problems)
    problems.extend(_pending_problems(data["pending"], calls, messages is not None, members))
    held = data.get("held")
    if held is not None and not (isinstance(held, dict) and isinstance(held.get("call_id"), str)
                                 and held["call_id"] in calls
                                 and isinstance(held.get("arguments"), dict | None)):
        problems.append("held: must be null or the call_id and arguments of a paused-turn call")
    for key in ("last_preview_args", "run_state"):
        if not isinstance(data.get(key), dict | None):
            problems.append(f"{key}: must be an object or null")
    problems.extend(_modes_problems(data.get("modes")))
    problems.extend(_compaction_problems(data.get("compaction"), len(messages or [])))
    return problems


def _modes_problems(modes: Any) -> list[str]:
    """``modes``: null, or a chain of known output modes, an index into it, the modes told."""
    if modes is None:
        return []
    if not isinstance(modes, dict):
        return ["modes: must be an object or null"]
    chain, index, told = modes.get("chain"), modes.get("index"), modes.get("told")
    problems = []
    if not (isinstance(chain, list) and chain and all(m in OUTPUT_MODES for m in chain)
            and len(set(chain)) == len(chain)):
        problems.append(f"modes.chain: must list distinct output modes of {OUTPUT_MODES}")
        chain = []
    if not (_is_int(index) and 0 <= index < max(len(chain), 1)):
        problems.append("modes.index: must index modes.chain")
    if not (isinstance(told, list) and all(m in OUTPUT_MODES for m in told)):
        problems.append(f"modes.told: must list output modes of {OUTPUT_MODES}")
    return problems


def _compaction_problems(compaction: Any, message_count: int) -> list[str]:
    """``compaction``: null, or a view whose prefix is messages and whose counts fit them."""
    if compaction is None:
        return []
    if not isinstance(compaction, dict):
        return ["compaction: must be an object or null"]
    problems: list[str] = []
    _rebuilt(problems, "compaction.prefix", compaction.get("prefix"), _messages)
    _rebuilt(problems, "compaction.unpaid", compaction.get("unpaid"), Usage.from_dict)
    for key in ("view_from", "summary_upto"):
        value = compaction.get(key)
        if not (_is_int(value) and 0 <= value <= message_count):
            problems.append(f"compaction.{key}: must be an index into messages")
    for key in ("prefix_chars", "replaced_chars"):
        if not (_is_int(compaction.get(key)) and compaction[key] >= 0):
            problems.append(f"compaction.{key}: must be a count (an integer >= 0)")
    if not isinstance(compaction.get("summary"), str):
        problems.append("compaction.summary: must be a string")
    return problems


def _rebuilt[T](problems: list[str], key: str, value: Any,
                build: Callable[[Any], T]) -> T | None:
    """``build(value)``, or ``None`` with the problem noted when ``value`` is damaged."""
    try:
        if not isinstance(value, dict | list):
            raise TypeError(f"got {type(value).__name__}")
        return build(value)
    except _DAMAGE as exc:
        problems.append(f"{key}: cannot be read ({type(exc).__name__}: {exc})")
        return None


def _messages(value: Any) -> list[Message]:
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise TypeError("must be a list of message objects")
    return [Message.from_dict(m) for m in value]


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _counter_problems(counters: Any) -> list[str]:
    if not isinstance(counters, dict):
        return ["counters: must be an object"]
    problems = [f"counters.{key}: must be an integer" for key in
                ("attempt", "iteration", "attempt_iterations", "executed_calls")
                if not _is_int(counters.get(key))]
    counts = counters.get("tool_counts")
    if not (isinstance(counts, dict) and all(_is_int(n) for n in counts.values())):
        problems.append("counters.tool_counts: must map tool names to integers")
    closed = counters.get("closed_attempts")
    if not (isinstance(closed, list) and all(_is_int(n) for n in closed)):
        problems.append("counters.closed_attempts: must be a list of integers")
    left = counters.get("timeout_left_s", "missing")
    if left is not None and (isinstance(left, bool) or not isinstance(left, int | float)):
        problems.append("counters.timeout_left_s: must be a number or null")
    return problems


def _turn_problems(turn: Any, call_ids: list[str], calls_known: bool) -> list[str]:
    if not isinstance(turn, dict):
        return ["turn: must be an object"]
    problems = [f"turn.{key}: must be an integer" for key in ("attempt", "iteration")
                if not _is_int(turn.get(key))]
    start = turn.get("resume_from")
    if not (isinstance(start, int) and _is_int(start)
            and (not calls_known or 0 <= start < max(len(call_ids), 1))):
        problems.append("turn.resume_from: must index a call of the paused turn")
    answers, decisions = turn.get("answers"), turn.get("decisions")
    if not isinstance(answers, dict):
        problems.append("turn.answers: must be an object")
    else:
        for call_id, answer in answers.items():
            if calls_known and call_id not in call_ids:
                problems.append(f"turn.answers: {call_id!r} is no call of the paused turn")
            elif not (isinstance(answer, dict) and isinstance(answer.get("content"), str)
                      and isinstance(answer.get("is_error"), bool)
                      and "error_type" in answer
                      and isinstance(answer["error_type"], str | None)):
                problems.append(f"turn.answers[{call_id!r}]: must hold content (a string), "
                                "is_error (a boolean) and error_type")
            else:
                problems.extend(_media_problems(answer.get("media"), call_id))
    if not isinstance(decisions, dict):
        problems.append("turn.decisions: must be an object")
    else:
        for call_id, decision in decisions.items():
            problems.extend(_object_problems(f"turn.decisions[{call_id!r}]", decision,
                                             decision_from_dict))
    return problems


def _object_problems(where: str, value: Any, build: Callable[[dict[str, Any]], object]
                     ) -> list[str]:
    """What is wrong with ``value``, an object ``build`` reads back: nothing, or one line."""
    try:
        if not isinstance(value, dict):
            raise TypeError("not an object")
        build(value)
    except _DAMAGE as exc:
        return [f"{where}: {exc}"]
    return []


def _media_problems(media: Any, call_id: str) -> list[str]:
    """A paused answer's media (a tool returned an image): each must decode to a part."""
    if media is None:
        return []
    if not isinstance(media, list):
        return [f"turn.answers[{call_id!r}].media: must be a list"]
    return [problem for index, part in enumerate(media) for problem in _object_problems(
        f"turn.answers[{call_id!r}].media[{index}]", part, media_from_dict)]


def _member_problems(data: dict[str, Any], calls: dict[str, Any], problems: list[str]
                     ) -> set[str]:
    """A paused team's ``members`` (call id -> a member's snapshot, checked in full when that
    member's agent opens it): each an open call of the paused turn. Returns their call ids."""
    if "members" not in data:
        return set()
    members = data["members"]
    if data.get("version") != 2:
        problems.append("members: only a version 2 snapshot holds members")
        return set()
    turn = data["turn"]
    answered = turn.get("answers") if isinstance(turn, dict) else None
    if not (isinstance(members, dict) and members
            and all(isinstance(call_id, str) and call_id in calls
                    and isinstance(member, dict) for call_id, member in members.items())):
        problems.append("members: must map calls of the paused turn to the snapshots of the "
                        "members' runs that paused in them")
        return set()
    if isinstance(answered, dict) and (both := sorted(set(members) & set(answered))):
        problems.append(f"members: {', '.join(both)} answered already")
    return set(members)


def _pending_problems(pending: Any, calls: dict[str, Any], calls_known: bool,
                      members: set[str]) -> list[str]:
    if not isinstance(pending, list) or not (pending or members):
        return ["pending: must be a non-empty list of the calls waiting for a person"]
    problems = []
    for index, entry in enumerate(pending):
        try:
            if not isinstance(entry, dict) or not isinstance(entry.get("arguments"), dict):
                raise TypeError("call_id, tool_name and arguments (an object) are needed")
            request = ApprovalRequest.from_dict(entry)
        except _DAMAGE as exc:
            problems.append(f"pending[{index}]: {exc}")
            continue
        call = calls.get(request.call_id)
        if calls_known and (call is None or call.name != request.tool_name
                            or (call.arguments or {}) != request.arguments):
            problems.append(f"pending[{index}]: {request.call_id!r} is not that call of the "
                            "paused turn (id, tool or arguments differ)")
        elif request.call_id in members:
            problems.append(f"pending[{index}]: {request.call_id!r} runs a paused member")
    return problems

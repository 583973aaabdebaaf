"""The snapshot of a paused run: a versioned, self-checking JSON record (format version 2).

A run pauses when a tool call waits for a person's decision (:mod:`toolcycle.approval`).
``result.snapshot`` is then a plain ``dict`` that ``json.dumps`` writes as is, and
``agent.resume(snapshot, approvals=...)`` continues the same run from it, in this process or
another. Durable execution builds on the same record, so its shape is a contract:

========================  ==================================================================
key                       content
========================  ==================================================================
``format``                ``"toolcycle.run-snapshot"``
``version``               ``1``, or ``2`` for a paused team's (with ``members``); a reader
                          refuses versions it does not know
``created_at``            Unix time of the pause
``run_id``                the run's id (the resumed run keeps it)
``agent``                 identity: ``name``, ``model``, ``tools`` (name -> SHA-256 of its
                          definition), ``output`` (SHA-256 of the output protocol)
``user_prompt``           the run's prompt
``input``                 the run's typed task input in its JSON form (``input=`` of an
                          agent with ``input_type``; validated again on resume), or ``null``
``messages``              the conversation (``Message.to_dict``), ending with the assistant
                          message whose calls are being executed
``new_message_index``     where the run's own messages start
``usage``                 ``Usage.to_dict`` so far
``trace``                 ``Trace.to_dict`` so far (status ``"paused"``)
``limits``                the run's resolved limits (``Limits`` fields)
``counters``              ``attempt``, ``iteration``, ``attempt_iterations``,
                          ``executed_calls``, ``tool_counts`` (per tool), ``closed_attempts``,
                          ``timeout_left_s`` (``null`` without a timeout)
``turn``                  the paused turn: ``attempt``, ``iteration``, ``resume_from`` (index
                          of the first call not done), ``answers`` (call id -> ``content``,
                          ``is_error``, ``error_type`` of the calls done, and ``media``
                          where the tool returned any), ``decisions``
                          (call id -> decision dict, ``toolcycle.approval``)
``pending``               the run's own calls waiting for a person (``ApprovalRequest.to_dict``;
                          the run is the snapshot's ``run_id``); each must be the call of that
                          id in the last message, so what a person approves is what runs;
                          empty only when ``members`` is not
``runs``                  the member runs that ended before the pause (``member_runs``), or
                          absent when none
``members``               version 2: call id -> the snapshot of the team member's run that
                          paused inside that call (an agent called as a tool), nested: the call
                          is open (neither answered nor pending) and resumes the member's run
``held``                  ``null`` or the output call held until the output is judged:
                          ``call_id``, ``arguments``
``last_preview_args``     reflection: the last previewed output's arguments, or ``null``
``run_state``             ``ctx.run_state`` when it is JSON-serialisable, else ``null``
``modes``                 structured output's place in its chain of output modes
                          (:mod:`.modes`): ``chain`` (the modes, in order), ``index`` (the
                          current one: after a fallback, the mode fallen back to) and ``told``
                          (the modes whose instructions the model was given); ``null`` for
                          free text or a run that had not started its chain
``compaction``            the compacted view of the history (:mod:`.compaction`), ``null``
                          before the first compaction: ``prefix`` (the messages standing in for
                          ``messages[:view_from]``: the kept head and the summary's message),
                          ``view_from``, ``prefix_chars``, ``replaced_chars``, ``summary``
                          (the rolled summary's text), ``summary_upto``, and ``unpaid`` (the
                          usage of summaries not yet counted in a step); what each compaction
                          saved is in the trace's ``compactions``
``integrity``             ``algorithm`` (``"sha256"``, or ``"hmac-sha256"`` with a
                          ``snapshot_key``) and ``digest`` over the canonical JSON of every
                          other key
========================  ==================================================================

``modes`` and ``compaction`` are optional in either version: a snapshot written before they
were kept resumes with its modes and compaction started afresh (as it did then), and a reader
that predates them resumes a newer snapshot the same way (nothing runs twice; the run only
starts its first mode again, or compacts again).

Every key a resume reads is checked for its type and shape first (:mod:`.snapshot_shape`). A
snapshot is consumed by the resume that continues it, under the key ``run_id#pause`` (the
number of pauses in its trace: :func:`pause_number`, :mod:`toolcycle.stores.ledger`). A team's
snapshot is resumed only from its top run (its members' are checked and resumed inside it), so
the top run's key is the one claimed.

The digest catches a snapshot changed by hand or damaged on the way; only the HMAC (an agent
built with ``snapshot_key=``) stops someone who can rewrite the digest too. The identity stops a
snapshot from being resumed by an agent with another model, other tools or another output type:
the error lists every mismatch.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

from ..approval import ApprovalRequest, Decision, decision_from_dict, decision_to_dict
from ..errors import SnapshotError
from ..limits import Limits
from ..messages import Message, ToolResult, Usage, media_from_dict, media_to_dict
from ..models.base import Model
from ..output import HeldAnswer, OutputSchemaError
from .context_view import ContextView
from .member_runs import ended_runs, revived_runs
from .snapshot_shape import shape_problems
from .state import AgentCore, RunState, Turn

FORMAT = "toolcycle.run-snapshot"
#: The newest version written: 2 for a paused team (``members``), 1 otherwise, so that a
#: toolcycle that cannot resume a team refuses its snapshot instead of starting its paused
#: members' calls again.
VERSION = 2
VERSIONS = (1, 2)


def canonical(data: Any) -> bytes:
    """The bytes the digest covers: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode()


def _sha256(payload: bytes) -> str:
    import hashlib  # loads OpenSSL: only once a run pauses or resumes, not with every import

    return hashlib.sha256(payload).hexdigest()


def _hmac_sha256(key: bytes, payload: bytes) -> str:
    import hashlib
    import hmac

    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _digest(data: Any) -> str:
    return _sha256(canonical(data))


def identity(core: AgentCore, model: Model) -> dict[str, Any]:
    """What must match for an agent to resume a snapshot: its name, model, tools and output."""
    output = core.output
    return {
        "name": core.name,
        "model": model.name,
        "tools": {d.name: _digest([d.name, d.description, d.parameters])
                  for d in core.definitions if d.name in core.tools},
        "output": _digest({"text": output.is_text, "definitions": [
            [d.name, d.parameters] for d in output.tool_definitions]}),
    }


def seal(body: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    """The snapshot: ``body`` with its format, version and integrity."""
    data = {"format": FORMAT, "version": 2 if body.get("members") else 1, **body}
    payload = canonical(data)
    if key is None:
        integrity = {"algorithm": "sha256", "digest": _sha256(payload)}
    else:
        integrity = {"algorithm": "hmac-sha256",
                     "digest": _hmac_sha256(key, payload)}
    data["integrity"] = integrity
    return data


def open_snapshot(snapshot: dict[str, Any] | str | bytes, core: AgentCore, model: Model
                  ) -> dict[str, Any]:
    """Check a snapshot before it is resumed; raise :class:`SnapshotError` listing every problem.

    Accepts the dict, or its JSON text. Returns the checked dict: a copy, which the resumed
    run's records are built from, so that the caller's snapshot stays as it was made (a replay
    of it must meet the ledger's ``SnapshotConsumed``, not a digest broken by the resume).
    """
    data: Any = copy.deepcopy(snapshot)
    if isinstance(snapshot, str | bytes):
        try:
            data = json.loads(snapshot)
        except ValueError as exc:
            raise SnapshotError([f"not JSON: {exc}"], subject="snapshot") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SnapshotError([f"not a run snapshot (expected a dict with format {FORMAT!r})"],
                            subject="snapshot")
    if data.get("version") not in VERSIONS:
        raise SnapshotError([f"snapshot version {data.get('version')!r}; this toolcycle reads "
                             f"versions {VERSIONS[0]} to {VERSION}"], subject="snapshot")
    problems = _integrity_problems(data, core.snapshot_key)
    problems.extend(_identity_problems(data.get("agent"), identity(core, model)))
    if not problems:  # nothing is read from a snapshot whose integrity fails
        problems.extend(shape_problems(data))
        if data.get("last_preview_args") is not None and core.output.submit_tool is None:
            problems.append("last_preview_args: this agent's output is not previewed")
        if data.get("modes") is not None and core.output.is_text:
            problems.append("modes: this agent's output is free text, it has no output modes")
    if problems:
        run_id = data.get("run_id")
        raise SnapshotError(problems, subject=f"snapshot of run {run_id!r}"
                            if isinstance(run_id, str) else "snapshot")
    return data


def is_signed(data: dict[str, Any]) -> bool:
    """Whether a checked snapshot carries an HMAC (its agent has a ``snapshot_key``)."""
    return bool(data["integrity"]["algorithm"] == "hmac-sha256")


def pause_number(data: dict[str, Any]) -> int:
    """Which pause of its run a checked snapshot records (1 for the first): with the run id,
    the key under which a resume consumes it (:mod:`toolcycle.stores.ledger`)."""
    pauses = data["trace"].get("pauses")
    return len(pauses) if isinstance(pauses, list) else 1


def prompt_of(snapshot: dict[str, Any] | str | bytes, key: bytes | None) -> str | None:
    """The paused run's user prompt, read before the agent's identity is checked, and only
    from a snapshot whose integrity holds (``None`` otherwise: :func:`open_snapshot` then says
    what is wrong), so nothing in a forged snapshot is worked on. A run whose tools were
    selected for its prompt is resumed with the same selection, so the agent that checks the
    snapshot must first select again."""
    try:
        data = json.loads(snapshot) if isinstance(snapshot, str | bytes) else snapshot
    except ValueError:
        return None
    if not isinstance(data, dict) or _integrity_problems(data, key):
        return None
    prompt = data.get("user_prompt")
    return prompt if isinstance(prompt, str) else None


def recorded_agent(snapshot: dict[str, Any] | str | bytes) -> str | None:
    """The name of the agent a snapshot says it was paused under, unchecked (``None`` when it
    says none): only to choose, among the agents a run could have been handed to, the one
    that then checks the snapshot in full (:func:`open_snapshot`)."""
    try:
        data = json.loads(snapshot) if isinstance(snapshot, str | bytes) else snapshot
    except ValueError:
        return None
    agent = data.get("agent") if isinstance(data, dict) else None
    name = agent.get("name") if isinstance(agent, dict) else None
    return name if isinstance(name, str) else None


def _integrity_problems(data: dict[str, Any], key: bytes | None) -> list[str]:
    integrity = data.get("integrity")
    if not isinstance(integrity, dict):
        return ["integrity: missing"]
    body = {k: v for k, v in data.items() if k != "integrity"}
    payload = canonical(body)
    algorithm, digest = integrity.get("algorithm"), str(integrity.get("digest"))
    if algorithm == "hmac-sha256":
        if key is None:
            return ["integrity: the snapshot is signed (hmac-sha256); build the agent with the "
                    "same snapshot_key to resume it"]
        expected = _hmac_sha256(key, payload)
    elif algorithm == "sha256":
        if key is not None:
            return ["integrity: the agent has a snapshot_key but the snapshot is not signed "
                    "(sha256 only): refused, anyone could have written it"]
        expected = _sha256(payload)
    else:
        return [f"integrity: unknown algorithm {algorithm!r}"]
    import hmac

    if not hmac.compare_digest(expected, digest):
        return [f"integrity: the {algorithm} digest does not match the content: the snapshot "
                "was changed after it was made (or signed with another key)"]
    return []


def _identity_problems(recorded: Any, current: dict[str, Any]) -> list[str]:
    if not isinstance(recorded, dict):
        return ["agent: the snapshot does not say which agent made it"]
    problems = []
    for field in ("name", "model"):
        if recorded.get(field) != current[field]:
            problems.append(f"agent {field}: the snapshot was made by {recorded.get(field)!r}, "
                            f"this agent is {current[field]!r}")
    tools, mine = recorded.get("tools") or {}, current["tools"]
    if not isinstance(tools, dict):
        return [*problems, "agent tools: must map tool names to digests"]
    if missing := sorted(set(tools) - set(mine)):
        problems.append(f"tools: this agent lacks {', '.join(missing)}")
    if extra := sorted(set(mine) - set(tools)):
        problems.append(f"tools: this agent has {', '.join(extra)}, the snapshot's did not")
    if changed := sorted(n for n in set(tools) & set(mine) if tools[n] != mine[n]):
        problems.append(f"tools: the definition (description or parameters) of "
                        f"{', '.join(changed)} differs")
    if recorded.get("output") != current["output"]:
        problems.append("output: the output type (or its schema) differs")
    return problems


# -- writing and reading the run's state ---------------------------------------------------------


def capture(state: RunState, pending: list[ApprovalRequest]) -> dict[str, Any]:
    """The snapshot of ``state``, paused with ``pending`` calls of its own and the paused
    members of its turn (its trace already finished)."""
    turn, held, ctx = state.turn, state.held, state.ctx
    assert turn is not None
    deadline = state.interrupts.deadline
    body = {
        "created_at": time.time(),
        "run_id": state.setup.run_id,
        "agent": identity(state.setup.core, state.setup.model),
        "user_prompt": state.setup.user_prompt,
        "input": _input_json(state.setup.task_input),
        "messages": [m.to_dict() for m in state.messages],
        "new_message_index": state.new_message_index,
        "usage": state.usage.to_dict(),
        "trace": state.trace.trace.to_dict(),
        "limits": state.limits.to_dict(),  # (max_cost as a decimal string)
        "counters": {
            "attempt": state.attempt, "iteration": state.iteration,
            "attempt_iterations": state.attempt_iterations,
            "executed_calls": state.executed_calls, "tool_counts": dict(state.tool_counts),
            "closed_attempts": sorted(state.closed_attempts),
            "timeout_left_s": None if deadline is None else max(
                deadline - time.monotonic(), 0.0),
        },
        "turn": {
            "attempt": turn.attempt, "iteration": turn.iteration,
            "resume_from": turn.resume_from,
            "answers": {call_id: _answer_dict(result, error)
                        for call_id, (result, error, _) in turn.answers.items()},
            "decisions": {call_id: decision_to_dict(d)
                          for call_id, d in (turn.decisions or {}).items()},
        },
        "pending": [request.to_dict() for request in pending],
        **({"members": {call_id: result.snapshot for call_id, result in
                        turn.paused_members.items()}} if turn.paused_members else {}),
        **({"runs": ended_runs(state)} if state.runs else {}),
        "held": None if held is None else {"call_id": held.call.id,
                                           "arguments": held.arguments},
        "last_preview_args": state.last_preview_args,
        "run_state": _jsonable_or_none(ctx.run_state),
        "modes": None if not state.mode_chain else {
            "chain": list(state.mode_chain), "index": state.mode_index,
            "told": sorted(state.modes_told)},
        "compaction": _compaction_json(state),
    }
    return seal(body, state.setup.core.snapshot_key)


def _answer_dict(result: ToolResult, error: str | None) -> dict[str, Any]:
    """A call of the paused turn already answered; the media a tool returned go with their
    bytes, as in the history, so the resumed run sends the model what it would have seen."""
    answer = {"content": result.content, "is_error": result.is_error, "error_type": error}
    if result.media:
        answer["media"] = [media_to_dict(m) for m in result.media]
    return answer


def _compaction_json(state: RunState) -> dict[str, Any] | None:
    view = state.view
    if view is None:
        return None
    return {"prefix": [m.to_dict() for m in view.prefix], "view_from": view.view_from,
            "prefix_chars": view.prefix_chars, "replaced_chars": view.replaced_chars,
            "summary": view.summary, "summary_upto": view.summary_upto,
            "unpaid": state.compaction_paid.to_dict()}


def _restore_progress(state: RunState, data: dict[str, Any]) -> None:
    """The output mode the run had reached and its compacted view, so that a resumed run goes
    on in the mode it fell back to (not its first again) and sends the same compacted history
    (not a second summary of what was summarised). Absent from a snapshot written before
    they were kept: then
    the run starts both afresh, as it did before they were kept."""
    modes = data.get("modes")
    if modes is not None:
        state.mode_chain = tuple(modes["chain"])
        state.mode_index = modes["index"]
        state.modes_told = set(modes["told"])
    compaction = data.get("compaction")
    if compaction is not None:
        state.view = ContextView(
            prefix=[Message.from_dict(m) for m in compaction["prefix"]],
            view_from=compaction["view_from"], prefix_chars=compaction["prefix_chars"],
            replaced_chars=compaction["replaced_chars"], summary=compaction["summary"],
            summary_upto=compaction["summary_upto"])
        state.compaction_paid = Usage.from_dict(compaction["unpaid"])


def restore(state: RunState, data: dict[str, Any], decisions: dict[str, Decision]) -> None:
    """Put a checked snapshot's counters and paused turn into a freshly assembled ``state``;
    ``decisions`` are the person's answers to the pending calls."""
    counters = data["counters"]
    state.attempt, state.iteration = counters["attempt"], counters["iteration"]
    state.attempt_iterations = counters["attempt_iterations"]
    state.executed_calls = counters["executed_calls"]
    state.tool_counts = dict(counters["tool_counts"])
    state.closed_attempts = set(counters["closed_attempts"])
    state.timeout_left = counters["timeout_left_s"]
    state.ctx.attempt, state.ctx.iteration = state.attempt, state.iteration
    state.ctx.run_state.update(data.get("run_state") or {})
    recorded = data["turn"]
    calls = state.messages[-1].tool_calls
    now = time.perf_counter()
    turn = Turn(recorded["attempt"], recorded["iteration"], calls,
                resume_from=recorded["resume_from"])
    by_id = {call.id: call for call in calls}
    for call_id, answer in recorded["answers"].items():
        call = by_id[call_id]
        media = tuple(media_from_dict(m) for m in answer.get("media") or ())
        turn.answers[call_id] = (ToolResult(call_id, call.name, answer["content"],
                                            answer["is_error"], media=media),
                                 answer["error_type"], now)
        turn.started[call_id] = now
        turn.reported.add(call_id)
    turn.decisions = {call_id: decision_from_dict(d)
                      for call_id, d in recorded["decisions"].items()} | decisions
    for call_id in data.get("members", {}):  # started before the pause; they go on
        turn.started[call_id] = now
    state.turn = turn
    state.runs = revived_runs(data.get("runs") or [], state.trace.trace)
    held = data.get("held")
    if held is not None:
        state.held = HeldAnswer(by_id[held["call_id"]], held["arguments"], now)
    preview = data.get("last_preview_args")
    if preview is not None:
        state.last_preview_args = preview
        try:
            state.last_output = state.output.parse(preview)
        except OutputSchemaError:
            state.last_output = None
    _restore_progress(state, data)
    state.trace.reopen()


def limits_of(data: dict[str, Any]) -> Limits:
    return Limits(**data["limits"])


def _input_json(value: Any) -> Any:
    """A task input's JSON form (a pydantic model or dataclass dumped); ``None`` without one."""
    if value is None:
        return None
    import pydantic_core

    return pydantic_core.to_jsonable_python(value)


def _jsonable_or_none(value: dict[str, Any]) -> dict[str, Any] | None:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value

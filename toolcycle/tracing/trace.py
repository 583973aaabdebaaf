"""The ReAct trace of a run: one :class:`Step` per iteration, kept on every path.

A step holds the model's thought (its text and thinking), the tool calls it asked for with
their observations and timings, and the usage of its request. Attempts and their validation
errors are recorded beside the steps. The trace is plain data: it round-trips through JSON and
renders as readable text; ``toolcycle.tracing.store`` persists it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .._safe_text import terminal_safe
from ..messages import Usage
from .stand_in import StandIn
from .values import approval_text, money, pause_rows, recorded_cost, stand_in_text

#: Kinds of calls whose error observations are the run's own feedback (output validation).
#: A tuple: a kind read from a stored trace may be unhashable.
_OWN_KINDS = ("output", "submit")


#: The ``error_type`` values the loop itself writes (``ToolResultEvent.error_type``); any other
#: is the class name of the exception a tool raised. What reads traces tells the loop's own
#: verdicts from a tool's failures by this set, never by the wording of ``error``.
LOOP_ERROR_TYPES = frozenset({
    "timeout", "invalid_arguments", "unknown_tool", "call_limit", "unserializable_result",
    "tools_disabled", "output_rejected", "cancelled", "run_stopped", "denied", "error",
    "unsourced_arguments", "unasked_conversion", "repeated_call", "guardrail"})
#: How the loop words an exception a tool raised, before the exception's message
#: (``kind``: its class, the call's ``error_type``): written by :mod:`toolcycle.run.calls`,
#: taken off by :meth:`ToolCallRecord.tool_error`, so what learns from a trace reads the
#: tool's own words without guessing where the loop's end.
TOOL_FAILED = "Tool `{name}` failed: {kind}: "


@dataclass(slots=True)
class ToolCallRecord:
    """One tool call and its observation, as ``result.tool_calls`` exposes it."""

    call_id: str
    name: str
    args: dict[str, Any] | None
    iteration: int
    attempt: int = 1
    result: str | None = None
    error: str | None = None
    duration_ms: float = 0.0
    kind: str = "tool"  # "tool", "output", "submit", "unknown", "refused" (tools withdrawn)
    #: The approval decision, when the agent gates calls: ``{"decision": "approved" |
    #: "denied", "by": "policy" | "default" | "person", "reason": ...}``.
    approval: dict[str, Any] | None = None
    #: The run of the agent this call ran (``Agent.as_tool``): its trace, nested here.
    run: Trace | None = None
    #: Why the call failed, as the loop recorded it (``ToolResultEvent.error_type``): the
    #: class name of the exception the tool raised, or ``timeout``, ``invalid_arguments``,
    #: ``unknown_tool``, ``denied`` ...; ``None`` for a call that did not fail (and in
    #: traces written before it was recorded). What learns from traces reads this, never
    #: the loop's wording of ``error``.
    error_type: str | None = None
    #: The images, documents and audio the tool returned, as ``MediaPart.summary()`` (media
    #: type, size, SHA-256, name), never the bytes; ``None`` when it returned none.
    media: list[dict[str, Any]] | None = None
    #: The model requests made on the run's behalf while the call waited (an MCP server's
    #: sampling requests), one step each: the reply as ``thought``, its ``usage`` (already
    #: counted in the usage of the step this call belongs to), ``model``, ``model_ms``.
    #: A tuple: nearly every call has none (an empty tuple is shared, a list is not).
    sampling: tuple[Step, ...] = ()
    #: What a tool acting for the model did in this call (a learned routine, a fallback, a
    #: repair: :mod:`toolcycle.tracing.stand_in`), as it recorded through
    #: ``RunContext.record_stand_in``; ``None`` for a tool's own call.
    stand_in: StandIn | None = None

    def tool_error(self) -> str:
        """The failed call's error in its tool's own words: without the wrapping the loop
        puts before an exception's message (:data:`TOOL_FAILED`, known from ``error_type``).
        An error of the loop's own kinds (:data:`LOOP_ERROR_TYPES`: a timeout, a refusal of
        the arguments ...) is all the loop's words and stays whole; ``""`` for a call that
        did not fail."""
        error, kind = self.error or "", self.error_type
        if kind is None or kind in LOOP_ERROR_TYPES:
            return error
        return error.removeprefix(TOOL_FAILED.format(name=self.name, kind=kind))

    def to_dict(self) -> dict[str, Any]:
        nested, sampled, stood_in = self.run, self.sampling, self.stand_in
        # (asdict would copy the whole nested run, and turn the stand-in's steps to tuples)
        self.run, self.sampling, self.stand_in = None, (), None
        try:
            data = asdict(self)
        finally:
            self.run, self.sampling, self.stand_in = nested, sampled, stood_in
        data["run"] = None if nested is None else nested.to_dict()
        data["sampling"] = [step.to_dict() for step in sampled]
        data["stand_in"] = None if stood_in is None else stood_in.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCallRecord:
        data = dict(data)
        nested = data.pop("run", None)
        data["sampling"] = tuple(Step.from_dict(s) for s in data.get("sampling") or ())
        data["stand_in"] = StandIn.from_dict(data.get("stand_in"))
        record = cls(**data)
        if isinstance(nested, dict):
            record.run = Trace.from_dict(nested)
        return record


@dataclass(slots=True)
class Step:
    """One iteration: a model request and the execution of the calls it asked for."""

    iteration: int
    attempt: int
    thought: str = ""
    thinking: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model_ms: float = 0.0
    tools_ms: float = 0.0
    started_at: float = 0.0
    forced: bool = False
    finish_reason: str | None = None
    #: What was changed in the reply before it entered the history (see
    #: toolcycle.models.repair). A tuple: nearly every step has none, and an empty tuple is
    #: shared where an empty list would be one more object kept per step.
    repairs: tuple[str, ...] = ()
    #: Which model wrote the reply (differs between steps under a FallbackModel).
    model: str | None = None
    #: The request's ``tool_choice`` where it was not ``"auto"`` (events.IterationStart): a
    #: call required or named, or the answer asked for (``"none"``).
    tool_choice: str | None = None
    #: The replies the model was asked again after, in order (``Message.asked_again``: a
    #: text protocol making ``tool_choice`` hold, or asking past a repeated call); their
    #: tokens are in ``usage``.
    asked_again: tuple[str, ...] = ()

    @property
    def choice_shown(self) -> str | None:
        """The ``tool_choice`` a rendering names: none for a forced final answer, whose
        ``"none"`` its own mark already says."""
        if self.tool_choice and not (self.forced and self.tool_choice == "none"):
            return self.tool_choice
        return None

    def to_dict(self) -> dict[str, Any]:
        calls, self.tool_calls = self.tool_calls, []  # (asdict would copy nested runs)
        try:
            data = asdict(self)
        finally:
            self.tool_calls = calls
        data["tool_calls"] = [record.to_dict() for record in calls]
        data["usage"] = self.usage.to_dict()
        data["repairs"] = list(self.repairs)  # the JSON form: a list
        data["asked_again"] = list(self.asked_again)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        data = dict(data)
        data["usage"] = Usage.from_dict(data.get("usage") or {})
        data["repairs"] = tuple(data.get("repairs") or ())
        data["asked_again"] = tuple(data.get("asked_again") or ())
        data["tool_calls"] = [ToolCallRecord.from_dict(r) for r in data.get("tool_calls", [])]
        return cls(**data)


@dataclass(slots=True)
class AttemptRecord:
    attempt: int
    success: bool = False
    errors: list[str] = field(default_factory=list)
    validator: str | None = None
    code: str | None = None

    @property
    def validation_failed(self) -> bool:
        """Whether a validator (schema, protocol, custom) rejected the output; otherwise the
        attempt was stopped by a limit, a model error or a cancellation (no validator ran)."""
        return self.validator is not None

    @property
    def outcome(self) -> str:
        """``failed validation (schema)`` or ``stopped (MAX_ITERATIONS)``, for the views."""
        if self.validation_failed:
            return f"failed validation ({self.validator})"
        return f"stopped ({self.code or 'error'})"


@dataclass(slots=True, repr=False)
class Trace:
    run_id: str
    agent_name: str = "agent"
    model_name: str = ""
    user_prompt: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    steps: list[Step] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    #: How the run ended, a word of :data:`toolcycle.status.RunStatus` (``"running"`` until
    #: it ends). Typed ``str``: a trace read from a file or store may hold anything there,
    #: and the views show it as unknown rather than trust it.
    status: str = "running"
    termination: dict[str, Any] | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    strategies_shown: list[str] = field(default_factory=list)
    #: The tools a tool selection offered the model (``Agent(tool_selection=...)``; output
    #: and submit tools included); ``None`` when the run was offered all of the agent's tools.
    tools_offered: list[str] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Each time the run paused for approvals: ``{"attempt", "iteration", "paused_at",
    #: "pending": [request dicts], "resumed_at", "answers": {call id: decision dict}}``.
    pauses: list[dict[str, Any]] = field(default_factory=list)
    #: What the loop guard did (``Limits.max_repeats``): ``{"nudge": n, "refuse": n,
    #: "stop": n}``, only the actions taken; empty when it never acted.
    loop_guard: dict[str, int] = field(default_factory=dict)
    #: Each guardrail trip: ``{"kind", "name", "reason", "info", "call_id", "halted"}``.
    guardrails: list[dict[str, Any]] = field(default_factory=list)
    #: Each handoff: ``{"from", "to", "attempt", "iteration"}``; the last ``"to"`` answered.
    handoffs: list[dict[str, Any]] = field(default_factory=list)
    #: Each context compaction: ``{"attempt", "iteration", "step", "stubbed_results",
    #: "summarised_messages", "kept_from", "tokens_before", "tokens_after", "tokens_saved",
    #: "budget"}`` (:mod:`toolcycle.run.compaction`).
    compactions: list[dict[str, Any]] = field(default_factory=list)
    #: Structured output's modes that a run fell back to, one per switch:
    #: ``{"attempt", "from", "to"}`` (:mod:`toolcycle.output_modes`).
    mode_fallbacks: list[dict[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:
        """A summary; :meth:`render` gives the readable whole, ``to_dict`` the data."""
        return (
            f"Trace(run_id={self.run_id!r}, agent_name={self.agent_name!r}, "
            f"status={self.status!r}, steps={len(self.steps)}, attempts={len(self.attempts)}, "
            f"usage={self.usage!r})"
        )

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return [record for step in self.steps for record in step.tool_calls]

    def error_observations(self) -> list[str]:
        """The texts of the tool calls that failed, as the model saw them: what
        :func:`toolcycle.status.passes_tool_error` compares an answer with. The output tool's
        and ``submit``'s rejections are the run's own validation feedback, not a tool's."""
        return [record.error for record in self.tool_calls  # (a stored trace may hold any
                if isinstance(record.error, str) and record.kind not in _OWN_KINDS]  # value)

    def fell_through(self) -> set[str]:
        """The ids of the calls a fallback answered without an answer
        (:attr:`~toolcycle.tracing.stand_in.StandIn.found_nothing`): the tool the model called
        failed or found nothing, and so did the alternative."""
        return {record.call_id for record in self.tool_calls
                if record.stand_in is not None and record.stand_in.found_nothing}

    @property
    def own_usage(self) -> Usage:
        """This run's own requests (its steps), without the runs of the agents it called:
        ``usage`` is this plus each nested run's (``ToolCallRecord.run``) usage."""
        total = Usage()
        for step in self.steps:
            total.add(step.usage)
        return total

    @property
    def answered_by(self) -> str:
        """The agent that answered: the last one handed the run, or the run's own."""
        last = self.handoffs[-1].get("to") if self.handoffs else None
        return last if isinstance(last, str) else self.agent_name

    @property
    def iterations(self) -> int:
        """The model's turns: every step but a head start's (the calls a tool selection made
        before the first request, :mod:`toolcycle.run.head_start`, kept as iteration 0).
        ``!= 0``, not ``> 0``: a trace read from a file may hold any value there, and its
        views count it (tests/security/test_viewer.py)."""
        return sum(1 for step in self.steps if step.iteration != 0)

    @property
    def duration_ms(self) -> float:
        end = self.ended_at if self.ended_at is not None else self.started_at
        return (end - self.started_at) * 1000.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "agent_name": self.agent_name,
            "model_name": self.model_name,
            "user_prompt": self.user_prompt,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "steps": [s.to_dict() for s in self.steps],
            "attempts": [asdict(a) for a in self.attempts],
            "usage": self.usage.to_dict(),
            "status": self.status,
            "termination": self.termination,
            "output": _jsonable(self.output),
            "error": self.error,
            "strategies_shown": list(self.strategies_shown),
            "tools_offered": _names(self.tools_offered),
            "metadata": self.metadata,
            "pauses": self.pauses,
            "loop_guard": dict(self.loop_guard),
            "guardrails": list(self.guardrails),
            "handoffs": list(self.handoffs),
            "compactions": list(self.compactions),
            "mode_fallbacks": list(self.mode_fallbacks),
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        return cls(
            run_id=data["run_id"],
            agent_name=data.get("agent_name", "agent"),
            model_name=data.get("model_name", ""),
            user_prompt=data.get("user_prompt"),
            started_at=data.get("started_at", 0.0),
            ended_at=data.get("ended_at"),
            steps=[Step.from_dict(s) for s in data.get("steps", [])],
            attempts=[AttemptRecord(**{**a, "errors": list(a.get("errors") or ())})
                      for a in data.get("attempts", [])],  # (never the caller's lists)
            usage=Usage.from_dict(data.get("usage") or {}),
            status=data.get("status", "running"),
            termination=data.get("termination"),
            output=data.get("output"),
            error=data.get("error"),
            strategies_shown=list(data.get("strategies_shown", [])),
            tools_offered=_names(data.get("tools_offered")),
            metadata=dict(data.get("metadata", {})),
            pauses=[dict(p) for p in data.get("pauses", [])],
            loop_guard=_counts(data.get("loop_guard")),
            guardrails=[dict(g) for g in data.get("guardrails") or () if isinstance(g, dict)],
            handoffs=[dict(h) for h in data.get("handoffs") or () if isinstance(h, dict)],
            compactions=[dict(c) for c in data.get("compactions") or () if isinstance(c, dict)],
            mode_fallbacks=[dict(c) for c in data.get("mode_fallbacks") or ()
                            if isinstance(c, dict)],
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))

    def render(self, max_chars: int = 400) -> str:
        """A readable plain-text timeline (the CLI adds colour on top of the same content).

        Terminal control sequences in recorded text are shown as escapes (see
        :func:`toolcycle._safe_text.terminal_safe`): ``toolcycle run`` and the demo print this.
        The run of an agent called as a tool is shown indented under its call.
        """
        return terminal_safe("\n".join(self._lines(max_chars)))

    def _lines(self, max_chars: int) -> list[str]:
        lines = [
            f"run {self.run_id} · agent {self.agent_name} · model {self.model_name} · "
            f"status {self.status}"
        ]
        if self.user_prompt:
            lines.append(f"user: {_clip(self.user_prompt, max_chars)}")
        if self.tools_offered is not None:
            lines.append(f"tools offered (tool selection): {offered_text(self.tools_offered)}")
        for step in self.steps:
            flag = " (forced final answer)" if step.forced else ""
            if step.choice_shown:
                flag += f" (tool_choice {step.choice_shown})"
            lines.append(
                f"-- attempt {step.attempt} · iteration {step.iteration}{flag} · "
                f"model {step.model_ms:.1f} ms · tools {step.tools_ms:.1f} ms · "
                f"tokens in {step.usage.input_tokens} out {step.usage.output_tokens}"
            )
            if step.thinking:
                lines.append(f"   thinking: {_clip(step.thinking, max_chars)}")
            if step.thought:
                lines.append(f"   thought: {_clip(step.thought, max_chars)}")
            for call in step.tool_calls:
                args = json.dumps(call.args, ensure_ascii=False) if call.args is not None else "?"
                lines.append(f"   call {call.name}({_clip(args, max_chars)}) [{call.call_id}]")
                if call.approval is not None:
                    lines.append(f"     {approval_text(call.approval)}")
                if call.error is not None:
                    lines.append(f"     error: {_clip(call.error, max_chars)}")
                else:
                    lines.append(f"     observation: {_clip(call.result or '', max_chars)}")
                for sampled in call.sampling:
                    lines.append(f"     sampling by {sampled.model}: "
                                 f"{_clip(sampled.thought, max_chars)}")
                if call.stand_in is not None:
                    head, steps = stand_in_text(call.stand_in)
                    lines += [f"     {head}", *(f"       {_clip(s, max_chars)}" for s in steps)]
                if isinstance(call.run, Trace):
                    lines.extend(f"     | {line}" for line in call.run._lines(max_chars))
        for pause in self.pauses:
            waiting = ", ".join(f"{name} [{call_id}]" for name, call_id, _, _ in pause_rows(pause))
            resumed = "resumed" if isinstance(pause, dict) and pause.get("resumed_at") else (
                "not resumed")
            iteration = pause.get("iteration") if isinstance(pause, dict) else None
            lines.append(f"-- paused at iteration {iteration} for approval of {waiting} "
                         f"({resumed})")
        for attempt in self.attempts:
            if attempt.errors:
                lines.append(f"-- attempt {attempt.attempt} {attempt.outcome}: "
                             + "; ".join(attempt.errors))
        if self.loop_guard:
            lines.append("loop guard: " + ", ".join(f"{action} {count}" for action, count
                                                    in self.loop_guard.items()))
        for handoff in self.handoffs:
            lines.append(f"-- handed from {handoff.get('from')} to {handoff.get('to')} after "
                         f"iteration {handoff.get('iteration')}")
        for trip in self.guardrails:
            lines.append(f"guardrail {trip.get('kind')} {trip.get('name')!r} tripped: "
                         f"{_clip(str(trip.get('reason')), max_chars)}")
        if self.termination:
            lines.append(f"termination: {self.termination}")
        if self.error:
            lines.append(f"error: {self.error}")
        u = self.usage
        lines.append(
            f"usage: requests {u.requests} · tool calls {u.tool_calls} · input {u.input_tokens}"
            f" (cache read {u.cache_read_tokens}, write {u.cache_write_tokens}) · "
            f"output {u.output_tokens} · cost {money(recorded_cost(u.cost, self.metadata))}"
        )
        if self.status != "running" and self.output is not None:
            lines.append(f"output: {_clip(str(self.output), max_chars)}")
        return lines


def offered_text(names: object) -> str:
    """The tools a selection offered, for the views ("none" when it offered none). Whatever a
    stored trace holds there (it may come from a damaged or hostile store) is shown as text."""
    if not isinstance(names, list | tuple):
        return str(names)
    return ", ".join(map(str, names)) if names else "none (the model could only answer in words)"


def _names(value: Any) -> list[str] | None:
    """A stored ``tools_offered`` back: None when not recorded, else a list of names (a
    stored value of another shape becomes one name, its text)."""
    if value is None:
        return None
    return [str(name) for name in value] if isinstance(value, list | tuple) else [str(value)]


def _counts(value: Any) -> dict[str, int]:
    """A stored ``loop_guard`` back: the integer counts it holds (a damaged or hostile store
    may hold anything there)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _clip(text: str, limit: int) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[:limit] + f"… [+{len(text) - limit} chars]"


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value

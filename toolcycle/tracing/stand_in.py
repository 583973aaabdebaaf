"""What a tool acting for the model did in one call: a typed part of the trace.

Some tools call the run's other tools themselves: a learned routine runs a sequence, a
fallback calls an alternative after a failure, a repair or a respelling calls the tool again
with mended arguments (:mod:`toolcycle.playbook`). The trace records the call the model made;
the calls made inside it would be invisible there, and what learns from traces would have to
read them back out of the stand-in's answer text, which any change of wording, a truncated
observation or a tool result that looks like a step line would change. So the stand-in says
what it did through ``RunContext.record_stand_in`` and the trace keeps it typed, on the
:class:`~toolcycle.tracing.trace.ToolCallRecord` of the call it answered
(``record.stand_in``): stored with the trace, read back in another process, redacted with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

StepStatus = Literal["ok", "empty", "error", "timeout"]

#: Which stand-in answered a call: a learned routine (called by name, or answering its first
#: tool's call), a fallback after a failure, a routine repairing a tool's failed call, a call
#: made again with an argument reshaped or respelled, or with its argument names mended.
StandInKind = Literal["routine", "fallback", "repair", "reshape", "respell", "rename"]

_STATUSES: frozenset[str] = frozenset(get_args(StepStatus))
_KINDS: frozenset[str] = frozenset(get_args(StandInKind))


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """One call a stand-in made for the model."""

    tool: str
    arguments: dict[str, Any]
    status: StepStatus
    #: the step's result, or its failure after the tool's name and arguments
    text: str
    #: a timed-out step: the timeout it was given, in seconds (``None``: none stated)
    timeout_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "status": self.status,
                "text": self.text, "timeout_s": self.timeout_s}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepOutcome | None:
        """A stored step, or ``None`` when the stored value is not one (a hand-edited or
        damaged trace loses that step, not the trace)."""
        tool, arguments, status = data.get("tool"), data.get("arguments"), data.get("status")
        text, timeout = data.get("text", ""), data.get("timeout_s")
        if (not isinstance(tool, str) or not isinstance(arguments, dict)
                or status not in _STATUSES or not isinstance(text, str)
                or not (timeout is None or (isinstance(timeout, (int, float))
                                            and not isinstance(timeout, bool)))):
            return None
        return cls(tool, arguments, cast(StepStatus, status), text,
                   None if timeout is None else float(timeout))


@dataclass(frozen=True, slots=True)
class StandIn:
    """What a stand-in did for one call of ``tool`` (the name the trace records).

    ``ok``: a routine ran every step; a repair's routine got through; a fallback's
    alternative answered (rather than failing too). ``alternative``: the tool a fallback
    called. ``steps``: the calls it made, in order (a fallback's starts with the failed call
    of ``tool``); a call made again with mended arguments makes no steps of its own.
    """

    kind: StandInKind
    tool: str
    ok: bool = True
    alternative: str = ""
    steps: tuple[StepOutcome, ...] = ()

    @property
    def ran(self) -> bool:
        """Whether its answer says what ran for the model: a routine's every step, a
        repair's chain or a fallback's alternative (the answer then starts with "Ran ...")."""
        return self.ok and self.kind in ("routine", "repair", "fallback")

    @property
    def found_nothing(self) -> bool:
        """Whether it is a fallback that got no answer: the tool failed or found nothing, and
        its alternative failed or found nothing too. The call's result is then text saying
        so, not data: what reads results for an answer's sources must not count it as
        something found."""
        return self.kind == "fallback" and not any(s.status == "ok" for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "ok": self.ok,
                "alternative": self.alternative,
                "steps": [step.to_dict() for step in self.steps]}

    @classmethod
    def from_dict(cls, data: object) -> StandIn | None:
        """A stored stand-in, or ``None`` when the stored value is not one."""
        if not isinstance(data, dict):
            return None
        kind, tool, ok = data.get("kind"), data.get("tool"), data.get("ok", True)
        alternative, steps = data.get("alternative", ""), data.get("steps") or []
        if (kind not in _KINDS or not isinstance(tool, str) or not isinstance(ok, bool)
                or not isinstance(alternative, str) or not isinstance(steps, list)):
            return None
        read = (StepOutcome.from_dict(s) for s in steps if isinstance(s, dict))
        return cls(cast(StandInKind, kind), tool, ok, alternative,
                   tuple(s for s in read if s is not None))

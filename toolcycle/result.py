"""What a run returns (and what a failed run carries in ``error.result``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .approval import ApprovalRequest
from .events import CallbackError
from .messages import Message, Usage
from .status import RunStatus, is_run_status, is_success
from .tracing.trace import ToolCallRecord, Trace

#: The limits that can stop a run (``token_budget`` covers the three token fields). Each one's
#: check, wording and error live in :mod:`toolcycle.limits`; the name is here because it is
#: also a reason a run ends.
LimitName = Literal["max_iterations", "max_tool_calls", "timeout", "token_budget",
                    "repeated_calls", "max_cost"]

#: Why a run ended: it completed, a limit stopped it, it failed, or it paused for approvals.
TerminationReason = Literal["completed", "max_attempts", "cancelled", "model_error", "error",
                            "paused", "guardrail"] | LimitName


@dataclass(slots=True)
class Termination:
    """Why the run ended and what the loop did about it.

    ``action``: ``"answered"`` (the model finished on its own), ``"final_answer"`` (a limit was
    hit and one more request without tools produced the answer), ``"partial"`` (a limit was
    hit and what existed was returned), ``"raised"`` (the run failed with an error) or
    ``"paused"`` (calls wait for a person: ``agent.resume`` continues the run).
    """

    reason: TerminationReason
    action: Literal["answered", "final_answer", "partial", "raised", "paused"] = "answered"
    detail: str = ""
    limit: LimitName | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "action": self.action, "detail": self.detail,
                "limit": self.limit}


@dataclass(frozen=True, slots=True)
class ContextSummary:
    """A summary that stands for older messages of a list: ``text`` replaces
    ``messages[start + 1:upto]`` and is merged into the user message ``messages[start]`` (the
    first of the run or of its conversation, which stays). ``messages[upto]`` is an assistant
    message, so no call is cut from its result. A run's compaction ends with one
    (:attr:`RunResult.context_summary`); a conversation stores it, in its own indices, so
    that its next run starts from it (docs/compaction.md)."""

    text: str
    start: int
    upto: int


@dataclass(slots=True, repr=False)
class RunResult[OutputT]:
    """The outcome of one run: the output plus everything needed to see how it came about.

    Its ``repr`` is a one-line summary, not the whole conversation: a result is repr'd more
    often than one expects (REPLs, logs, and ``asyncio.run``, which reprs the main task and
    with it the task's result when it checks the SIGINT handler), and dumping a long run's
    messages and trace there would cost milliseconds per call.
    """

    output: OutputT | None
    messages: list[Message]
    new_message_index: int
    usage: Usage
    trace: Trace
    termination: Termination
    run_id: str
    callback_errors: list[CallbackError] = field(default_factory=list)
    #: Paused runs only: the calls waiting for a decision, and the JSON-serialisable record
    #: ``agent.resume(snapshot, approvals=...)`` continues (see toolcycle.run.snapshot).
    pending_approvals: list[ApprovalRequest] = field(default_factory=list)
    snapshot: dict[str, Any] | None = None
    #: A team's runs: every run of an agent this run called as a tool (``Agent.as_tool``),
    #: in the order they started, the runs those called included (docs/teams.md). Their
    #: usage is part of this run's ``usage``: ``usage`` is this run's own requests plus theirs.
    runs: list[RunResult[Any]] = field(default_factory=list)
    #: The summary the run's context compaction ended with (indices into ``messages``), or
    #: ``None`` when it wrote none (docs/compaction.md).
    context_summary: ContextSummary | None = None

    def __repr__(self) -> str:
        output = repr(self.output)
        if len(output) > 80:
            output = output[:77] + "..."
        return (
            f"RunResult(output={output}, status={self.trace.status!r}, "
            f"termination={self.termination.reason!r}, "
            f"iterations={self.iterations}, tool_calls={len(self.tool_calls)}, "
            f"messages={len(self.messages)}, usage={self.usage!r}, run_id={self.run_id!r})"
        )

    @property
    def status(self) -> RunStatus:
        """How the run ended (:mod:`toolcycle.status`, docs/status.md): ``"success"`` only
        when the model answered on its own and the answer passed; ``"forced"`` (a limit forced
        the answer), ``"partial"``, ``"tool_error"`` (the answer is a tool's error text),
        ``"paused"`` (see ``pending_approvals``), ``"failure"`` or ``"cancelled"`` (the last
        two on ``error.result``). The trace's status, which the trace store keeps."""
        status = self.trace.status
        return status if is_run_status(status) else "failure"

    @property
    def succeeded(self) -> bool:
        """Whether the run did what was asked (``status == "success"``): the one check a
        caller needs before trusting ``output``. A forced or partial answer, a tool's error
        passed through and a paused run all return an output-shaped result and are not."""
        return is_success(self.trace.status)

    @property
    def agent_name(self) -> str:
        """The agent that answered: the run's own, or after handoffs the last one handed the
        conversation (``trace.handoffs`` has each)."""
        return self.trace.answered_by

    @property
    def paused(self) -> bool:
        return self.termination.action == "paused"

    @property
    def partial(self) -> bool:
        """True when a limit cut the run short and ``output`` is only what existed then."""
        return self.termination.action == "partial"

    @property
    def forced_final_answer(self) -> bool:
        return self.termination.action == "final_answer"

    @property
    def new_messages(self) -> list[Message]:
        """The messages this run added (pass ``messages`` as the next run's history)."""
        return self.messages[self.new_message_index :]

    @property
    def tool_calls(self) -> list[ToolCallRecord]:
        return self.trace.tool_calls

    @property
    def iterations(self) -> int:
        """The model's turns (a head start's call, made before the first, is none)."""
        return self.trace.iterations

    @property
    def attempts(self) -> int:
        return max((s.attempt for s in self.trace.steps), default=1)

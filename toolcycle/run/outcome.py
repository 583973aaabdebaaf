"""The result of a run, read from its state: one builder for a run that ended (the loop) and
one that paused (:mod:`.approvals`), so both carry the same fields."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..approval import ApprovalRequest
from ..result import RunResult, Termination
from .compaction import summary_of
from .state import RunState


def result_of(state: RunState, output: Any, pending: Sequence[ApprovalRequest] = (),
              snapshot: dict[str, Any] | None = None) -> RunResult[Any]:
    """``RunResult`` of ``state`` with ``output`` (a paused run's ``pending`` calls and its
    ``snapshot`` too); the summary its compaction ended with goes with it (a conversation
    keeps it)."""
    return RunResult(
        output=output, messages=state.messages, new_message_index=state.new_message_index,
        usage=state.usage, trace=state.trace.trace,
        termination=state.termination or Termination("error", "raised", "run did not finish"),
        run_id=state.setup.run_id, callback_errors=state.emitter.errors, runs=state.runs,
        pending_approvals=list(pending), snapshot=snapshot, context_summary=summary_of(state))

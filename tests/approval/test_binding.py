"""An approval names its run, its call and the arguments it approved (r2-04).

Call ids are not unique across runs (``call_1`` starts every scripted run), so an answer keyed
by call id alone could be replayed onto another run's snapshot. Every answer is checked against
the snapshot's pending call: another run, another call or other arguments are refused with
``ApprovalMismatch`` and nothing runs.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

from toolcycle import (
    Agent,
    Approval,
    ApprovalMismatch,
    ConfigurationError,
    RunResult,
    tool,
)
from toolcycle.testing import ScriptedModel, call

KEY = "k" * 32


def _janitor(deleted: list[str], path: str, key: str | None = KEY, *,
             resuming: bool = True) -> Agent:
    """The agent, in the process that starts the run or (``resuming``) in one that resumes it
    (its scripted model then answers the turn after the pause)."""
    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    script = ["Done."] if resuming else [call("delete_file", {"path": path})]
    return Agent(ScriptedModel(script),
                 tools=[delete_file], name="janitor", snapshot_key=key)


def _paused(deleted: list[str], path: str, key: str | None = KEY) -> RunResult[Any]:
    result = _janitor(deleted, path, key, resuming=False).run_sync(f"clean {path}")
    assert result.status == "paused"
    return result


@pytest.mark.parametrize("answer_of", [
    lambda r: {r.pending_approvals[0].call_id: True},        # the form first taught
    lambda r: [r.pending_approvals[0].approve()],            # the bound Approval
    lambda r: {"call_1": r.pending_approvals[0].approve()},
])
def test_an_answer_given_for_one_run_is_refused_by_another_runs_snapshot(answer_of: Any) -> None:
    deleted: list[str] = []
    run_a = _paused(deleted, "/tmp/a.log")
    run_b = _paused(deleted, "/etc/passwd")
    assert run_a.pending_approvals[0].call_id == run_b.pending_approvals[0].call_id
    with pytest.raises(ApprovalMismatch) as info:
        _janitor(deleted, "/tmp/a.log").resume_sync(run_b.snapshot or {}, answer_of(run_a))
    assert any(run_b.run_id in problem for problem in info.value.problems)
    assert deleted == []
    final = _janitor(deleted, "/tmp/a.log").resume_sync(run_a.snapshot or {}, answer_of(run_a))
    assert final.status == "success" and deleted == ["/tmp/a.log"]


def test_an_approval_of_other_arguments_is_refused() -> None:
    deleted: list[str] = []
    paused = _paused(deleted, "/tmp/a.log")
    request = paused.pending_approvals[0]
    forged = Approval(request.run_id, request.call_id, "0" * 64, True)
    with pytest.raises(ApprovalMismatch, match="other arguments"):
        _janitor(deleted, "/tmp/a.log").resume_sync(paused.snapshot or {}, [forged])
    assert deleted == []


def test_an_approval_travels_through_json_and_a_denial_keeps_its_reason() -> None:
    deleted: list[str] = []
    paused = _paused(deleted, "/tmp/a.log")
    sent = json.dumps([paused.pending_approvals[0].deny("not today").to_dict()])
    answers = [Approval.from_dict(data) for data in json.loads(sent)]
    final = _janitor(deleted, "/tmp/a.log").resume_sync(paused.snapshot or {}, answers)
    assert deleted == [] and final.trace.tool_calls[0].error == "not today"


def test_a_damaged_approval_from_json_is_a_configuration_error_listing_each_problem() -> None:
    with pytest.raises(ConfigurationError) as info:
        Approval.from_dict({"run_id": 5, "approved": False})
    assert len(info.value.problems) == 4  # call_id, run_id, digest, the denial's reason
    with pytest.raises(ConfigurationError):
        Approval.from_dict(["not", "an", "object"])


def test_a_plain_call_id_is_refused_for_a_signed_snapshot_and_deprecated_for_an_unsigned(
) -> None:
    deleted: list[str] = []
    signed = _paused(deleted, "/tmp/a.log")
    with pytest.raises(ApprovalMismatch, match="names no run"):
        _janitor(deleted, "/tmp/a.log").resume_sync(signed.snapshot or {}, {"call_1": True})
    unsigned = _paused(deleted, "/tmp/b.log", key=None)
    with pytest.warns(DeprecationWarning, match="not bound to the run"):
        final = _janitor(deleted, "/tmp/b.log", key=None).resume_sync(
            json.loads(json.dumps(unsigned.snapshot)), {"call_1": True})
    assert final.status == "success" and deleted == ["/tmp/b.log"]


def test_a_bound_answer_raises_no_deprecation_warning() -> None:
    deleted: list[str] = []
    paused = _paused(deleted, "/tmp/a.log", key=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _janitor(deleted, "/tmp/a.log", key=None).resume_sync(
            paused.snapshot or {}, {paused.pending_approvals[0].call_id: True})
    assert deleted == ["/tmp/a.log"]


def test_the_pending_calls_of_the_snapshot_must_be_the_calls_of_its_last_turn() -> None:
    """The approval binds to what ``pending`` shows; the call that runs is the one in
    ``messages``: an unsigned snapshot whose two disagree is refused."""
    from toolcycle import SnapshotError
    from toolcycle.run import snapshot as snapshots

    deleted: list[str] = []
    paused = _paused(deleted, "/tmp/a.log", key=None)
    data = json.loads(json.dumps(paused.snapshot))
    data["messages"][-1]["parts"][-1]["arguments"] = {"path": "/etc/passwd"}
    body = {k: v for k, v in data.items() if k not in ("format", "version", "integrity")}
    with pytest.raises(SnapshotError, match="pending"):
        _janitor(deleted, "/tmp/a.log", key=None).resume_sync(
            snapshots.seal(body, None), {paused.pending_approvals[0].call_id: True})
    assert deleted == []

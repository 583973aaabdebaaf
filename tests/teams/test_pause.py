"""A call deep inside a team that waits for a person pauses the whole team; one snapshot (the
top run's) resumes it, once, in this process or another, and the team's promises hold across
the pause: every call id answered once in every history, usage adding up exactly, an approved
side effect run at most once."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolcycle import (
    Agent,
    Approval,
    ApprovalMismatch,
    Cancelled,
    CancelToken,
    ConfigurationError,
    Defer,
    SnapshotConsumed,
    SnapshotError,
    tool,
)
from toolcycle.approval import Via
from toolcycle.testing import HistoryChecker, ScriptedModel, call

from .helpers import Desk, check_histories, nested_usage

ROOT = Path(__file__).resolve().parents[2]


async def test_a_members_call_pauses_the_team_and_one_snapshot_resumes_it() -> None:
    desk = Desk([call("delete", {"path": "/tmp/a"}), "cleaned /tmp/a"],
                [call("janitor", {"input": "clean up"}), "done: /tmp/a is gone"])
    paused = await desk.boss.run("tidy")

    assert paused.status == "paused" and paused.output is None
    [request] = paused.pending_approvals
    assert (request.tool_name, request.arguments, request.agent_name) == (
        "delete", {"path": "/tmp/a"}, "janitor")
    [member] = paused.runs
    assert member.status == "paused" and request.run_id == member.run_id
    assert request.via == (Via("boss", paused.run_id, paused.tool_calls[0].call_id, "janitor"),)
    assert desk.deleted == []
    # the boss's call of the janitor is open: neither answered nor made up
    assert paused.messages[-1].role == "assistant" and paused.tool_calls[0].result is None
    assert paused.tool_calls[0].run is member.trace
    assert paused.usage.requests == 2 and paused.trace.status == "paused"

    snapshot = json.loads(json.dumps(paused.snapshot))  # stored anywhere, read back
    assert snapshot["version"] == 2 and list(snapshot["members"]) == [request.call_id]
    final = await desk.boss.resume(snapshot, [request.approve()])

    assert final.status == "success" and final.output == "done: /tmp/a is gone"
    assert final.run_id == paused.run_id and desk.deleted == ["/tmp/a"]
    [resumed] = final.runs
    assert resumed.run_id == member.run_id and resumed.output == "cleaned /tmp/a"
    assert final.tool_calls[0].result == "cleaned /tmp/a"
    assert final.tool_calls[0].run is resumed.trace
    assert resumed.tool_calls[0].approval == {"decision": "approved", "by": "person"}
    assert final.usage.requests == 4 and final.usage.tool_calls == 2
    check_histories(final)

    with pytest.raises(SnapshotConsumed):  # the team's snapshot is resumed once
        await desk.boss.resume(snapshot, [request.approve()])
    assert desk.deleted == ["/tmp/a"]


async def test_a_denial_goes_back_to_the_members_model_as_an_observation() -> None:
    seen: list[str] = []

    def janitor(messages: Any, settings: Any) -> Any:
        if len(messages) <= 2:
            return call("delete", {"path": "/etc/hosts"})
        seen.append(messages[-1].parts[0].content)
        return "I left /etc/hosts alone"

    desk = Desk([], [call("janitor", {"input": "clean"}), "nothing deleted"])
    desk.janitor = Agent(ScriptedModel(janitor), tools=[*desk.janitor.tools.values()],
                         name="janitor")
    desk.boss = Agent(desk.boss.model, tools=[desk.janitor.as_tool()], name="boss")
    paused = await desk.boss.run("tidy")
    final = await desk.boss.resume(paused.snapshot,
                                   [paused.pending_approvals[0].deny("system files stay")])
    assert seen == ["system files stay"] and desk.deleted == []
    assert final.output == "nothing deleted"
    assert final.runs[0].tool_calls[0].error == "system files stay"
    check_histories(final)


async def test_a_grandchild_pauses_the_team_through_two_calls() -> None:
    desk = Desk([call("delete", {"path": "/tmp/g"}), "gone"],
                [call("janitor", {"input": "clean"}), "manager: gone"])
    manager = Agent(desk.boss.model, "You manage.", [desk.janitor.as_tool()], name="manager")
    top = Agent(ScriptedModel([call("manager", {"input": "see to it"}), "top: all clean"]),
                tools=[manager.as_tool()], name="top")
    paused = await top.run("clean")

    [request] = paused.pending_approvals
    assert [(v.agent_name, v.tool_name) for v in request.via] == [
        ("top", "manager"), ("manager", "janitor")]
    assert [r.agent_name for r in paused.runs] == ["manager", "janitor"]
    snapshot = paused.snapshot
    assert snapshot is not None
    [inner] = snapshot["members"].values()
    assert list(inner["members"]) == [request.via[1].call_id]

    final = await top.resume(json.loads(json.dumps(snapshot)), [request.approve()])
    assert final.output == "top: all clean" and desk.deleted == ["/tmp/g"]
    assert [r.agent_name for r in final.runs] == ["manager", "janitor"]
    assert [r.status for r in final.runs] == ["success", "success"]
    assert final.usage.requests == 6
    check_histories(final)


async def test_parallel_members_keep_the_answers_of_those_that_did_not_pause() -> None:
    runs: list[str] = []

    @tool
    def note(text: str) -> str:
        """Write a note."""
        runs.append(text)
        return f"noted {text}"

    desk = Desk([call("delete", {"path": "/tmp/p"}), "deleted /tmp/p"], [])
    scribe = Agent(ScriptedModel([call("note", {"text": "x"}), "noted"]), tools=[note],
                   name="scribe")
    boss = Agent(ScriptedModel([[call("scribe", {"input": "note x"}),
                                 call("janitor", {"input": "clean"}),
                                 call("look", {"path": "/tmp/q"})], "both done"]),
                 tools=[scribe.as_tool(concurrent=True), desk.janitor.as_tool(concurrent=True),
                        *[t for t in desk.boss.tools.values() if t.name == "look"]],
                 name="boss")
    paused = await boss.run("go")
    assert paused.status == "paused" and runs == ["x"] and desk.looked == ["/tmp/q"]
    assert {r.agent_name: r.status for r in paused.runs} == {"scribe": "success",
                                                             "janitor": "paused"}

    final = await boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert final.output == "both done" and runs == ["x"] and desk.looked == ["/tmp/q"]
    assert desk.deleted == ["/tmp/p"]
    assert [c.result for c in final.tool_calls] == ["noted", "deleted /tmp/p", "/tmp/q: 3 lines"]
    assert final.usage.tool_calls == 5  # three by the boss, one each by scribe and janitor
    check_histories(final)


async def test_the_teams_policy_defers_a_members_call_to_a_person() -> None:
    desk = Desk([call("look", {"path": "/a"}), "looked"],
                [call("janitor", {"input": "look"}), "ok"],
                approval=lambda request, ctx: Defer() if request.tool_name == "look"
                else __import__("toolcycle").Approve())
    paused = await desk.boss.run("go")
    [request] = paused.pending_approvals
    assert request.tool_name == "look" and request.agent_name == "janitor"
    assert desk.looked == []
    final = await desk.boss.resume(paused.snapshot, [request.approve()])
    assert final.output == "ok" and desk.looked == ["/a"]


async def test_the_parents_own_deferred_call_and_a_members_wait_together() -> None:
    desk = Desk([call("delete", {"path": "/m"}), "member done"],
                [[call("janitor", {"input": "clean"}), call("delete", {"path": "/top"})],
                 "all done"])
    boss = Agent(desk.boss.model, tools=[desk.janitor.as_tool(),
                                         desk.janitor.tools["delete"]], name="boss")
    paused = await boss.run("go")
    assert [(r.agent_name, r.arguments["path"]) for r in paused.pending_approvals] == [
        ("janitor", "/m"), ("boss", "/top")]
    assert paused.pending_approvals[1].via == ()
    with pytest.raises(ConfigurationError, match="no answer for"):
        await boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    final = await boss.resume(paused.snapshot, [paused.pending_approvals[0].approve(),
                                                paused.pending_approvals[1].deny("not the top")])
    assert desk.deleted == ["/m"] and final.output == "all done"
    assert final.tool_calls[1].error == "not the top"
    check_histories(final)


async def test_answers_are_bound_to_the_member_run_that_asked() -> None:
    left = Desk([call("delete", {"path": "/l"}), "l"], [])
    right = Desk([call("delete", {"path": "/r"}), "r"], [])
    boss = Agent(ScriptedModel([[call("left", {"input": "x"}), call("right", {"input": "y"})],
                                "both"]),
                 tools=[left.janitor.as_tool("left", concurrent=True),
                        right.janitor.as_tool("right", concurrent=True)], name="boss")
    paused = await boss.run("go")
    first, second = paused.pending_approvals
    assert first.call_id == second.call_id == "call_1"  # each member numbers its own calls
    with pytest.raises(ConfigurationError, match="waits in several runs"):
        await boss.resume(paused.snapshot, {"call_1": True})
    with pytest.raises(ConfigurationError, match="two answers for 'call_1'"):
        await boss.resume(paused.snapshot, [
            first.approve(), Approval(first.run_id, "call_1", second.arguments_sha256, True)])
    # (a dict cannot hold both: its keys are equal strings; the list of answers can)
    final = await boss.resume(paused.snapshot, [first.approve(), second.deny("no")])
    assert left.deleted == ["/l"] and right.deleted == [] and final.output == "both"
    check_histories(final)


async def test_a_changed_member_snapshot_or_agent_is_refused_before_anything_runs() -> None:
    desk = Desk([call("delete", {"path": "/tmp/a"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"])
    paused = await desk.boss.run("go")
    assert paused.snapshot is not None
    forged = json.loads(json.dumps(paused.snapshot))
    [member] = forged["members"].values()
    member["pending"][0]["arguments"]["path"] = "/etc/passwd"
    with pytest.raises(SnapshotError, match="integrity"):
        await desk.boss.resume(forged, [paused.pending_approvals[0].approve()])
    request = paused.pending_approvals[0]
    with pytest.raises(ApprovalMismatch, match="given for run 'another'"):
        await desk.boss.resume(paused.snapshot, [
            Approval("another", request.call_id, request.arguments_sha256, True)])

    other = Agent(desk.janitor.model, tools=[desk.janitor.tools["delete"]], name="janitor")
    boss = Agent(desk.boss.model, tools=[other.as_tool(), desk.boss.tools["look"]], name="boss")
    with pytest.raises(SnapshotError, match=r"members\['call_1'\] \(janitor\): tools: this "
                                            "agent lacks look"):
        await boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert desk.deleted == []
    final = await desk.boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert final.output == "ok" and desk.deleted == ["/tmp/a"]  # refusals consumed nothing


async def test_a_paused_team_resumed_cancelled_answers_every_call_and_runs_nothing() -> None:
    desk = Desk([call("delete", {"path": "/tmp/c"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"])
    paused = await desk.boss.run("go")
    token = CancelToken()
    token.cancel("the person walked away")
    with pytest.raises(Cancelled) as caught:
        await desk.boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()],
                               cancel_token=token)
    result = caught.value.result
    assert result is not None and desk.deleted == []
    [member] = result.runs
    assert member.status == "cancelled" and result.status == "cancelled"
    for run in (result, member):
        HistoryChecker("both").check(run.messages)  # every call id answered
    assert "CANCELLED" in (result.tool_calls[0].error or "")
    assert nested_usage(result.trace) == result.usage


async def test_a_team_paused_mid_turn_keeps_its_time_left() -> None:
    from toolcycle import Limits

    desk = Desk([call("delete", {"path": "/tmp/t"}), "done"],
                [call("janitor", {"input": "clean"}), "ok"], limits=Limits(timeout=60))
    paused = await desk.boss.run("go")
    assert paused.snapshot is not None
    [member] = paused.snapshot["members"].values()
    assert 0 < member["counters"]["timeout_left_s"] <= 60
    await asyncio.sleep(0)
    final = await desk.boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert final.status == "success"


RESUME_ELSEWHERE = """
import json, sys
from toolcycle import Agent, Approval, tool
from toolcycle.testing import ScriptedModel

deleted = []

@tool(requires_approval=True)
def delete(path: str) -> str:
    '''Delete a file.'''
    deleted.append(path)
    return f"deleted {path}"

@tool(concurrent=True)
def look(path: str) -> str:
    '''Look at a file.'''
    return f"{path}: 3 lines"

janitor = Agent(ScriptedModel(["cleaned elsewhere"]), "You clean.", [delete, look],
                name="janitor")
boss = Agent(ScriptedModel(["done elsewhere"]), "You lead.", [janitor.as_tool(), look],
             name="boss")
snapshot = json.load(open(sys.argv[1]))
answers = [Approval.from_dict(a) for a in json.load(open(sys.argv[2]))]
result = boss.resume_sync(snapshot, answers)
print(json.dumps({"output": result.output, "deleted": deleted,
                  "runs": [r.output for r in result.runs],
                  "requests": result.usage.requests}))
"""


def test_a_paused_team_resumes_in_another_process_once(tmp_path: Path) -> None:
    desk = Desk([call("delete", {"path": "/tmp/x"}), "unused"],
                [call("janitor", {"input": "clean"}), "unused"])
    paused = desk.boss.run_sync("tidy")
    (tmp_path / "snapshot.json").write_text(json.dumps(paused.snapshot))
    (tmp_path / "answers.json").write_text(json.dumps(
        [r.approve().to_dict() for r in paused.pending_approvals]))
    (tmp_path / "resume.py").write_text(RESUME_ELSEWHERE)
    done = subprocess.run([sys.executable, str(tmp_path / "resume.py"),
                           str(tmp_path / "snapshot.json"), str(tmp_path / "answers.json")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == {"output": "done elsewhere", "deleted": ["/tmp/x"],
                       "runs": ["cleaned elsewhere"], "requests": 4}
    # this process shares the ledger: the snapshot was consumed over there
    with pytest.raises(SnapshotConsumed):
        desk.boss.resume_sync(paused.snapshot, [r.approve() for r in paused.pending_approvals])
    assert desk.deleted == []


def test_answers_by_call_id_from_a_command_line_bind_to_the_member_that_asked() -> None:
    from toolcycle.approval import bind_to_snapshot

    desk = Desk([call("delete", {"path": "/tmp/b"}), "removed"],
                [call("janitor", {"input": "clean"}), "ok"])
    paused = desk.boss.run_sync("go")
    assert paused.snapshot is not None
    [request] = paused.pending_approvals
    bound = bind_to_snapshot(json.loads(json.dumps(paused.snapshot)), {"call_1": True})
    assert bound == {"call_1": request.approve()}  # the janitor's run, not the boss's
    final = desk.boss.resume_sync(paused.snapshot, bound)
    assert final.output == "ok" and desk.deleted == ["/tmp/b"]


async def test_a_resume_leaves_the_callers_snapshot_as_it_was_so_a_replay_is_refused_as_consumed(
) -> None:
    from pydantic import BaseModel

    class Done(BaseModel):
        count: int

    @tool(requires_approval=True)
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    # the resumed attempt fails validation once: its errors join the paused attempt's record
    agent = Agent(ScriptedModel([call("wipe"), call("final_result", {"count": "many"}),
                                 call("final_result", {"count": 2})]), tools=[wipe],
                  output=Done)
    paused = await agent.run("wipe")
    snapshot = json.loads(json.dumps(paused.snapshot))
    kept = json.dumps(snapshot, sort_keys=True)
    final = await agent.resume(snapshot, [paused.pending_approvals[0].approve()])
    assert final.output == Done(count=2) and final.trace.attempts[0].errors
    assert json.dumps(snapshot, sort_keys=True) == kept
    with pytest.raises(SnapshotConsumed):
        await agent.resume(snapshot, [paused.pending_approvals[0].approve()])


async def test_the_teams_policy_governs_a_member_that_gates_nothing_itself() -> None:
    seen: list[str] = []

    @tool
    def note(text: str) -> str:
        """Write a note."""
        seen.append(text)
        return "noted"

    scribe = Agent(ScriptedModel([call("note", {"text": "x"}), "wrote it"]), tools=[note],
                   name="scribe")  # no policy, no tool that requires approval
    boss = Agent(ScriptedModel([call("scribe", {"input": "note x"}), "ok"]),
                 tools=[scribe.as_tool()], name="boss",
                 approval=lambda request, ctx: Defer() if request.tool_name == "note"
                 else __import__("toolcycle").Approve())
    paused = await boss.run("go")
    [request] = paused.pending_approvals
    assert (request.agent_name, request.tool_name, seen) == ("scribe", "note", [])
    final = await boss.resume(paused.snapshot, [request.deny("no notes today")])
    assert final.output == "ok" and seen == []
    assert final.runs[0].tool_calls[0].approval == {"decision": "denied", "by": "person",
                                                    "reason": "no notes today"}


async def test_a_runs_own_default_deferral_at_its_final_request_is_denied() -> None:
    """At a limit the run must answer now (``on_limit="final_answer"``): a call of a tool
    that requires approval, made beside the forced output, is denied, not left to pause the
    run (a policy's deferral already was; so is a team member's while any run above it
    makes its final request)."""
    from pydantic import BaseModel

    from toolcycle import Limits

    class Report(BaseModel):
        text: str

    desk = Desk([], [])
    agent = Agent(ScriptedModel([call("look", {"path": "/tmp"}),
                                 [call("delete", {"path": "/tmp/f"}),
                                  call("final_result", {"text": "done"})]]),
                  tools=[desk.janitor.tools["delete"], desk.boss.tools["look"]],
                  output=Report, limits=Limits(max_iterations=1))
    result = await agent.run("go")
    assert result.status != "paused" and desk.deleted == []
    assert "cannot be asked now" in (result.tool_calls[1].error or "")


async def test_the_resumed_team_lists_every_agents_run_those_ended_before_the_pause_too(
) -> None:
    from .helpers import check_team

    desk = Desk([call("delete", {"path": "/tmp/r"}), "deleted"], [])
    scout = Agent(ScriptedModel([call("look", {"path": "/tmp"}), "one old file"]),
                  tools=[desk.boss.tools["look"]], name="scout")
    boss = Agent(ScriptedModel([call("scout", {"input": "look"}),
                                call("janitor", {"input": "clean"}), "all clean"]),
                 tools=[scout.as_tool(), desk.janitor.as_tool()], name="boss")
    paused = await boss.run("go")
    assert [r.agent_name for r in paused.runs] == ["scout", "janitor"]
    snapshot = json.loads(json.dumps(paused.snapshot))
    final = await boss.resume(snapshot, [paused.pending_approvals[0].approve()])
    assert [(r.agent_name, r.status) for r in final.runs] == [("scout", "success"),
                                                              ("janitor", "success")]
    scouted = final.runs[0]
    assert scouted.output == "one old file" and scouted.trace is final.tool_calls[0].run
    assert scouted.run_id == paused.runs[0].run_id
    check_team(final)  # each history well-formed; the team's usage is its agents' exactly

    damaged = json.loads(json.dumps(paused.snapshot))
    damaged["runs"][0]["termination"] = "fine"
    from toolcycle.run.snapshot import seal
    resealed = seal({k: v for k, v in damaged.items()
                     if k not in ("format", "version", "integrity")}, None)
    with pytest.raises(SnapshotError, match=r"runs\[0\]"):
        await boss.resume(resealed, [paused.pending_approvals[0].approve()])


async def test_a_resumed_members_call_is_not_checked_or_counted_again() -> None:
    """Its arguments guardrail and the loop guard ran when the call started; on resume only
    its result is checked (a trip the second time left the member's run never resumed)."""
    from toolcycle import Limits, RunContext, ToolCall, tool_guardrail

    checked: list[str] = []

    @tool_guardrail(on="arguments")
    def watch(ctx: RunContext[Any], call: ToolCall) -> str | None:
        checked.append(call.name)
        return "no second look" if checked.count(call.name) > 1 else None

    desk = Desk([call("delete", {"path": "/tmp/g"}), "gone"], [])
    boss = Agent(ScriptedModel([call("janitor", {"input": "clean"}), "ok"]),
                 tools=[desk.janitor.as_tool()], name="boss", guardrails=[watch],
                 limits=Limits(max_repeats=1))
    paused = await boss.run("go")
    final = await boss.resume(paused.snapshot, [paused.pending_approvals[0].approve()])
    assert checked == ["janitor"] and desk.deleted == ["/tmp/g"]
    assert final.tool_calls[0].result == "gone" and final.runs[0].status == "success"

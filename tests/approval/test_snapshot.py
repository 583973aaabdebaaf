"""Snapshots of paused runs: resumed in another interpreter, refused when changed or foreign."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Conversation, ConversationConflict, RunContext, SnapshotError, tool
from toolcycle.run.snapshot import FORMAT, VERSION
from toolcycle.testing import ScriptedModel, call

#: An agent defined identically in this process and in the child interpreter. Its tool
#: appends a line to a counter file, so "ran exactly once overall" is checked across both.
AGENT_SOURCE = textwrap.dedent('''
    from pathlib import Path
    from toolcycle import Agent, tool
    from toolcycle.testing import ScriptedModel, call

    def make_agent(counter: Path, script: list) -> Agent:
        @tool
        def ls(path: str) -> str:
            """List a directory.

            Args:
                path: The directory.
            """
            with counter.open("a") as f:
                f.write(f"ls {path}\\n")
            return "a b"

        @tool(requires_approval=True)
        def delete(path: str) -> str:
            """Delete a file.

            Args:
                path: The file.
            """
            with counter.open("a") as f:
                f.write(f"delete {path}\\n")
            return f"deleted {path}"

        return Agent(ScriptedModel(script, wire="both"), tools=[ls, delete], name="janitor")
''')


def _agent_module(tmp_path: Path) -> Any:
    source = tmp_path / "janitor_agent.py"
    source.write_text(AGENT_SOURCE)
    namespace: dict[str, Any] = {}
    exec(compile(AGENT_SOURCE, str(source), "exec"), namespace)
    return namespace


def test_resume_in_a_separate_interpreter(tmp_path: Path) -> None:
    counter = tmp_path / "calls.txt"
    make_agent = _agent_module(tmp_path)["make_agent"]
    agent = make_agent(counter, [[call("ls", {"path": "/"}), call("delete", {"path": "/a"})],
                                 "all done"])
    paused = agent.run_sync("tidy up")
    assert paused.status == "paused"
    snapshot_file = tmp_path / "snapshot.json"
    snapshot_file.write_text(json.dumps(paused.snapshot))
    call_id = paused.pending_approvals[0].call_id

    child = textwrap.dedent(f'''
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(tmp_path)!r})
        from janitor_agent import make_agent
        agent = make_agent(Path({str(counter)!r}), ["all done"])
        snapshot = Path({str(snapshot_file)!r}).read_text()
        result = agent.resume_sync(snapshot, {{{call_id!r}: True}})
        print(json.dumps({{"status": result.status, "output": result.output,
                          "run_id": result.run_id, "requests": result.usage.requests,
                          "tools": [r.name for r in result.tool_calls],
                          "pauses": len(result.trace.pauses)}}))
    ''')
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"status": "success", "output": "all done", "run_id": paused.run_id,
                      "requests": 2, "tools": ["ls", "delete"], "pauses": 1}
    assert counter.read_text().splitlines() == ["ls /", "delete /a"]  # each ran exactly once


@pytest.fixture
def paused_run(tmp_path: Path) -> tuple[Any, dict[str, Any], str]:
    make_agent = _agent_module(tmp_path)["make_agent"]
    agent = make_agent(tmp_path / "calls.txt", [call("delete", {"path": "/a"}), "ok"])
    paused = agent.run_sync("go")
    return make_agent, paused.snapshot, paused.pending_approvals[0].call_id


def test_a_changed_snapshot_is_refused(paused_run: tuple[Any, dict[str, Any], str],
                                       tmp_path: Path) -> None:
    make_agent, snapshot, call_id = paused_run
    agent = make_agent(tmp_path / "calls.txt", ["ok"])
    tampered = json.loads(json.dumps(snapshot))
    tampered["pending"][0]["arguments"]["path"] = "/etc/passwd"
    with pytest.raises(SnapshotError, match="digest does not match"):
        agent.resume_sync(tampered, {call_id: True})
    tampered = json.loads(json.dumps(snapshot))
    tampered["messages"][-1]["parts"][0]["arguments"]["path"] = "/"
    with pytest.raises(SnapshotError, match="changed after it was made"):
        agent.resume_sync(tampered, {call_id: True})
    newer = dict(snapshot, version=VERSION + 1)
    with pytest.raises(SnapshotError, match=f"version {VERSION + 1}"):
        agent.resume_sync(newer, {call_id: True})
    for junk in ("{not json", json.dumps({"format": "other"}), "[]"):
        with pytest.raises(SnapshotError):
            agent.resume_sync(junk, {call_id: True})
    assert not (tmp_path / "calls.txt").exists()  # nothing ran


def test_another_agent_is_refused_with_every_mismatch(
        paused_run: tuple[Any, dict[str, Any], str]) -> None:
    _, snapshot, call_id = paused_run

    @tool
    def ls(path: str, hidden: bool = False) -> str:  # another signature
        """List a directory.

        Args:
            path: The directory.
            hidden: Show hidden files.
        """
        return ""

    @tool
    def rm(path: str) -> str:
        """Remove.

        Args:
            path: The file.
        """
        return ""

    other = Agent(ScriptedModel(["x"], name="other-model"), tools=[ls, rm], name="intruder",
                  output=int)
    with pytest.raises(SnapshotError) as info:
        other.resume_sync(snapshot, {call_id: True})
    problems = info.value.problems
    assert any("agent name" in p and "'janitor'" in p and "'intruder'" in p for p in problems)
    assert any("agent model" in p and "'other-model'" in p for p in problems)
    assert "tools: this agent lacks delete" in problems
    assert "tools: this agent has rm, the snapshot's did not" in problems
    assert any(p.startswith("tools: the definition") and "ls" in p for p in problems)
    assert "output: the output type (or its schema) differs" in problems


def test_signed_snapshots(tmp_path: Path) -> None:
    @tool(requires_approval=True)
    def deploy(env: str) -> str:
        """Deploy.

        Args:
            env: Where.
        """
        return f"deployed {env}"

    key = b"0123456789abcdef-secret"
    signer = Agent(ScriptedModel([call("deploy", {"env": "prod"}), "shipped"]), tools=[deploy],
                   snapshot_key=key)
    paused = signer.run_sync("ship it")
    snapshot = paused.snapshot
    assert snapshot is not None and snapshot["integrity"]["algorithm"] == "hmac-sha256"
    assert snapshot["format"] == FORMAT
    call_id = paused.pending_approvals[0].call_id

    unkeyed = Agent(ScriptedModel(["shipped"]), tools=[deploy])
    with pytest.raises(SnapshotError, match="same snapshot_key"):
        unkeyed.resume_sync(snapshot, {call_id: True})
    wrong = Agent(ScriptedModel(["shipped"]), tools=[deploy], snapshot_key=b"x" * 16)
    with pytest.raises(SnapshotError, match="another key"):
        wrong.resume_sync(snapshot, {call_id: True})
    # a forger who rewrites the content and recomputes a plain digest is refused too
    forged = json.loads(json.dumps(snapshot))
    forged["pending"][0]["arguments"]["env"] = "everywhere"
    del forged["integrity"]
    import hashlib

    from toolcycle.run.snapshot import canonical
    forged["integrity"] = {"algorithm": "sha256",
                           "digest": hashlib.sha256(canonical(forged)).hexdigest()}
    keyed = Agent(ScriptedModel(["shipped"]), tools=[deploy], snapshot_key=key)
    with pytest.raises(SnapshotError, match="not signed"):
        keyed.resume_sync(forged, {call_id: True})
    assert keyed.resume_sync(snapshot, {call_id: True}).output == "shipped"


class Ticket(BaseModel):
    customer: str
    priority: int


def test_a_typed_task_input_survives_the_pause() -> None:
    """``ctx.input`` of a resumed run is the run's input, validated again from the snapshot
    (an agent built afresh, as in another process, reads it too)."""
    seen: list[object] = []

    def make_agent(script: list[Any]) -> Agent[Any, Any, Ticket]:
        @tool(requires_approval=True)
        def refund(ctx: RunContext[Any], amount: int) -> str:
            """Refund the customer.

            Args:
                amount: The amount.
            """
            seen.append(ctx.input)
            return f"refunded {amount}"

        return Agent(ScriptedModel(script), "Help {customer}.", tools=[refund],
                     input_type=Ticket, name="support")

    paused = make_agent([call("refund", {"amount": 5}), "ok"]).run_sync(
        input=Ticket(customer="Ada", priority=2))
    snapshot = json.loads(json.dumps(paused.snapshot))
    assert snapshot["input"] == {"customer": "Ada", "priority": 2}
    final = make_agent(["ok"]).resume_sync(snapshot, {paused.pending_approvals[0].call_id: True})
    assert final.output == "ok" and seen == [Ticket(customer="Ada", priority=2)]


def test_a_paused_run_leaves_its_conversation_untouched(tmp_path: Path) -> None:
    """A paused run's calls are unanswered: the conversation keeps none of its messages (the
    next run's history stays one a real API accepts) and is free for the next run."""
    chat = Conversation(tmp_path / "chat.db", "c1")
    make_agent = _agent_module(tmp_path)["make_agent"]
    paused = make_agent(tmp_path / "calls.txt", [call("delete", {"path": "/a"})]).run_sync(
        "go", conversation=chat)
    assert paused.status == "paused"
    assert chat.store.load("c1")[0] == []
    later = make_agent(tmp_path / "calls.txt", ["hello"]).run_sync("hi", conversation=chat)
    assert later.output == "hello" and len(chat.store.load("c1")[0]) == 2


def test_a_resumed_run_joins_its_conversation(tmp_path: Path) -> None:
    """Resumed with the conversation it started on, the run's messages join it when it ends,
    as if it had never paused, and the next run continues from the whole exchange."""
    chat = Conversation(tmp_path / "chat.db", "c1")
    make_agent = _agent_module(tmp_path)["make_agent"]
    counter = tmp_path / "calls.txt"
    make_agent(counter, ["hello"]).run_sync("hi", conversation=chat)
    paused = make_agent(counter, [call("delete", {"path": "/a"})]).run_sync(
        "go", conversation=chat)
    snapshot = json.loads(json.dumps(paused.snapshot))
    final = make_agent(counter, ["deleted /a"]).resume_sync(
        snapshot, {paused.pending_approvals[0].call_id: True}, conversation=chat)
    assert final.output == "deleted /a"
    stored = chat.store.load("c1")[0]
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant", "tool",
                                        "assistant"]
    later = make_agent(counter, ["bye"]).run_sync("thanks", conversation=chat)
    assert later.output == "bye" and len(chat.store.load("c1")[0]) == 8


def test_a_resume_is_refused_once_the_conversation_moved_on(tmp_path: Path) -> None:
    """Another run added to the conversation during the pause: resuming would interleave two
    runs' turns, so it is refused before anything runs, and the conversation stays free."""
    chat = Conversation(tmp_path / "chat.db", "c1")
    make_agent = _agent_module(tmp_path)["make_agent"]
    counter = tmp_path / "calls.txt"
    paused = make_agent(counter, [call("delete", {"path": "/a"})]).run_sync(
        "go", conversation=chat)
    make_agent(counter, ["hello"]).run_sync("hi", conversation=chat)
    with pytest.raises(ConversationConflict, match="changed while run"):
        make_agent(counter, ["deleted /a"]).resume_sync(
            paused.snapshot, {paused.pending_approvals[0].call_id: True}, conversation=chat)
    assert not counter.exists() or "delete" not in counter.read_text()
    assert len(chat.store.load("c1")[0]) == 2
    assert make_agent(counter, ["free"]).run_sync("again", conversation=chat).output == "free"

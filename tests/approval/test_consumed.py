"""A snapshot is resumed at most once (r2-05): sequentially, concurrently, in another process,
with a SQLite or a PostgreSQL ledger. The second resume raises ``SnapshotConsumed`` and runs
nothing; a resume refused for another reason consumes nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, ConfigurationError, SnapshotConsumed, SnapshotError, tool
from toolcycle.stores import SnapshotLedger, shared_ledger
from toolcycle.testing import ScriptedModel, call

AGENT = textwrap.dedent('''
    import asyncio
    from pathlib import Path
    from toolcycle import Agent, tool
    from toolcycle.testing import ScriptedModel, call

    def billing(ledger: Path, paid: Path, script: list) -> Agent:
        @tool(requires_approval=True)
        async def pay(amount: int) -> str:
            """Pay an invoice."""
            await asyncio.sleep(0)
            with paid.open("a") as f:
                f.write(f"{amount}\\n")
            return f"paid {amount}"

        return Agent(ScriptedModel(script), tools=[pay], name="billing",
                     snapshot_key="k" * 32, snapshot_ledger=str(ledger))
''')


def _billing(tmp_path: Path, script: list[Any], ledger: object = None) -> Agent:
    namespace: dict[str, Any] = {}
    exec(AGENT, namespace)
    agent: Agent = namespace["billing"](tmp_path / "ledger.db", tmp_path / "paid.txt", script)
    if ledger is not None:
        return Agent(agent.model, tools=list(agent._core.tools.values()), name="billing",
                     snapshot_key="k" * 32, snapshot_ledger=ledger)  # type: ignore[arg-type]
    return agent


def _payments(tmp_path: Path) -> list[str]:
    paid = tmp_path / "paid.txt"
    return paid.read_text().split() if paid.exists() else []


def _pause(tmp_path: Path, ledger: object = None) -> tuple[dict[str, Any], dict[str, Any]]:
    paused = _billing(tmp_path, [call("pay", {"amount": 100})], ledger).run_sync("pay")
    assert paused.status == "paused" and paused.snapshot is not None
    (tmp_path / "approvals.json").write_text(json.dumps(
        [request.approve().to_dict() for request in paused.pending_approvals]))
    return json.loads(json.dumps(paused.snapshot)), {paused.pending_approvals[0].call_id: True}


def test_a_replayed_resume_raises_snapshot_consumed_and_runs_nothing(tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path)
    first = _billing(tmp_path, ["Paid."]).resume_sync(snapshot, answers)
    assert first.status == "success" and _payments(tmp_path) == ["100"]
    with pytest.raises(SnapshotConsumed) as info:
        _billing(tmp_path, ["Paid."]).resume_sync(snapshot, answers)
    assert info.value.run_id == first.run_id and info.value.pause == 1
    assert info.value.code == "SNAPSHOT_CONSUMED"
    assert _payments(tmp_path) == ["100"]


def test_concurrent_resumes_run_the_approved_call_once(tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path)

    async def both() -> list[Any]:
        return await asyncio.gather(
            *(_billing(tmp_path, ["Paid."]).resume(snapshot, answers) for _ in range(4)),
            return_exceptions=True)

    outcomes = asyncio.run(both())
    assert sorted(type(o).__name__ for o in outcomes) == [
        "RunResult", "SnapshotConsumed", "SnapshotConsumed", "SnapshotConsumed"]
    assert _payments(tmp_path) == ["100"]


def test_a_resume_in_another_process_is_refused_after_this_one(tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path)
    _billing(tmp_path, ["Paid."]).resume_sync(snapshot, answers)
    (tmp_path / "snapshot.json").write_text(json.dumps(snapshot))
    program = AGENT + textwrap.dedent(f'''
        import json
        from toolcycle import Approval, SnapshotConsumed
        tmp = Path({str(tmp_path)!r})
        snapshot = json.loads((tmp / "snapshot.json").read_text())
        sent = json.loads((tmp / "approvals.json").read_text())
        agent = billing(tmp / "ledger.db", tmp / "paid.txt", ["Paid."])
        try:
            agent.resume_sync(snapshot, [Approval.from_dict(a) for a in sent])
        except SnapshotConsumed as exc:
            print("refused", exc.code)
    ''')
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "refused SNAPSHOT_CONSUMED", done.stderr
    assert _payments(tmp_path) == ["100"]


def test_a_refused_resume_consumes_nothing(tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path)
    with pytest.raises(ConfigurationError):
        _billing(tmp_path, ["Paid."]).resume_sync(snapshot, {})
    damaged = json.loads(json.dumps(snapshot))
    damaged["counters"]["attempt"] = "one"
    with pytest.raises(SnapshotError):
        _billing(tmp_path, ["Paid."]).resume_sync(damaged, answers)
    final = _billing(tmp_path, ["Paid."]).resume_sync(snapshot, answers)
    assert final.status == "success" and _payments(tmp_path) == ["100"]


def test_a_run_paused_again_is_resumed_from_its_new_snapshot(tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path)
    again = _billing(tmp_path, [call("pay", {"amount": 5})]).resume_sync(snapshot, answers)
    assert again.status == "paused" and again.snapshot is not None
    final = _billing(tmp_path, ["Paid."]).resume_sync(
        again.snapshot, [again.pending_approvals[0].approve()])
    assert final.status == "success" and _payments(tmp_path) == ["100", "5"]
    with pytest.raises(SnapshotConsumed):
        _billing(tmp_path, ["Paid."]).resume_sync(snapshot, answers)


def test_a_postgres_ledger_lets_one_of_many_threads_claim_a_pause(postgres_url: str,
                                                                  tmp_path: Path) -> None:
    ledgers = [SnapshotLedger(postgres_url) for _ in range(6)]
    barrier = threading.Barrier(len(ledgers))
    outcomes: list[str] = []

    def claim(ledger: SnapshotLedger) -> None:
        barrier.wait()
        try:
            ledger.claim("run-1", 1)
            outcomes.append("claimed")
        except SnapshotConsumed:
            outcomes.append("consumed")

    threads = [threading.Thread(target=claim, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["claimed"] + ["consumed"] * 5
    consumed = ledgers[0].consumed("run-1", 1)
    assert consumed is not None and consumed.consumer.endswith(f":{os.getpid()}")
    for ledger in ledgers:
        ledger.close()


def test_an_agent_resumes_through_a_postgres_ledger(postgres_url: str, tmp_path: Path) -> None:
    snapshot, answers = _pause(tmp_path, postgres_url)
    _billing(tmp_path, ["Paid."], postgres_url).resume_sync(snapshot, answers)
    with pytest.raises(SnapshotConsumed):
        _billing(tmp_path, ["Paid."], postgres_url).resume_sync(snapshot, answers)
    assert _payments(tmp_path) == ["100"]
    shared_ledger(postgres_url).close()  # the process's connection to it, not kept past the test


@pytest.mark.parametrize("location", ["mysql://host/db", "sqlite://relative.db", "", 5])
def test_a_ledger_location_nobody_can_open_is_refused_at_construction(location: object) -> None:
    @tool
    def noop() -> str:
        """Nothing."""
        return ""

    with pytest.raises(ConfigurationError, match="snapshot_ledger"):
        Agent(ScriptedModel(["x"]), tools=[noop], snapshot_ledger=location)  # type: ignore[arg-type]

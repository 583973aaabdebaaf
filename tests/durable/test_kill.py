"""A durable run killed (SIGKILL) inside a tool call resumes in a new process.

tests/durable/worker.py runs the run in a child process on a real PostgreSQL system database
(the session's throwaway cluster). The first child is killed by PID while the run's second
turn is inside two concurrent tool calls, a non-idempotent ``charge`` and an idempotent
``lookup``, after a third, ``probe``, was cut off by its timeout; a second child recovers the
workflow. Marker files count every model request and
tool execution in both processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

WORKER = Path(__file__).with_name("worker.py")


def _worker(url: str, markers: Path, mode: str, block: bool) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "DURABLE_BLOCK"}
    if block:
        env["DURABLE_BLOCK"] = "1"
    return subprocess.Popen([sys.executable, str(WORKER), url, "run-1", str(markers), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _count(markers: Path, kind: str) -> int:
    return len(list(markers.glob(f"{kind}.*")))


def _cut(url: str) -> bool:
    """Whether the timed-out ``probe`` call's *cut* step is recorded yet."""
    with psycopg.connect(url) as connection:
        try:
            row = connection.execute("SELECT count(*) FROM dbos.operation_outputs"
                                     " WHERE function_name = 'toolcycle.tool_cut'").fetchone()
        except psycopg.errors.UndefinedTable:  # DBOS has not made its tables yet
            return False
    return row is not None and row[0] == 1


def test_killed_run_resumes_without_repeating_finished_steps(postgres_url: str,
                                                               tmp_path: Path) -> None:
    first = _worker(postgres_url, tmp_path, "start", block=True)
    try:
        deadline = time.monotonic() + 60  # a safety net for a broken run, not a measurement
        while _count(tmp_path, "charge") + _count(tmp_path, "lookup") < 2 or not _cut(
                postgres_url):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the tool calls never started"
            time.sleep(0.05)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
    assert first.returncode == -signal.SIGKILL
    assert (_count(tmp_path, "model"), _count(tmp_path, "note")) == (2, 1)

    second = _worker(postgres_url, tmp_path, "recover", block=False)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    result = json.loads(out)

    # Nothing finished ran again: two of the three model requests and the note were replayed;
    # the idempotent lookup ran again, the non-idempotent charge did not.
    assert _count(tmp_path, "model") == 3
    assert _count(tmp_path, "note") == 1
    assert _count(tmp_path, "charge") == 1
    assert _count(tmp_path, "lookup") == 2
    assert _count(tmp_path, "probe") == 1  # idempotent, but it had timed out: not run again

    assert result["output"] == "done"
    assert result["run_id"] == "run-1"
    results = {p["call_id"]: p for m in result["messages"] if m["role"] == "tool"
               for p in m["parts"]}
    assert results["c1"]["content"] == "noted start"
    assert results["c2"]["is_error"]
    assert "interrupted" in results["c2"]["content"]
    assert "may or may not have taken effect" in results["c2"]["content"]
    assert json.loads(results["c3"]["content"]) == {"key": "k", "value": "K"}
    assert results["c4"]["is_error"]
    assert results["c4"]["content"] == "Tool `probe` timed out after 0.2 s."

    # The trace and usage cover the whole run, both processes' parts of it.
    trace = result["trace"]
    assert trace["status"] == "success"
    assert len(trace["steps"]) == 3
    usage = result["usage"]
    assert usage["requests"] == 3 and usage["tool_calls"] == 4
    assert usage["input_tokens"] == sum(s["usage"]["input_tokens"] for s in trace["steps"])
    calls = [c for s in trace["steps"] for c in s["tool_calls"]]
    assert [c["name"] for c in calls] == ["note", "charge", "lookup", "probe"]

"""A paused team on the command line: ``toolcycle run --approve`` asks for a member's call
(naming the member), and ``toolcycle resume FILE --approve CALL_ID`` resumes a team paused
by ``toolcycle run --json`` in another process, once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = "tests.teams.cli_team"
MODEL = "python:tests.teams.cli_team:boss_model"
SPEC = {"name": "boss", "instructions": "Ask the janitor.", "tools": [{
    "name": "janitor", "description": "Cleans up", "parameters": {
        "type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}}]}


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))
    monkeypatch.setenv("TOOLCYCLE_SNAPSHOT_LEDGER", str(tmp_path / "ledger.db"))
    path = tmp_path / "boss.json"
    path.write_text(json.dumps(SPEC))
    return str(path)


def toolcycle(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolcycle", *args], input=stdin, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_run_approve_asks_for_a_members_call_naming_the_member(spec: str) -> None:
    done = toolcycle("run", spec, "--tools", TOOLS, "--model", MODEL, "--approve",
                     "--no-trace", "tidy", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "janitor says: deleted /tmp/a\n"
    assert 'approve janitor: delete({"path": "/tmp/a"}) [call_1]?' in done.stderr


def test_a_team_paused_by_run_resumes_from_its_file_once(spec: str, tmp_path: Path) -> None:
    paused = toolcycle("run", spec, "--tools", TOOLS, "--model", MODEL, "--json", "--no-trace",
                       "tidy")
    assert paused.returncode == 3, paused.stderr
    (tmp_path / "paused.json").write_text(paused.stdout)
    snapshot = json.loads(paused.stdout)["snapshot"]
    assert snapshot["pending"] == []  # the boss waits on its member's call, not one of its own
    [request] = snapshot["members"]["call_1"]["pending"]
    assert (request["tool_name"], request["arguments"]) == ("delete", {"path": "/tmp/a"})
    done = toolcycle("resume", str(tmp_path / "paused.json"), "--approve", "call_1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "janitor says: deleted /tmp/a\n"
    again = toolcycle("resume", str(tmp_path / "paused.json"), "--approve", "call_1")
    assert again.returncode == 2 and "already resumed" in again.stderr

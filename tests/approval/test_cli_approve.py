"""``toolcycle run --approve``: driven through a real interpreter with answers on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = "examples/hello_world.gram"
TOOLS = "tests.approval.cli_fixtures"
MODEL = "python:tests.approval.cli_fixtures:two_greetings"


@pytest.fixture(autouse=True)
def trace_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`toolcycle run` records its trace by default: into this test's folder, not ~/.toolcycle."""
    path = tmp_path / "traces.db"
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(path))
    return path


def toolcycle(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolcycle", *args], input=stdin, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_approve_asks_for_each_call_and_resumes() -> None:
    done = toolcycle("run", SPEC, "--tools", TOOLS, "--model", MODEL, "--approve", "hi",
                     stdin="y\nnot Bo, please\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ada! Nice to meet you. | not Bo, please\n"
    assert 'approve sayHello({"personName": "Ada"}) [call_1]? [y/n/reason]' in done.stderr
    # the model's text is escaped at the prompt, never sent to the terminal raw
    assert 'approve sayHello({"personName": "Bo\\u001b[2J"}) [call_2]?' in done.stderr
    assert "\x1b" not in done.stderr
    assert "approval: approved by person" in done.stderr
    assert "approval: denied by person: not Bo, please" in done.stderr
    assert "trace recorded: toolcycle trace show" in done.stderr


def test_without_approve_the_run_pauses_with_status_3() -> None:
    done = toolcycle("run", SPEC, "--tools", TOOLS, "--model", MODEL, "--json", "hi")
    assert done.returncode == 3
    data = json.loads(done.stdout)
    assert data["termination"]["reason"] == "paused" and data["output"] is None
    assert [p["tool_name"] for p in data["snapshot"]["pending"]] == ["sayHello", "sayHello"]
    plain = toolcycle("run", SPEC, "--tools", TOOLS, "--model", MODEL, "--no-trace", "hi")
    assert plain.returncode == 3 and plain.stdout == ""
    assert "waiting for approval: sayHello" in plain.stderr and "--approve" in plain.stderr


def test_approve_all_asks_for_tools_that_need_no_approval_and_eof_denies() -> None:
    done = toolcycle("run", SPEC, "--tools", "examples.hello_tools", "--model",
                     "python:tests.spec.cli_models:hello_model", "--approve-all", "hi",
                     stdin="")
    # the scripted model answers with the denial it was given: printed, but no success
    # (a tool's error observation passed through, docs/status.md), so exit status 4
    assert done.returncode == 4, done.stderr
    assert done.stdout == "denied: no answer (stdin closed)\n"
    assert "status tool_error" in done.stderr
    assert "approve sayHello" in done.stderr

"""``toolcycle resume``: a paused run continued from its file with answers given as options,
once; the second resume of the same file is refused (exit 2) and runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_approve import MODEL, SPEC, TOOLS, toolcycle

ANSWERED = "python:tests.approval.cli_fixtures:greetings_answered"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))
    monkeypatch.setenv("TOOLCYCLE_SNAPSHOT_LEDGER", str(tmp_path / "ledger.db"))


def _paused(tmp_path: Path) -> Path:
    done = toolcycle("run", SPEC, "--tools", TOOLS, "--model", MODEL, "--json", "hi")
    assert done.returncode == 3, done.stderr
    path = tmp_path / "paused.json"
    path.write_text(done.stdout)
    return path


def test_resume_answers_each_call_once_and_refuses_a_second_resume(tmp_path: Path) -> None:
    paused = _paused(tmp_path)
    done = toolcycle("resume", str(paused), "--approve", "call_1", "--deny", "call_2:not Bo",
                     "--model", ANSWERED, "--no-trace")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ada! Nice to meet you. | not Bo\n"
    again = toolcycle("resume", str(paused), "--approve", "call_1", "--deny", "call_2:no",
                      "--model", ANSWERED, "--no-trace")
    assert again.returncode == 2 and again.stdout == ""
    errors = again.stderr.strip().splitlines()
    assert len(errors) == 1 and "already resumed" in errors[0], again.stderr


def test_resume_takes_the_spec_and_tools_as_options_and_a_bare_snapshot(tmp_path: Path) -> None:
    paused = _paused(tmp_path)
    bare = tmp_path / "snapshot.json"
    bare.write_text(json.dumps(json.loads(paused.read_text())["snapshot"]))
    done = toolcycle("resume", str(bare), "--spec", SPEC, "--tools", TOOLS, "--model", ANSWERED,
                     "--approve", "call_1", "--approve", "call_2", "--json", "--no-trace")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["termination"]["reason"] != "paused"


@pytest.mark.parametrize(("answers", "said"), [
    (["--approve", "call_1"], "no answer for call_2"),
    (["--approve", "call_1", "--approve", "call_2", "--approve", "call_9"],
     "'call_9' is not a pending call"),
    (["--deny", "call_1"], "CALL_ID:REASON"),
    ([], "--approve CALL_ID"),
])
def test_answers_that_do_not_fit_are_refused_and_consume_nothing(
        tmp_path: Path, answers: list[str], said: str) -> None:
    paused = _paused(tmp_path)
    refused = toolcycle("resume", str(paused), "--model", ANSWERED, "--no-trace", *answers)
    assert refused.returncode == 2 and said in refused.stderr, refused.stderr
    done = toolcycle("resume", str(paused), "--model", ANSWERED, "--no-trace",
                     "--approve", "call_1", "--approve", "call_2")
    assert done.returncode == 0, done.stderr


def test_an_unreadable_snapshot_file_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    done = toolcycle("resume", str(tmp_path / "bad.json"), "--approve", "call_1")
    assert done.returncode == 2 and done.stderr.startswith("error: cannot read the snapshot")

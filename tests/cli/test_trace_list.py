"""``toolcycle trace list`` shows what tells runs apart, each run's prompt and answer (one
clipped line each, escaped for the terminal, redacted as stored), and an empty or missing store
is not an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle.cli import main
from toolcycle.tracing.store import HEADLINE_CHARS, TraceStore
from toolcycle.tracing.trace import Trace


def _trace(run_id: str, prompt: str, output: object, started: float) -> Trace:
    return Trace(run_id, "agent", "scripted", user_prompt=prompt, status="success",
                 output=output, started_at=started, ended_at=started + 1)


@pytest.fixture
def db(tmp_path: Path) -> str:
    with TraceStore(tmp_path / "t.db") as store:
        store.save(_trace("run-1", "What is the weather\nin Paris?", "Sunny, 21 C.", 1.0e9))
        store.save(_trace("run-2", "x" * 500, {"total": 3}, 1.0e9 + 10))
        store.save(_trace("run-3", "evil \x1b]52;c;aGk=\x07 prompt",
                          "my key is sk-ant-abcdefghijklmnop0123456789", 1.0e9 + 20))
    return str(tmp_path / "t.db")


def test_the_table_shows_prompt_and_answer(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "list", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "What is the weather in Paris?" in out  # one line: the newline folded
    assert "Sunny, 21 C." in out and '{"total": 3}' in out
    assert "\x1b" not in out and "\x07" not in out  # escaped for the terminal
    assert "sk-ant-abcdefghijklmnop" not in out  # redacted when stored


def test_json_lines_carry_them_clipped(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "list", "--db", db, "--json"]) == 0
    rows = {row["run_id"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["run-1"]["prompt"] == "What is the weather in Paris?"
    assert rows["run-1"]["answer"] == "Sunny, 21 C."
    assert len(rows["run-2"]["prompt"]) == HEADLINE_CHARS and rows["run-2"]["prompt"][-1] == "…"
    assert rows["run-2"]["answer"] == '{"total": 3}'


def test_an_empty_store_is_not_an_error(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    TraceStore(tmp_path / "empty.db").close()
    assert main(["trace", "list", "--db", str(tmp_path / "empty.db")]) == 0
    assert capsys.readouterr().out.strip() == "no runs recorded yet"
    assert main(["trace", "list", "--db", str(tmp_path / "empty.db"), "--agent", "x"]) == 0
    assert capsys.readouterr().out.strip() == "no runs match"
    assert main(["trace", "list", "--db", str(tmp_path / "empty.db"), "--json"]) == 0
    captured = capsys.readouterr()  # JSON lines: none, and the line on stderr
    assert captured.out == "" and "no runs recorded yet" in captured.err


def test_a_missing_store_is_not_an_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "list", "--db", str(tmp_path / "none.db")]) == 0
    assert "no runs recorded yet" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_a_damaged_header_lists_without_a_headline(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    with TraceStore(tmp_path / "t.db") as store:
        store.save(_trace("run-1", "hi", "there", 1.0e9))
    with sqlite3.connect(tmp_path / "t.db") as conn:
        conn.execute("UPDATE runs SET header = '[not json'")
    assert main(["trace", "list", "--db", str(tmp_path / "t.db"), "--json"]) == 0
    [row] = map(json.loads, capsys.readouterr().out.splitlines())
    assert row["prompt"] == "" and row["answer"] == ""

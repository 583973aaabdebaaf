"""``toolcycle eval``: exit statuses, every bad dataset row on stderr, checks by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle.cli import main
from toolcycle.errors import ConfigurationError
from toolcycle.evals import Contains, LLMJudge, Numeric, ToolTrajectory
from toolcycle.evals.named import named_evaluators

from .eval_tools import SPEC

MODEL = "python:tests.evals.eval_tools:model"


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "agent.json").write_text(json.dumps(SPEC), encoding="utf-8")
    rows = [{"name": f"c{i}", "inputs": f"do {item}", "expected_output": f"done:{item}",
             "metadata": {"kind": "k"}} for i, item in enumerate(["a", "b", "wrong"])]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _eval(files: Path, *extra: str) -> int:
    return main(["eval", str(files / "cases.jsonl"), "--agent", str(files / "agent.json"),
                 "--tools", "tests.evals.eval_tools", "--model", MODEL, "--no-trace", *extra])


def test_runs_and_writes_reports(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", str(files / "cases.jsonl"), "--agent", str(files / "agent.json"),
                 "--tools", "tests.evals.eval_tools", "--no-trace",
                 "--model", "python:tests.evals.eval_tools:unpriced_model",  # --price prices it
                 "--repeats", "2", "--json", str(files / "r.json"), "--price", "1,2",
                 "--check", "contains", "--check", "regex:done:\\w+"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("cases: 6 runs, pass 0.667")
    data = json.loads((files / "r.json").read_text())
    assert data["evaluators"] == ["contains", "regex"] and data["k"] == 2
    record = data["records"][0]
    assert record["cost_usd"] == pytest.approx(
        (record["input_tokens"] * 1 + record["output_tokens"] * 2) / 1e6)


def test_min_pass_rate_fails_the_command(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(files, "--min-pass-rate", "0.9") == 1
    assert "below --min-pass-rate 0.9" in capsys.readouterr().err
    assert _eval(files, "--min-pass-rate", "0.6") == 0


def test_a_bad_dataset_lists_every_bad_row_and_exits_2(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (files / "cases.jsonl").write_text('{"name": "a", "inputs": "x"}\n{oops\n'
                                       '{"name": "a", "inputs": "y"}\n{"inputs": 3}\n')
    assert _eval(files) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    for expected in ("line 2: not JSON", "line 3: case name 'a' is already used by line 1",
                     "line 4: 'name' must be", "line 4: 'inputs' must be"):
        assert expected in err


def test_bad_checks_are_listed_at_once(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(files, "--check", "fuzzy", "--check", "regex:(", "--check",
                 "judge:openai:gpt-4o-mini", "--check", "trajectory:sideways") == 2
    err = capsys.readouterr().err
    for expected in ("'fuzzy'", "'regex:('", "needs --rubric", "trajectory mode"):
        assert expected in err


def test_a_log_of_another_agent_is_refused(files: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    log = str(files / "log.jsonl")
    assert _eval(files, "--log", log) == 0
    assert _eval(files, "--log", log, "--max-iterations", "3") == 0  # same spec, tools, model
    spec = {**SPEC, "instructions": "Changed."}
    (files / "agent.json").write_text(json.dumps(spec))
    assert _eval(files, "--log", log) == 2
    assert "written by another agent" in capsys.readouterr().err


def test_named_evaluators() -> None:
    from toolcycle.cli._loading import resolve_model_argument

    found = named_evaluators(["contains", "numeric:0.5", "trajectory:any_order:names",
                              "judge:python:tests.evals.eval_tools:model"], rubric="r",
                             resolve_model=resolve_model_argument)
    assert [type(e) for e in found] == [Contains, Numeric, ToolTrajectory, LLMJudge]
    trajectory = found[2]
    assert isinstance(trajectory, ToolTrajectory)
    assert (trajectory.mode, trajectory.args) == ("any_order", False)
    with pytest.raises(ConfigurationError):
        named_evaluators(["schema:/no/such/file.json"])


def test_playbook_ab_writes_json_and_a_page_per_arm(files: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval(files, "--playbook-ab", str(files / "pb.db"), "--train", "0.5",
                 "--json", str(files / "ab.json"), "--html", str(files / "ab.html"),
                 "--log", str(files / "ab-logs")) == 0
    out = capsys.readouterr().out
    assert out.startswith("learned on ") and "kind k:" in out
    data = json.loads((files / "ab.json").read_text())
    assert set(data) >= {"comparison", "by_kind", "baseline", "with_playbook"}
    for arm in ("baseline", "playbook"):
        assert (files / f"ab.{arm}.html").read_text().startswith("<!DOCTYPE html>")
        assert (files / "ab-logs" / f"{arm}.jsonl").exists()

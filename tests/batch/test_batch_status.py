"""Batch records carry the run's status (docs/status.md), and the summary counts them: a
record whose output is a tool's error text passed through is ``tool_error``, one a limit forced
is ``forced``. Before, both were ``success``, and the summary counted only errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle.batch import BatchRecipe, run_batch
from toolcycle.cli import main

from .batch_tools import SPEC

MODEL = "python:tests.batch.batch_tools:model"
TOOLS = ["tests.batch.batch_tools"]


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    spec, inputs = tmp_path / "echo.json", tmp_path / "in.jsonl"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    inputs.write_text('"a"\n"boom"\n"cc"\n', encoding="utf-8")
    return spec, inputs


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_records_and_summary_say_each_status(files: tuple[Path, Path], tmp_path: Path) -> None:
    spec, inputs = files
    report = run_batch(BatchRecipe.from_files(str(spec), TOOLS, model=MODEL), inputs,
                       tmp_path / "out.jsonl")
    records = _records(tmp_path / "out.jsonl")
    # "boom": the tool raised, and the scripted model answers with what the tool said
    assert records[1]["output"] == "answer Tool `lookup` failed: RuntimeError: the lookup exploded"
    assert [r["status"] for r in records] == ["success", "tool_error", "success"]
    assert report.statuses == {"success": 2, "tool_error": 1} and report.succeeded == 2

    forced = run_batch(BatchRecipe.from_files(str(spec), TOOLS, model=MODEL, max_iterations=1),
                       inputs, tmp_path / "forced.jsonl")
    records = _records(tmp_path / "forced.jsonl")
    assert [r["status"] for r in records] == ["forced"] * 3
    assert all(r["termination"]["limit"] == "max_iterations" for r in records)  # type: ignore[index]
    assert forced.statuses == {"forced": 3} and forced.succeeded == 0


def test_the_command_prints_the_counts_by_status(files: tuple[Path, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    spec, inputs = files
    assert main(["batch", str(spec), "--tools", TOOLS[0], "--model", MODEL, "--no-trace",
                 "--inputs", str(inputs), "--out", str(tmp_path / "out.jsonl")]) == 0
    assert "by status: 2 success, 1 tool_error" in capsys.readouterr().err

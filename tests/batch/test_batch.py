"""``toolcycle batch``: the same records on asyncio and Ray, resumable, nothing lost or doubled.

Real parts: a ScriptedModel that checks every request against the provider protocol, real Ray
clusters (``ray.init(num_cpus=2)`` here; ``ray start`` nodes in test_ray_cluster.py) and the
real CLI in a subprocess killed with SIGKILL mid-batch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from toolcycle.batch import BatchFileError, BatchRecipe, read_records, run_batch
from toolcycle.errors import ConfigurationError
from toolcycle.playbook import open_store
from toolcycle.tracing.store import TraceStore

from .batch_tools import SPEC

ROOT = Path(__file__).resolve().parents[2]
MODEL = "python:tests.batch.batch_tools:model"
TOOLS = ["tests.batch.batch_tools"]


def write_inputs(path: Path, count: int, malformed: tuple[int, ...] = ()) -> list[str]:
    """``count`` words, one per line; the lines numbered in ``malformed`` are broken."""
    words = [f"w{n}" + "x" * (n % 7) for n in range(1, count + 1)]
    lines = []
    for number, word in enumerate(words, start=1):
        if number in malformed:
            lines.append('{"input": ' if number % 2 else "[1, 2]")
        elif number % 3 == 0:
            lines.append(json.dumps({"input": word, "id": number}))
        else:
            lines.append(json.dumps(word))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return words


def file_records(path: Path) -> list[dict[str, Any]]:
    """The file's lines as they are (the batch's ``read_records`` orders and dedupes)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without the run ids (fresh for every run)."""
    return [{k: v for k, v in record.items() if k != "run_id"} for record in records]


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray of 2 CPUs for this module, shut down (all its processes gone) after."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_500_inputs_give_the_same_records_on_asyncio_and_on_ray(
        spec: Path, tmp_path: Path, local_ray: None) -> None:
    malformed = (17, 250)
    words = write_inputs(tmp_path / "in.jsonl", 500, malformed)
    traces = tmp_path / "traces.db"
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL, trace_store=str(traces))

    here = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "local.jsonl", concurrency=16)
    there = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "ray.jsonl", ray=True,
                      chunk_size=25)

    local, on_ray = file_records(tmp_path / "local.jsonl"), file_records(tmp_path / "ray.jsonl")
    assert comparable(local) == comparable(on_ray)
    assert [r["line"] for r in local] == list(range(1, 501))  # in input order
    for record, word in zip(local, words, strict=True):
        if record["line"] in malformed:
            assert record["status"] == "malformed" and f"line {record['line']}:" in record["error"]
            continue
        assert record["status"] == "success", record
        assert record["output"] == f"answer {word}:{len(word)}"
        assert record["termination"]["reason"] == "completed"
        assert record["usage"]["requests"] == 2 and record["error"] is None
        assert record["id"] == (record["line"] if record["line"] % 3 == 0 else None)
    assert (here.written, here.malformed, there.written, there.malformed) == (500, 2, 500, 2)
    # every run's trace is in the store the recipe names, from both the driver and Ray workers
    run_ids = {r["run_id"] for r in local + on_ray if r["run_id"]}
    assert len(run_ids) == 996
    stored = {run.run_id for run in TraceStore(traces).list(limit=2000)}
    assert run_ids <= stored


def test_runs_here_and_on_ray_learn_into_the_playbook_the_batch_names(
        spec: Path, tmp_path: Path, local_ray: None) -> None:
    write_inputs(tmp_path / "in.jsonl", 20)
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL,
                                    playbook=str(tmp_path / "playbook.db"))
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "local.jsonl")
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "ray.jsonl", ray=True, chunk_size=5)
    observed = open_store(tmp_path / "playbook.db").tool_observations("echo_agent")
    assert len(observed) == 40  # one lookup per run, from this process and the Ray workers
    assert {o.tool for o in observed} == {"lookup"}


def test_a_crashing_input_is_an_error_record_and_the_batch_goes_on(
        spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "in.jsonl").write_text('"a"\n{"input": {"not": "a message"}}\n"b"\n')
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL)
    report = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    records = file_records(tmp_path / "out.jsonl")
    assert [r["status"] for r in records] == ["success", "error", "success"]
    assert records[1]["error"] and records[1]["output"] is None
    assert report.errors == 1


def test_the_progress_bar_goes_to_stderr(
        spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_inputs(tmp_path / "in.jsonl", 30)
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL)
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=True)
    shown = capsys.readouterr()
    assert shown.out == "" and "batch" in shown.err and "100%" in shown.err
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "again.jsonl")  # not a terminal
    assert capsys.readouterr().err == ""


def test_a_torn_last_line_is_cut_and_its_input_rerun(spec: Path, tmp_path: Path) -> None:
    write_inputs(tmp_path / "in.jsonl", 5)
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL)
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    whole = file_records(tmp_path / "out.jsonl")
    text = (tmp_path / "out.jsonl").read_text()
    (tmp_path / "out.jsonl").write_text(text[: text.rindex('{"line": 4')] + '{"line": 4, "ke')
    report = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    assert (report.skipped, report.written) == (3, 2)
    assert comparable(file_records(tmp_path / "out.jsonl")) == comparable(whole)


def test_an_out_file_written_for_other_inputs_is_refused(spec: Path, tmp_path: Path) -> None:
    write_inputs(tmp_path / "in.jsonl", 3)
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL)
    run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    (tmp_path / "in.jsonl").write_text('"changed"\n"w2x"\n')
    with pytest.raises(BatchFileError, match="line 1 has a record for input '1:"):
        run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl")


def test_a_batch_killed_mid_run_resumes_without_losing_or_doubling(
        spec: Path, tmp_path: Path) -> None:
    words = write_inputs(tmp_path / "in.jsonl", 120, malformed=(40,))
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "toolcycle", "batch", str(spec), "--tools", TOOLS[0],
               "--model", MODEL, "--inputs", str(tmp_path / "in.jsonl"), "--out", str(out),
               "--trace-db", str(tmp_path / "traces.db"), "--concurrency", "4"]
    slow = {**os.environ, "BATCH_TEST_SLOW": "0.05"}
    batch = subprocess.Popen(command, cwd=ROOT, env=slow, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
                not out.exists() or out.read_text().count("\n") < 20):
            time.sleep(0.05)
        os.kill(batch.pid, signal.SIGKILL)
    finally:
        batch.wait(10)
    first = read_records(out)  # whole lines only, in finish order (a torn one: see below)
    assert 20 <= len(first) < 120, "the batch was not interrupted mid-run"
    with out.open("a") as handle:  # what a kill during a write leaves
        handle.write('{"line": 999, "key": "99')

    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"({len(first)} already there" in done.stderr
    records = file_records(out)
    assert [r["line"] for r in records] == list(range(1, 121))  # each once, in order
    kept = {r["key"]: r for r in records}
    assert all(kept[r["key"]] == r for r in first)  # kept as written
    for record, word in zip(records, words, strict=True):
        if record["line"] == 40:
            assert record["status"] == "malformed"
        else:
            assert record["output"] == f"answer {word}:{len(word)}"


def test_a_paused_input_resumes_on_ray_as_on_asyncio(
        tmp_path: Path, local_ray: None) -> None:
    from toolcycle.batch import BatchApprovals

    from . import approval_tools

    spec = tmp_path / "eraser.json"
    spec.write_text(json.dumps(approval_tools.SPEC), encoding="utf-8")
    (tmp_path / "in.jsonl").write_text('"a"\n"erase-me"\n"b"\n', encoding="utf-8")
    recipe = BatchRecipe.from_files(str(spec), ["tests.batch.approval_tools"],
                                    model="python:tests.batch.approval_tools:model")
    out = tmp_path / "out.jsonl"
    first = run_batch(recipe, tmp_path / "in.jsonl", out, ray=True, chunk_size=2)
    assert first.statuses == {"paused": 1, "success": 2}
    paused = read_records(out)[1]
    assert paused["snapshot"] and paused["pending"][0]["tool_name"] == "erase"
    resumed = run_batch(recipe, tmp_path / "in.jsonl", out, ray=True,
                        approvals=BatchApprovals.from_options(["all"], []))
    assert (resumed.resumed, resumed.holds) == (1, {"success": 3})
    record = read_records(out)[1]
    assert (record["output"], record["run_id"]) == ("answer erased erase-me", paused["run_id"])


def test_tools_that_do_not_bind_are_refused_before_ray_starts(
        spec: Path, tmp_path: Path) -> None:
    write_inputs(tmp_path / "in.jsonl", 3)
    recipe = BatchRecipe.from_files(str(spec), ["examples.hello_tools"], model=MODEL)
    with pytest.raises(ConfigurationError, match="tool 'lookup': no implementation"):
        run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl", ray=True)
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(("inputs", "out", "message"), [
    ("none.jsonl", "out.jsonl", "no such inputs file"),
    ("in.jsonl", "no/such/folder/out.jsonl", "No such file or directory"),
])
def test_the_cli_reports_unusable_files(
        spec: Path, tmp_path: Path, inputs: str, out: str, message: str) -> None:
    write_inputs(tmp_path / "in.jsonl", 2)
    done = subprocess.run(
        [sys.executable, "-m", "toolcycle", "batch", str(spec), "--tools", TOOLS[0],
         "--model", MODEL, "--inputs", str(tmp_path / inputs), "--out",
         str(tmp_path / out), "--no-trace"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr

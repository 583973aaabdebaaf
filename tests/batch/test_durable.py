"""Nothing a batch finished is lost or done twice (issue 63, r2-06..09).

Real parts: the CLI in subprocesses killed with SIGKILL, the protocol-checking ScriptedModel,
tools that note their side effects in a file, and gates (a file the test creates) that hold a
run inside its tool call for as long as the test needs, so no test depends on timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolcycle.batch import (
    BatchApprovals,
    BatchLockedError,
    BatchRecipe,
    read_records,
    run_batch,
)
from toolcycle.errors import ConfigurationError

from . import approval_tools
from .batch_tools import SPEC

ROOT = Path(__file__).resolve().parents[2]
MODEL = "python:tests.batch.batch_tools:model"
ERASER = "python:tests.batch.approval_tools:model"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_words(path: Path, words: list[str]) -> None:
    path.write_text("".join(json.dumps(word) + "\n" for word in words), encoding="utf-8")


def effects(path: Path) -> Counter[str]:
    return Counter(path.read_text().splitlines()) if path.exists() else Counter()


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Side effects noted in ``effects.log``; ``wait`` words held until ``gate`` exists."""
    values = {"BATCH_TEST_EFFECTS": str(tmp_path / "effects.log"),
              "BATCH_TEST_GATE": str(tmp_path / "gate"),
              "BATCH_TEST_FLAKY": str(tmp_path / "model-up")}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **values}


@pytest.fixture()
def echo(tmp_path: Path) -> Path:
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    return path


@pytest.fixture()
def eraser(tmp_path: Path) -> Path:
    path = tmp_path / "eraser.json"
    path.write_text(json.dumps(approval_tools.SPEC), encoding="utf-8")
    return path


def command(spec: Path, tools: str, model: str, tmp_path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolcycle", "batch", str(spec), "--tools", tools,
            "--model", model, "--inputs", str(tmp_path / "in.jsonl"), "--out",
            str(tmp_path / "out.jsonl"), "--no-trace", *extra]


def wait_until(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


# -- r2-06: each record on disk when its run ends ---------------------------------------------

def test_records_behind_a_slow_input_are_on_disk_and_a_kill_loses_none(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    words = ["wait"] + [f"p{n}" for n in range(1, 21)]
    write_words(tmp_path / "in.jsonl", words)
    out = tmp_path / "out.jsonl"
    cli = command(echo, "tests.batch.batch_tools", MODEL, tmp_path, "--concurrency", "4")
    first = subprocess.Popen(cli, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:  # line 1 is held in its tool call: the 20 others finish behind it
        wait_until(lambda: count_lines(out) == 20, "20 records on disk behind a slow input")
    finally:
        first.kill()
        first.wait(10)
    on_disk = read_records(out)
    assert sorted(r["line"] for r in on_disk) == list(range(2, 22))  # finish order, read in order
    assert [r["line"] for r in on_disk] == list(range(2, 22))
    (tmp_path / "gate").touch()
    done = subprocess.run(cli, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 records written" in done.stderr and "(20 already there" in done.stderr
    records = lines(out)  # the final rewrite: one per input, in input order
    assert [r["line"] for r in records] == list(range(1, 22))
    assert all(r["status"] == "success" and r["attempt"] == 1 for r in records)
    assert {r["key"]: r for r in records if r["line"] > 1} == {r["key"]: r for r in on_disk}
    ran = effects(tmp_path / "effects.log")
    assert ran["wait"] == 2 and all(ran[w] == 1 for w in words[1:])  # only the one in flight


def test_a_file_in_finish_order_is_rewritten_in_input_order_by_the_next_batch(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["a", "b", "c"])
    recipe = BatchRecipe.from_files(str(echo), ["tests.batch.batch_tools"], model=MODEL)
    out = tmp_path / "out.jsonl"
    run_batch(recipe, tmp_path / "in.jsonl", out)
    ordered = out.read_text().splitlines()
    out.write_text("\n".join([ordered[2], ordered[0], ordered[1]]) + "\n")  # as a kill leaves
    assert [r["line"] for r in read_records(out)] == [1, 2, 3]
    report = run_batch(recipe, tmp_path / "in.jsonl", out)
    assert (report.written, report.skipped) == (0, 3)
    assert out.read_text().splitlines() == ordered


# -- r2-07: a bad line is a malformed record ---------------------------------------------------

def test_every_kind_of_bad_line_is_a_malformed_record_and_the_batch_goes_on(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    parseable_but_deep = json.dumps({"input": json.loads("[" * 200 + "]" * 200)})
    bad = [b'"a"', deep.encode(), parseable_but_deep.encode(), b'"caf\xe9"', b'{"id": 3}',
           b"42", b'"' + b"x" * 300_000 + b'"', b'{"input": "b", "id": "two"}']
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(bad) + b"\n")
    recipe = BatchRecipe.from_files(str(echo), ["tests.batch.batch_tools"], model=MODEL)
    report = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl",
                       max_line_bytes=250_000)
    records = lines(tmp_path / "out.jsonl")
    assert [r["status"] for r in records] == ["success"] + ["malformed"] * 6 + ["success"]
    problems = [r["error"] for r in records[1:7]]
    assert "line 2: nested deeper than 64 levels" in problems[0]
    assert "line 3: nested deeper than 64 levels" in problems[1]
    assert "line 4: not UTF-8" in problems[2]
    assert "object without 'input'" in problems[3] and "got int" in problems[4]
    assert "line 7: 300002 bytes, over the limit of 250000" in problems[5]
    assert report.malformed == 6 and records[7]["id"] == "two"
    again = run_batch(recipe, tmp_path / "in.jsonl", tmp_path / "out.jsonl",
                      max_line_bytes=250_000)  # the keys of bad lines are stable: all skipped
    assert (again.skipped, again.written) == (8, 0)


def test_the_cli_exits_0_with_a_record_for_a_deeply_nested_line(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "in.jsonl").write_text('"a"\n' + "[" * 100_000 + "]" * 100_000 + '\n"b"\n')
    done = subprocess.run(command(echo, "tests.batch.batch_tools", MODEL, tmp_path), cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert [r["status"] for r in lines(tmp_path / "out.jsonl")] == [
        "success", "malformed", "success"]


# -- r2-08: a paused input keeps its snapshot and resumes with approvals ----------------------

def eraser_recipe(eraser: Path) -> BatchRecipe:
    return BatchRecipe.from_files(str(eraser), ["tests.batch.approval_tools"], model=ERASER)


def test_a_paused_input_keeps_its_snapshot_is_counted_paused_and_resumes_once(
        eraser: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["a", "erase-me", "b", "erase-you"])
    recipe, out = eraser_recipe(eraser), tmp_path / "out.jsonl"
    report = run_batch(recipe, tmp_path / "in.jsonl", out)
    assert (report.paused, report.statuses) == (2, {"paused": 2, "success": 2})
    paused = lines(out)[1]
    assert paused["status"] == "paused" and isinstance(paused["snapshot"], dict)
    [pending] = paused["pending"]
    assert pending == {"call_id": pending["call_id"], "tool_name": "erase", "arguments":
                       {"word": "erase-me"}, "requires_approval": True}
    assert effects(tmp_path / "effects.log") == Counter({"a": 1, "b": 1})

    again = run_batch(recipe, tmp_path / "in.jsonl", out)  # no decisions: they stay paused
    assert (again.written, again.paused) == (0, 2)

    decisions = BatchApprovals.from_options(["2"], ["4"], "not that one")
    resumed = run_batch(recipe, tmp_path / "in.jsonl", out, approvals=decisions)
    assert (resumed.resumed, resumed.written, resumed.paused) == (2, 2, 0)
    records = lines(out)
    assert [r["line"] for r in records] == [1, 2, 3, 4]
    assert records[1]["output"] == "answer erased erase-me" and records[1]["attempt"] == 2
    assert records[1]["run_id"] == paused["run_id"]  # the same run, continued
    assert "not that one" in records[3]["output"] and records[3]["snapshot"] is None
    assert effects(tmp_path / "effects.log") == Counter({"a": 1, "b": 1, "erased erase-me": 1})
    once_more = run_batch(recipe, tmp_path / "in.jsonl", out, approvals=decisions)
    assert once_more.written == 0  # nothing paused is left: the "yes" is spent once


def test_a_batch_killed_while_it_resumes_does_not_resume_the_snapshot_again(
        eraser: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["erase-wait", "c"])
    out = tmp_path / "out.jsonl"
    base = command(eraser, "tests.batch.approval_tools", ERASER, tmp_path)
    subprocess.run(base, cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    assert lines(out)[0]["status"] == "paused"
    resume = [*base, "--resume", "--approve", "all"]
    killed = subprocess.Popen(resume, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:  # the approved call runs, and is held inside the tool
        wait_until(lambda: effects(tmp_path / "effects.log")["erased erase-wait"] == 1,
                   "the approved call ran")
    finally:
        killed.kill()
        killed.wait(10)
    assert read_records(out)[0]["status"] == "resuming"
    (tmp_path / "gate").touch()
    done = subprocess.run(resume, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    [first, second] = lines(out)
    assert first["status"] == "error" and "not resumed twice" in first["error"]
    assert second["status"] == "success"
    assert effects(tmp_path / "effects.log")["erased erase-wait"] == 1  # at most once


def test_the_cli_resumes_with_an_approvals_file_and_refuses_bad_decisions(
        eraser: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["erase-x", "erase-y"])
    base = command(eraser, "tests.batch.approval_tools", ERASER, tmp_path)
    first = subprocess.run(base, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120)
    assert "2 paused inputs wait for approval" in first.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"line": 1, "approve": "yes"}\n{"line": 2, "call_id": "call_1", '
                   '"approve": true, "deny": "no"}\nnot json\n')
    for extra, messages in [
            (["--approve", "all"], ["add --resume"]),
            (["--resume", "--approvals", str(bad)],  # every problem of the file at once
             ["line 1: 'approve' must be true", "line 2: give exactly one", "line 3 is not"]),
            (["--resume", "--approve", "1", "--deny", "1"], ["contrary decisions"])]:
        refused = subprocess.run([*base, *extra], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=120)
        assert refused.returncode == 2, refused.stderr
        assert all(m in refused.stderr for m in messages) and "Traceback" not in refused.stderr
    good = tmp_path / "decisions.jsonl"
    call_id = lines(tmp_path / "out.jsonl")[0]["pending"][0]["call_id"]
    good.write_text(json.dumps({"line": 1, "call_id": call_id, "approve": True,
                                "arguments": {"word": "erase-x"}}) + "\n"
                    + json.dumps({"line": 2, "approve": True,
                                  "arguments": {"word": "something else"}}) + "\n")
    done = subprocess.run([*base, "--resume", "--approvals", str(good)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # line 2's decision quotes other arguments: it approves nothing, the input stays paused
    assert [r["status"] for r in lines(tmp_path / "out.jsonl")] == ["success", "paused"]
    assert "1 resumed" in done.stderr and "1 paused inputs wait" in done.stderr


def test_decisions_are_checked_together_before_anything_runs() -> None:
    with pytest.raises(ConfigurationError) as caught:
        BatchApprovals.from_options(["x", "3:"], [], None)
    assert "'x': expected" in str(caught.value) and "'3:': expected" in str(caught.value)


# -- r2-09: one batch per output ---------------------------------------------------------------

def test_a_second_batch_on_the_same_out_is_refused_while_the_first_runs(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["wait", "a", "b"])
    out = tmp_path / "out.jsonl"
    cli = command(echo, "tests.batch.batch_tools", MODEL, tmp_path)
    first = subprocess.Popen(cli, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: count_lines(out) == 2, "the first batch is under way")
        second = subprocess.run(cli, cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=120)
        assert second.returncode == 2
        assert second.stderr == (f"error: another batch is writing {out} (process "
                                 f"{first.pid}); wait for it to finish or choose another "
                                 "--out\n")
        recipe = BatchRecipe.from_files(str(echo), ["tests.batch.batch_tools"], model=MODEL)
        with pytest.raises(BatchLockedError):
            run_batch(recipe, tmp_path / "in.jsonl", out)
    finally:
        (tmp_path / "gate").touch()
        first.wait(60)
    assert first.returncode == 0
    assert [r["line"] for r in lines(out)] == [1, 2, 3]
    assert effects(tmp_path / "effects.log") == Counter({"wait": 1, "a": 1, "b": 1})


# -- --retry-errors ----------------------------------------------------------------------------

def test_retry_errors_reruns_only_the_failed_inputs_and_supersedes_their_records(
        echo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["a", "flaky-1", "b", "flaky-2"])
    recipe = BatchRecipe.from_files(str(echo), ["tests.batch.batch_tools"], model=MODEL)
    out = tmp_path / "out.jsonl"
    first = run_batch(recipe, tmp_path / "in.jsonl", out)
    assert first.statuses == {"error": 2, "success": 2}
    (tmp_path / "model-up").touch()
    assert run_batch(recipe, tmp_path / "in.jsonl", out).written == 0  # errors are records
    retried = run_batch(recipe, tmp_path / "in.jsonl", out, retry_errors=True)
    assert (retried.retried, retried.written, retried.holds) == (2, 2, {"success": 4})
    assert retried.statuses == {"success": 2} and retried.succeeded == 2
    records = lines(out)
    assert [(r["line"], r["attempt"]) for r in records] == [(1, 1), (2, 2), (3, 1), (4, 2)]
    assert effects(tmp_path / "effects.log") == Counter(
        {"a": 1, "b": 1, "flaky-1": 1, "flaky-2": 1})
    assert run_batch(recipe, tmp_path / "in.jsonl", out, retry_errors=True).written == 0


def test_a_damaged_snapshot_in_the_output_is_an_error_record_never_a_crash(
        eraser: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_words(tmp_path / "in.jsonl", ["erase-1", "erase-2", "erase-3"])
    recipe, out = eraser_recipe(eraser), tmp_path / "out.jsonl"
    run_batch(recipe, tmp_path / "in.jsonl", out)
    damaged = lines(out)
    del damaged[0]["snapshot"]["messages"]  # a snapshot the agent refuses
    damaged[1]["snapshot"] = "not a snapshot"  # nothing to resume: stays paused
    out.write_text("".join(json.dumps(r) + "\n" for r in damaged))
    report = run_batch(recipe, tmp_path / "in.jsonl", out,
                       approvals=BatchApprovals.from_options(["all"], []))
    records = lines(out)
    assert [r["status"] for r in records] == ["error", "paused", "success"]
    assert records[0]["error"].startswith("SnapshotError")
    assert (report.resumed, effects(tmp_path / "effects.log")) == (2, Counter(
        {"erased erase-3": 1}))
    retried = run_batch(recipe, tmp_path / "in.jsonl", out, retry_errors=True)
    assert retried.retried == 2 and retried.holds == {"paused": 2, "success": 1}


def test_a_snapshot_resumed_outside_the_batch_is_not_resumed_by_it_again(
        eraser: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """The batch's resumes claim in the ledger of consumed snapshots (docs/approval.md): one
    taken elsewhere from the record (a person's own `agent.resume`) is an error record."""
    from toolcycle.batch.worker import agent_for

    write_words(tmp_path / "in.jsonl", ["erase-1", "w"])
    recipe = BatchRecipe.from_files(str(eraser), ["tests.batch.approval_tools"], model=ERASER,
                                    snapshot_ledger=str(tmp_path / "ledger.db"))
    out = tmp_path / "out.jsonl"
    run_batch(recipe, tmp_path / "in.jsonl", out)
    paused = lines(out)[0]
    agent, _ = agent_for(recipe)  # the same spec, tools and ledger, outside the batch
    outside = agent.resume_sync(paused["snapshot"], {paused["pending"][0]["call_id"]: True})
    assert outside.output == "answer erased erase-1"
    report = run_batch(recipe, tmp_path / "in.jsonl", out,
                       approvals=BatchApprovals.from_options(["all"], []))
    record = lines(out)[0]
    assert (report.resumed, record["status"]) == (1, "error")
    assert "SnapshotConsumed" in record["error"] and record["run_id"] == paused["run_id"]
    assert effects(tmp_path / "effects.log")["erased erase-1"] == 1  # not twice

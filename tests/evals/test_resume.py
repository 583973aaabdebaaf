"""An experiment killed mid-way (a real ``toolcycle eval`` process, SIGKILL) and resumed with
the same log loses nothing and repeats nothing.

The tool holds chosen items until a release file exists, so at the kill some runs are
finished (recorded), some are in flight (held), deterministically. After the resume: every
(case, repeat) has exactly one record; every finished execution of the tool has exactly one
record (a run recorded before the kill was not run again); and the runs in flight at the
kill, which never finished, ran again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from toolcycle.evals import read_records

from .eval_tools import SPEC

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [f"i{n}" for n in range(1, 9)]
HELD = ["i5", "i6"]


def _command(tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "toolcycle", "eval", str(tmp_path / "cases.jsonl"),
            "--agent", str(tmp_path / "agent.json"), "--tools", "tests.evals.eval_tools",
            "--model", "python:tests.evals.eval_tools:model", "--repeats", "2",
            "--concurrency", "2", "--log", str(tmp_path / "log.jsonl"), "--no-trace"]


def _records(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(line) for line in lines if line.endswith("}")]


def test_killed_experiment_resumes_without_losing_or_repeating(tmp_path: Path) -> None:
    (tmp_path / "agent.json").write_text(json.dumps(SPEC), encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text("".join(
        json.dumps({"name": item, "inputs": f"please do {item}",
                    "expected_output": f"done:{item}"}) + "\n" for item in ITEMS))
    mark, release, log = tmp_path / "mark.txt", tmp_path / "release", tmp_path / "log.jsonl"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "EVAL_TEST_MARK": str(mark), "EVAL_TEST_HOLD": ",".join(HELD),
           "EVAL_TEST_RELEASE": str(release)}
    first = subprocess.Popen(_command(tmp_path), cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # repeat 1 runs i1..i8 two at a time: i1-i4 finish, then i5 and i6 are held in flight
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            started = mark.read_text().split("\n") if mark.exists() else []
            if len(_records(log)) == 4 and {"start i5", "start i6"} <= set(started):
                break
            assert first.poll() is None, first.communicate()
            time.sleep(0.02)
        else:
            raise AssertionError(f"never reached the held runs: {mark.read_text()}")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert first.returncode == -signal.SIGKILL
    before = {(r["case"], r["repeat"]) for r in _records(log)}
    assert before == {(item, 1) for item in ITEMS[:4]}
    mark.write_text(mark.read_text() + "--- killed\n")

    release.touch()
    done = subprocess.run(_command(tmp_path), cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    _, records = read_records(log)
    keys = Counter(r.key for r in records)
    assert set(keys) == {(item, repeat) for item in ITEMS for repeat in (1, 2)}
    assert set(keys.values()) == {1}  # nothing lost, nothing recorded twice
    assert all(r.succeeded and r.scores[0].passed for r in records)
    lines = mark.read_text().splitlines()
    killed_at = lines.index("--- killed")
    ended = Counter(line.split()[1] for line in lines if line.startswith("end "))
    # every finished execution is exactly one record: none was run again after the kill
    assert ended == Counter(item for item, _ in keys.elements())
    after = [line.split()[1] for line in lines[killed_at:] if line.startswith("start ")]
    assert Counter(after) == Counter({**{i: 1 for i in ITEMS[:4]},
                                      **{i: 2 for i in ITEMS[4:]}})
    # the held runs were in flight at the kill: started before it, never ended, ran again
    assert {f"start {i}" for i in HELD} <= set(lines[:killed_at])
    assert not {f"end {i}" for i in HELD} & set(lines[:killed_at])
    assert "pass" in done.stdout and "16 runs" in done.stdout

"""A Ray node that dies mid-batch: its tasks are retried on the other node, and the output
has every input exactly once.

Two nodes on this machine, each started with ``ray start`` (tests/batch/ray_cluster.py): the
head with 1 CPU and a second node with 2, so most chunks run on the second node; once its
workers are inside tool calls, its raylet and those workers are killed by PID (SIGKILL).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path

from toolcycle.batch import BatchRecipe, run_batch
from toolcycle.tracing.store import TraceStore

from .batch_tools import SPEC
from .ray_cluster import TwoNodeCluster
from .test_batch import MODEL, TOOLS, file_records, write_inputs


def test_a_node_killed_mid_batch_loses_and_doubles_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "echo.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    words = write_inputs(tmp_path / "in.jsonl", 200)
    out = tmp_path / "out.jsonl"
    recipe = BatchRecipe.from_files(str(spec), TOOLS, model=MODEL,
                                    trace_store=str(tmp_path / "traces.db"))
    mark = tmp_path / "second-node-calls"  # the second node's workers note each tool call
    cluster = TwoNodeCluster({"BATCH_TEST_SLOW": "0.05"},  # a 200-input batch of ~5 s
                             {"BATCH_TEST_MARK": str(mark)})
    try:
        raylet = cluster.second_node_raylet()
        failures: list[BaseException] = []

        def batch() -> None:
            try:
                run_batch(recipe, tmp_path / "in.jsonl", out, ray=True, chunk_size=5,
                          concurrency=1, max_retries=5)
            except BaseException as exc:  # reported by the test thread below
                failures.append(exc)

        runner = threading.Thread(target=batch)
        runner.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
                not mark.exists() or mark.read_text().count("\n") < 3):
            time.sleep(0.02)  # until the second node is inside its runs' tool calls
        assert out.read_text().count("\n") < 200 if out.exists() else True
        # the node dies: its raylet, and the workers caught inside a tool call (a worker may
        # otherwise finish its task and hand the result straight to the driver)
        for pid in {raylet, *map(int, mark.read_text().split())}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        runner.join(180)
        assert not runner.is_alive() and not failures, failures
    finally:
        cluster.stop()
    records = file_records(out)
    assert [r["line"] for r in records] == list(range(1, 201))  # each once, in order
    for record, word in zip(records, words, strict=True):
        assert record["status"] == "success", record
        assert record["output"] == f"answer {word}:{len(word)}"
    # the killed node was working: the chunks it had started were run again on the head, so
    # the trace store holds more runs than there are inputs (the retried inputs' first tries,
    # finished or left running), and every record's run is among them
    runs = TraceStore(tmp_path / "traces.db").list(limit=1000)
    assert len(runs) > 200
    assert {r["run_id"] for r in records} <= {run.run_id for run in runs}

"""Ctrl-C: the command ends with status 130, no traceback, and keeps what had finished.

The real ``toolcycle run`` in a process of its own, sent SIGINT while a tool call waits; the
trace store it wrote to is read afterwards.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from toolcycle.tracing.store import TraceStore

from .conftest import ROOT, cli_env, toolcycle_command

TOOLS = str(Path(__file__).with_name("slow_tools.py"))


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_a_run_exits_130_and_keeps_the_trace(tmp_path: Path) -> None:
    marker, db = tmp_path / "started", tmp_path / "traces.db"
    process = subprocess.Popen(
        [*toolcycle_command(), "run", "examples/hello_goodbye.gram", "--tools", TOOLS,
         "--model", "python:tests.cli.cli_models:greet_then_wait", "--trace-db", str(db),
         "bye"],
        cwd=ROOT, env=cli_env(TOOLCYCLE_TEST_MARKER=str(marker)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # as a terminal's foreground command: a suite started as a background job of a
        # non-interactive shell inherits SIGINT ignored, and so would the command
        preexec_fn=_sigint_default)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # the second call has started: interrupt it
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "interrupted"
    assert out == ""  # no answer: there was none
    with TraceStore(db) as store:
        [summary] = store.list()
        trace = store.get(summary.run_id)
    assert trace is not None and trace.status == "cancelled"
    calls = {c.name: c for c in trace.tool_calls}
    assert calls["sayHello"].result == "Hello, Ada!"  # what finished is kept
    assert calls["sayGoodbye"].error is not None  # what did not is answered, not lost

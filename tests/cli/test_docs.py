"""docs/cli.md as written: its Python sample runs, and its exit-status table is the one the
command uses (``toolcycle/cli/_exits.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from toolcycle.cli import _exits

from .conftest import ROOT, cli_env

DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_python_sample_runs_as_a_script(tmp_path: Path) -> None:
    """As a script of its own: it configures logging for its whole process."""
    [sample] = re.findall(r"```python\n(.*?)```", DOC, re.S)
    script = tmp_path / "sample.py"
    script.write_text(sample)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=cli_env(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"
    assert "INFO toolcycle.run: model request: attempt 1 iteration 1" in done.stderr
    assert "INFO toolcycle.tools: tool call add" in done.stderr


def test_the_exit_status_table_is_the_commands() -> None:
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", DOC, re.M))
    assert {int(code) for code in table} == {
        _exits.OK, _exits.RUN_FAILED, _exits.USAGE, _exits.PAUSED, _exits.NOT_SUCCEEDED,
        _exits.INTERRUPTED}

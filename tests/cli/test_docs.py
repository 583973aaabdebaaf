"""docs/cli.md as written: its Python sample runs, and its exit-status table is the one the
command uses (``toolcycle/cli/_exits.py``)."""

from __future__ import annotations

import re

import pytest

from toolcycle.cli import _exits

from .conftest import ROOT

DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_python_sample_runs(capsys: pytest.CaptureFixture[str]) -> None:
    [sample] = re.findall(r"```python\n(.*?)```", DOC, re.S)
    exec(compile(sample, "cli.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out == "5\n"


def test_the_exit_status_table_is_the_commands() -> None:
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", DOC, re.M))
    assert {int(code) for code in table} == {
        _exits.OK, _exits.RUN_FAILED, _exits.USAGE, _exits.PAUSED, _exits.INTERRUPTED}

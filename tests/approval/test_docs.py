"""docs/approval.md runs as written: its python samples in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "approval.md"


def test_every_sample_of_the_approval_guide_runs(capsys: pytest.CaptureFixture[str]) -> None:
    samples = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(samples) == 4
    namespace: dict[str, object] = {}
    for index, sample in enumerate(samples):
        exec(compile(sample, f"approval.md sample {index + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "waiting for approval of delete_file [call_2]" in out
    assert "call_2 delete_file {'path': '/tmp/a.log'}" in out
    assert "approval: approved by person" in out
    assert "system files are off limits {'decision': 'denied'" in out
    assert "integrity: the sha256 digest does not match" in out

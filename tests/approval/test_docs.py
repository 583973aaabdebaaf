"""docs/approval.md runs as written: its python samples in order, pasted into one script (the
later ones say they continue the first), run in a subprocess (tests/doc_scripts.py)."""

from __future__ import annotations

import re
from pathlib import Path

from doc_scripts import run_script

DOC = Path(__file__).resolve().parents[2] / "docs" / "approval.md"


def test_every_sample_of_the_approval_guide_runs(tmp_path: Path) -> None:
    samples = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(samples) == 5
    out = run_script("\n".join(samples), tmp_path, "approval_guide.py")
    assert "waiting for approval of delete_file [call_2]" in out
    assert "call_2 delete_file {'path': '/tmp/a.log'}" in out
    assert "approval: approved by person" in out
    assert "system files are off limits {'decision': 'denied'" in out
    assert "integrity: the sha256 digest does not match" in out
    assert "SNAPSHOT_CONSUMED" in out

"""docs/teams.md and docs/guardrails.md run as a reader runs them: each page's python samples,
in order, pasted into one script run in a subprocess (tests/doc_scripts.py); each sample
prints exactly the ``text`` block that follows it on the page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_scripts import run_script

DOCS = Path(__file__).resolve().parents[2] / "docs"
SAMPLE = re.compile(r"```python\n(.*?)```(?:\n+prints\n+```text\n(.*?)```)?", re.S)
MARK = "=== sample {} ==="


@pytest.mark.parametrize("page", ["teams.md", "guardrails.md"])
def test_every_sample_runs_and_prints_what_the_page_says(page: str, tmp_path: Path) -> None:
    samples = SAMPLE.findall((DOCS / page).read_text(encoding="utf-8"))
    assert len(samples) >= 4
    script = "".join(f"print({MARK.format(i)!r})\n{code}"
                     for i, (code, _) in enumerate(samples, 1))
    output = run_script(script, tmp_path)
    printed = re.split(r"=== sample \d+ ===\n", output)[1:]
    assert len(printed) == len(samples)
    for index, ((_, expected), got) in enumerate(zip(samples, printed, strict=True), 1):
        if expected:
            assert got == expected, f"{page} sample {index}"

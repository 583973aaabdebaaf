"""docs/teams.md and docs/guardrails.md run as written: each python sample in order, in one
namespace per page, printing exactly the ``text`` block that follows it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
SAMPLE = re.compile(r"```python\n(.*?)```(?:\n+prints\n+```text\n(.*?)```)?", re.S)


@pytest.mark.parametrize("page", ["teams.md", "guardrails.md"])
def test_every_sample_runs_and_prints_what_the_page_says(page: str) -> None:
    samples = SAMPLE.findall((DOCS / page).read_text(encoding="utf-8"))
    assert len(samples) >= 4
    namespace: dict[str, object] = {"__name__": f"docs_{page[:-3]}"}
    for index, (code, expected) in enumerate(samples, 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{page} sample {index}", "exec"), namespace)
        if expected:
            assert out.getvalue() == expected, f"{page} sample {index}"

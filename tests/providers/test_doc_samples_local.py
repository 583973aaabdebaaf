"""The docs samples that name a ``local:`` model, run as scripts like every other sample
(tests/providers/test_doc_samples.py says how), in the real-model tier. A file of their own so
that the two pytest-xdist workers of ``make test`` (``--dist loadfile``) share the doc samples:
each of these scripts loads a real model in its own process."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_scripts import run_script

from .test_doc_samples import ALL, ON_LOCAL, _scratch_directory, run_page


@pytest.mark.real_model
@pytest.mark.parametrize("page", ON_LOCAL)
def test_page_samples_run_on_the_local_model(
    page: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_page(ALL[page], tmp_path, _scratch_directory(tmp_path))
    with capsys.disabled():
        print("\n" + "\n".join(report))


@pytest.mark.real_model
def test_readme_quickstart_answers_on_the_local_model(tmp_path: Path) -> None:
    """The README says to swap the model string for local:qwen2.5-coder-1.5b "without touching
    the rest": the quickstart, so changed, returns a valid Answer (new-01)."""
    [quickstart] = ALL["README.md"]
    code = quickstart.code.replace('"openai:gpt-4o-mini"', '"local:qwen2.5-coder-1.5b"')
    assert code != quickstart.code
    code += ("\nassert isinstance(result.output, Answer), result.trace.render()"
             "\nassert result.output.city == 'Paris'"
             "\nassert 'paris' in result.output.summary.lower()\n")
    run_script(code, tmp_path, "quickstart.py", _scratch_directory(tmp_path), timeout=600)

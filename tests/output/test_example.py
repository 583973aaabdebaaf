"""``examples/structured_report.py`` runs as a script with the scripted model and produces a
validated report after one rejected attempt."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "structured_report.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("structured_report", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["structured_report"] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_as_a_script() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout[: done.stdout.index("\n}") + 2])
    assert report["revenue_eur"] == 11_408_000
    assert "attempt 1: rejected by revenue_is_in_euros" in done.stdout
    assert "attempt 2: accepted" in done.stdout


async def test_the_example_converts_validates_and_reflects() -> None:
    example = _load()
    result = await example.extract(example.scripted_model())
    report = result.output
    assert isinstance(report, example.CompanyReport)
    assert (report.company, report.fiscal_year, report.employees) == (
        "Northwind Traders", 2024, 84)
    assert report.revenue_eur == round(12_400_000 * example.EUR_PER_UNIT["USD"])
    assert [(a.success, a.validator) for a in result.trace.attempts] == [
        (False, "revenue_is_in_euros"), (True, None),
    ]
    kinds = [(r.name, r.kind) for r in result.tool_calls]
    assert kinds == [("convert_to_eur", "tool"), ("final_report", "output"), ("submit", "submit"),
                     ("final_report", "output"), ("submit", "submit")]
    assert result.tool_calls[1].result is not None
    assert result.tool_calls[1].result.startswith("REPORT PREVIEW")


@pytest.mark.parametrize(
    ("change", "validator"),
    [({"fiscal_year": 2023}, "figures_match_the_memo"),
     ({"employees": 85}, "figures_match_the_memo"),
     ({"revenue_eur": 12_400_000}, "revenue_is_in_euros")],
)
async def test_the_business_rules_reject_wrong_figures(
    change: dict[str, int], validator: str
) -> None:
    example = _load()
    good = {"company": "Northwind Traders", "fiscal_year": 2024, "employees": 84,
            "revenue_eur": 11_408_000, "risks": ["shipping"]}
    output = example.build_agent(example.scripted_model()).output
    report = example.CompanyReport(**{**good, **change})
    from toolcycle import CancelToken, RunContext, Usage

    ctx = RunContext(deps=example.MEMO, usage=Usage(), cancel_token=CancelToken())
    assert await output.validate(example.CompanyReport(**good), ctx) is None
    problem = await output.validate(report, ctx)
    assert problem is not None and problem.validator == validator


def test_a_failed_run_exits_with_status_1(tmp_path: Path) -> None:
    memo = tmp_path / "memo.txt"
    memo.write_text("Nothing about any company here.")
    done = subprocess.run([sys.executable, str(EXAMPLE), "--memo", str(memo), "--trace"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stdout.startswith("no report: [")
    # The scripted replies do not fit this memo, so the business rules reject each attempt.
    assert "attempt 1 failed validation (figures_match_the_memo)" in done.stdout


@pytest.mark.real_model
async def test_the_example_on_the_local_model() -> None:
    """The same agent on Qwen2.5-Coder-1.5B (llama.cpp): a validated report comes back.

    Small models slip (a text answer instead of a tool call, a figure left in dollars); the
    attempts and the feedback are what bring the run to a report the business rules accept.
    """
    from toolcycle.models.local.packs import ModelPackError, pack_path

    try:
        pack_path("qwen2.5-coder-1.5b")
    except ModelPackError as exc:
        pytest.fail(f"the real-model tier needs the model pack (make test installs it): {exc}")
    example = _load()
    result = await example.extract("local:qwen2.5-coder-1.5b")
    report = result.output
    assert isinstance(report, example.CompanyReport)
    assert (report.fiscal_year, report.employees) == (2024, 84)
    assert report.revenue_eur != 12_400_000  # converted, or the validator would have said so
    assert result.trace.attempts[-1].success


def test_an_unknown_model_exits_with_status_2() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE), "--model", "nosuch:model"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "cannot resolve model 'nosuch:model'" in done.stderr

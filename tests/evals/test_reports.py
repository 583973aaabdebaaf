"""Reports (HTML safety, JSON), paired comparisons and CI thresholds."""

from __future__ import annotations

import json
import re
from base64 import b64encode
from hashlib import sha256
from pathlib import Path

import pytest

from toolcycle.evals import (
    EvalThresholdError,
    ExperimentReport,
    RunRecord,
    Score,
    assert_thresholds,
    compare,
)

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&'


def record(case: str, repeat: int, passed: bool, *, iterations: int = 2, kind: str = "k",
           succeeded: bool = True, text: str = "ok") -> RunRecord:
    return RunRecord(case, repeat, succeeded, "success" if succeeded else "failure",
                     (Score("contains", float(passed), passed, text),), output=text,
                     iterations=iterations, input_tokens=10 * iterations, output_tokens=5,
                     latency_s=0.1 * iterations, run_id=f"{case}-{repeat}", tools=("work",),
                     kind=kind)


def report(name: str, outcomes: dict[str, list[bool]], **options: int) -> ExperimentReport:
    return ExperimentReport.from_records(name, ["contains"], [
        record(case, r + 1, ok, **options) for case, oks in outcomes.items()
        for r, ok in enumerate(oks)])


def test_html_escapes_everything_loads_nothing_and_runs_no_script(tmp_path: Path) -> None:
    hostile = ExperimentReport.from_records(HOSTILE, ["contains"], [
        RunRecord(HOSTILE, 1, True, HOSTILE, (Score("contains", 1.0, True, HOSTILE),),
                  output={"x": HOSTILE}, error=HOSTILE, run_id=HOSTILE, tools=(HOSTILE,),
                  kind=HOSTILE)])
    path = tmp_path / "report.html"
    hostile.save(path)
    page = path.read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "script-src 'none'" in policy
    assert "unsafe-inline" not in policy
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style is not None
    digest = b64encode(sha256(style.group(1).encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy  # the page's own style, and nothing else, applies
    assert not re.search(r"<[^>]*\b(src|href)=", page)  # no element fetches anything


def test_html_has_a_table_per_kind() -> None:
    mixed = ExperimentReport.from_records("m", ["contains"], [
        record("a", 1, True, kind="<alpha>"), record("b", 1, False, kind="beta")])
    page = mixed.to_html()
    assert "<h2>By kind of case</h2>" in page and "<td>&lt;alpha&gt;</td>" in page
    assert "By kind" not in report("one", {"a": [True]}).to_html()


def test_json_report_has_no_nan_and_round_trips(tmp_path: Path) -> None:
    one = report("one", {"a": [True]})
    path = tmp_path / "r.json"
    one.save(path)
    data = json.loads(path.read_text())
    assert data["cases"][0]["iterations"]["method"] == "none"  # one value, no interval
    assert data["records"][0]["case"] == "a"
    with pytest.raises(ValueError, match=r"\.html or \.json"):
        one.save(tmp_path / "r.txt")


def test_terminal_table_is_terminal_safe() -> None:
    table = report("x\x1b]52;c;payload\x07", {"b\x1b[2J": [True]}).render_table()
    assert "\x1b" not in table and "\x07" not in table


def test_compare_finds_better_and_worse_cases_and_tests_them() -> None:
    before = report("before", {f"c{i}": [False, False] for i in range(10)}, iterations=4)
    after = report("after", {**{f"c{i}": [True, True] for i in range(9)}, "c9": [False, False]},
                   iterations=2)
    found = compare(before, after)
    assert found.better == [f"c{i}" for i in range(9)] and found.worse == []
    assert found.p_value == pytest.approx(2 / 512) and found.significant
    assert found.metrics["iterations"].difference.mean == -2.0
    assert found.metrics["iterations"].p_value < 0.01
    assert found.metrics_both_passed["iterations"].pairs == 0  # none passed before
    assert found.share_worse == 0.0
    assert "9 better, 0 worse of 10 cases" in found.render()
    assert json.loads(found.to_json())["significant"] is True


def test_a_small_difference_is_called_noise() -> None:
    a = report("a", {"x": [True], "y": [False], "z": [True]})
    b = report("b", {"x": [True], "y": [True], "z": [True], "only-b": [True]})
    found = compare(a, b)
    assert [c.case for c in found.cases] == ["x", "y", "z"]  # paired: only-b left out
    assert found.better == ["y"] and found.p_value == 1.0 and not found.significant
    assert "within noise" in found.render()
    assert found.metrics_both_passed["iterations"].pairs == 2


def test_thresholds_pass_and_fail_with_every_miss_listed() -> None:
    good = report("good", {"a": [True] * 5, "b": [True] * 5})
    assert_thresholds(good, pass_rate=0.9, evaluators={"contains": 0.9}, pass_hat_k=1.0)
    with pytest.raises(EvalThresholdError) as caught:
        assert_thresholds(good, pass_rate=0.9, bound="lower")  # 10/10: Wilson low is 0.72
    assert "pass rate 0.722 < 0.9 (lower" in str(caught.value)
    mixed = report("mixed", {"a": [True, False], "b": [True, True]})
    with pytest.raises(EvalThresholdError) as caught:
        assert_thresholds(mixed, pass_rate=0.9, success=1.0, evaluators={"judge": 0.5},
                          pass_hat_k=0.9)
    text = str(caught.value)
    assert "pass rate 0.750 < 0.9" in text and "no evaluator 'judge'" in text
    assert "pass^2 0.500 < 0.9" in text and "a (50%)" in text
    assert "success rate" not in text

"""Dataset rows and experiment logs are files from outside: any JSON in them gives a typed,
clear error (DatasetError, ExperimentLogError) or loads; never a raw TypeError or KeyError."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle.evals import (
    Dataset,
    DatasetError,
    ExperimentLogError,
    read_records,
)
from toolcycle.evals.records import FORMAT, ExperimentLog

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
FIELDS = st.sampled_from(["name", "inputs", "expected_output", "expected_tools", "metadata",
                          "case", "repeat", "succeeded", "status", "scores", "iterations",
                          "cost_usd", "evaluator", "value", "passed", "fingerprint"])
ROWISH = st.dictionaries(FIELDS, JSON, max_size=6) | JSON

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(rows=st.lists(ROWISH, min_size=1, max_size=4))
def test_any_json_rows_load_or_raise_a_dataset_error(tmp_path: Path, rows: list[object]) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    try:
        dataset = Dataset.load(path)
    except DatasetError as exc:
        assert exc.problems and all(p.startswith("line ") for p in exc.problems)
        return
    dataset.save(tmp_path / "again.jsonl")
    assert Dataset.load(tmp_path / "again.jsonl").cases == dataset.cases


@SETTINGS
@given(lines=st.lists(ROWISH, min_size=1, max_size=3))
def test_any_json_in_a_log_is_refused_with_a_log_error(tmp_path: Path,
                                                        lines: list[object]) -> None:
    path = tmp_path / "log.jsonl"
    header = {"format": FORMAT, "experiment": "x", "evaluators": [], "identity": ""}
    path.write_text("".join(json.dumps(item) + "\n" for item in [header, *lines]))
    cases = Dataset.of([{"name": "a", "inputs": "x"}])
    with contextlib.suppress(ExperimentLogError):
        ExperimentLog.open(path, "x", [], cases).close()
    with contextlib.suppress(ExperimentLogError):
        read_records(path)


def test_yaml_values_that_are_not_json_still_save(tmp_path: Path) -> None:
    source = tmp_path / "cases.yaml"
    source.write_text("cases:\n  - name: dated\n    inputs: hi\n    metadata: {when: 2026-12-05}\n")
    dataset = Dataset.load(source)
    dataset.save(tmp_path / "cases.jsonl")
    assert Dataset.load(tmp_path / "cases.jsonl")["dated"].metadata == {"when": "2026-12-05"}

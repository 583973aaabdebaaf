"""Datasets: JSONL and YAML round trips, and one clear error listing every bad row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle.evals import Case, Dataset, DatasetError, ExpectedCall

ROWS = [
    {"name": "greet-ada", "inputs": "Say hello to Ada", "expected_output": "Hello, Ada",
     "expected_tools": [{"name": "sayHello", "args": {"personName": "Ada"}}],
     "metadata": {"kind": "greet", "split": "train"}},
    {"name": "order", "inputs": {"customer": "C-1", "days": 3}, "expected_output": {"eta": 3},
     "expected_tools": ["find_customer", "latest_order"], "metadata": {"kind": "orders"}},
    {"name": "plain", "inputs": "What is 2+2?"},
]


@pytest.mark.parametrize("suffix", [".jsonl", ".yaml", ".yml"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    dataset = Dataset.of(ROWS, name="demo")
    path = tmp_path / f"cases{suffix}"
    dataset.save(path)
    loaded = Dataset.load(path)
    assert loaded.cases == dataset.cases
    assert loaded.name == "cases"
    order = loaded["order"]
    assert order.inputs == {"customer": "C-1", "days": 3}
    assert order.expected_tools == (ExpectedCall("find_customer"), ExpectedCall("latest_order"))
    assert order.kind == "orders" and loaded["plain"].kind == ""


def test_every_bad_jsonl_row_is_listed_in_one_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(ROWS[0]),
        "{not json",
        json.dumps({"inputs": "no name"}),
        "",
        json.dumps({"name": "x", "inputs": 42, "expected_tools": "sayHello"}),
        json.dumps(["a", "list"]),
        json.dumps({"name": "greet-ada", "inputs": "again"}),
        json.dumps({"name": "y", "input": "typo", "metadata": []}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        Dataset.load(path)
    error = caught.value
    text = str(error)
    assert text.startswith(f"{path}: ")
    where = [problem.split(":")[0] for problem in error.problems]
    assert where == ["line 2", "line 3", "line 5", "line 5", "line 6", "line 7", "line 8",
                     "line 8", "line 8"]
    assert "not JSON" in error.problems[0]
    assert "'name' must be a non-empty string" in error.problems[1]
    assert "'inputs' must be a string" in error.problems[2]
    assert "'expected_tools' must be a list" in error.problems[3]
    assert "expected an object" in error.problems[4]
    assert "already used by line 1" in error.problems[5]
    assert "unknown field 'input'" in error.problems[6]
    assert len(error.problems) == 9 and "9 problems" in text


def test_every_bad_yaml_case_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("cases:\n  - name: ok\n    inputs: hi\n  - name: broken\n"
                    "  - inputs: hello\n    expected_tools: [{args: {}}]\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        Dataset.load(path)
    assert [p.split(":")[0] for p in caught.value.problems] == [
        "case 2 ('broken')", "case 3", "case 3"]
    assert "expected_tools' item 1" in caught.value.problems[2]


@pytest.mark.parametrize(("text", "problem"), [
    ("a: [1, 2", "not YAML"),
    ("just text", "expected a 'cases:' list"),
])
def test_unreadable_yaml(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=problem):
        Dataset.load(path)


def test_missing_and_wrong_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        Dataset.load(tmp_path / "none.jsonl")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DatasetError, match=r"\.jsonl, \.yaml"):
        Dataset.load(tmp_path / "x.csv")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DatasetError, match="cannot be read"):
        Dataset.load(tmp_path / "bin.jsonl")


def test_duplicate_names_in_direct_construction() -> None:
    with pytest.raises(DatasetError, match="used more than once"):
        Dataset((Case("a", "x"), Case("a", "y")))


def test_split_by_metadata_and_by_seeded_shuffle_within_kinds() -> None:
    tagged = Dataset.of([{"name": f"c{i}", "inputs": "x",
                          "metadata": {"split": "train" if i % 3 else "test"}}
                         for i in range(6)])
    _, test = tagged.split()
    assert [c.name for c in test] == ["c0", "c3"]
    cases = Dataset.of([{"name": f"{kind}{i}", "inputs": "x", "metadata": {"kind": kind}}
                        for kind in ("a", "b") for i in range(4)])
    first, second = cases.split(0.5, seed=1)
    assert first.cases == cases.split(0.5, seed=1)[0].cases  # same seed, same split
    for kind in ("a", "b"):
        assert sum(c.kind == kind for c in first) == 2
    assert {c.name for c in first} | {c.name for c in second} == {c.name for c in cases}


def test_of_takes_case_objects_as_its_docstring_says() -> None:
    """A subset of a dataset, built from its cases, is a dataset (it was refused: "expected an
    object with 'name' and 'inputs', got Case")."""
    full = Dataset.of(ROWS, name="demo")
    subset = Dataset.of([c for c in full if c.name != "plain"], name="demo")
    assert [c.name for c in subset] == ["greet-ada", "order"]
    assert subset.cases == full.cases[:2]
    with pytest.raises(DatasetError, match="already used"):
        Dataset.of([full.cases[0], ROWS[0]])

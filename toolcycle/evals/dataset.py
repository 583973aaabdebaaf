"""A dataset of cases: what to ask the agent, and what a right answer looks like.

A :class:`Case` holds the inputs (the user's message, or a task input for an agent with an
input type), the expected output, the expected tool trajectory and free metadata, of which
``kind`` (what sort of task it is, for per-kind reports) and ``split`` (``train``/``test``,
for the playbook A/B) have a meaning here. Datasets are read from and written to JSONL (one
case per line) and YAML (a ``cases:`` list; needs PyYAML, ``pip install 'toolcycle[yaml]'``).

Why one error for every bad row: a dataset is edited by hand, and fixing one row per run
("line 3 ... now line 9 ... now line 14") wastes a run each time. :class:`DatasetError` lists
every problem at once, each with its line (JSONL) or case number (YAML) and what is wrong.
"""

from __future__ import annotations

import importlib
import json
import os
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ToolcycleError

#: The fields a case row may have; any other key is a typo worth reporting.
CASE_FIELDS = ("name", "inputs", "expected_output", "expected_tools", "metadata")


class DatasetError(ToolcycleError, ValueError):
    """A dataset that cannot be used; ``problems`` lists every bad row, each with where it is."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = "\n".join(f"  - {problem}" for problem in self.problems)
        super().__init__(f"{source}: {len(self.problems)} problem"
                         f"{'s' if len(self.problems) != 1 else ''}:\n{lines}")


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """One call of an expected tool trajectory: a tool name and, optionally, its arguments
    (``None``: any arguments)."""

    name: str
    args: Mapping[str, Any] | None = None

    def to_data(self) -> dict[str, Any] | str:
        return self.name if self.args is None else {"name": self.name, "args": dict(self.args)}


@dataclass(frozen=True, slots=True)
class Case:
    """One thing to ask the agent, and what a right answer looks like.

    ``inputs``: the user's message (a string) or a task input (a mapping, passed as
    ``agent.run(input=...)``). ``expected_output`` and ``expected_tools`` are read by the
    evaluators that need them; ``metadata["kind"]`` groups cases in reports.
    """

    name: str
    inputs: str | Mapping[str, Any]
    expected_output: Any = None
    expected_tools: tuple[ExpectedCall, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """What sort of task this is (``metadata["kind"]``), ``""`` when not said."""
        kind = self.metadata.get("kind", "")
        return kind if isinstance(kind, str) else str(kind)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "inputs": _plain(self.inputs)}
        if self.expected_output is not None:
            data["expected_output"] = self.expected_output
        if self.expected_tools is not None:
            data["expected_tools"] = [call.to_data() for call in self.expected_tools]
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_data(cls, data: Any) -> Case:
        """A case from a row; raises :class:`ValueError` listing what is wrong with it."""
        problems, case = _parse_case(data)
        if case is None:
            raise ValueError("; ".join(problems))
        return case


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _parse_case(data: Any) -> tuple[list[str], Case | None]:
    """Every problem of one row, and the case when there is none."""
    if not isinstance(data, Mapping):
        return [f"expected an object with 'name' and 'inputs', got {type(data).__name__}"], None
    problems = [f"unknown field {key!r} (fields: {', '.join(CASE_FIELDS)})"
                for key in data if key not in CASE_FIELDS]
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("'name' must be a non-empty string")
    inputs = data.get("inputs")
    if not isinstance(inputs, str | Mapping):
        problems.append("'inputs' must be a string (the message) or an object (a task input)"
                        + ("" if "inputs" in data else ", and is missing"))
    metadata = data.get("metadata", {})
    if not isinstance(metadata, Mapping):
        problems.append(f"'metadata' must be an object, got {type(metadata).__name__}")
    tools, tool_problems = _parse_trajectory(data.get("expected_tools"))
    problems += tool_problems
    if problems:
        return problems, None
    assert isinstance(name, str) and isinstance(inputs, str | Mapping)
    return [], Case(name, inputs, data.get("expected_output"), tools, dict(metadata))


def _parse_trajectory(raw: Any) -> tuple[tuple[ExpectedCall, ...] | None, list[str]]:
    if raw is None:
        return None, []
    if not isinstance(raw, list):
        return None, ["'expected_tools' must be a list of tool names or {name, args} objects"]
    calls: list[ExpectedCall] = []
    problems: list[str] = []
    for index, item in enumerate(raw, start=1):
        if isinstance(item, str) and item:
            calls.append(ExpectedCall(item))
        elif (isinstance(item, Mapping) and isinstance(item.get("name"), str)
              and isinstance(item.get("args", {}), Mapping)):
            args = item.get("args")
            calls.append(ExpectedCall(item["name"], dict(args) if args is not None else None))
        else:
            problems.append(f"'expected_tools' item {index} must be a tool name or "
                            "{\"name\": ..., \"args\": {...}}")
    return tuple(calls), problems


@dataclass(frozen=True, slots=True)
class Dataset:
    """Cases with unique names, in order. Build one from cases, or read one from a file."""

    cases: tuple[Case, ...]
    name: str = "dataset"

    def __post_init__(self) -> None:
        counts = Counter(case.name for case in self.cases)
        duplicates = [name for name, count in counts.items() if count > 1]
        if duplicates:
            raise DatasetError(self.name, [f"case name {name!r} is used more than once"
                                           for name in duplicates])

    @classmethod
    def of(cls, cases: Iterable[Case | Mapping[str, Any]], name: str = "dataset") -> Dataset:
        """Cases given as :class:`Case` objects or rows (every bad row reported at once).

        A :class:`Case` goes through the rows' checks as its data, so a dataset built from
        another dataset's cases (a subset of one) is checked like any other."""
        rows = [(f"case {i}", item.to_data() if isinstance(item, Case) else item)
                for i, item in enumerate(cases, start=1)]
        return cls(_cases(name, rows), name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Dataset:
        """Read ``.jsonl`` (one case per line) or ``.yaml``/``.yml`` (a ``cases:`` list)."""
        source = Path(path)
        try:
            text = source.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise DatasetError(str(path), ["no such file"]) from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise DatasetError(str(path), [f"cannot be read: {exc}"]) from exc
        if source.suffix in (".yaml", ".yml"):
            rows = _yaml_rows(str(path), text)
        elif source.suffix == ".jsonl":
            rows = _jsonl_rows(text)
        else:
            raise DatasetError(str(path), ["expected a .jsonl, .yaml or .yml file"])
        return cls(_cases(str(path), rows), source.stem)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``.jsonl`` or ``.yaml``/``.yml``, as :meth:`load` reads them back."""
        target = Path(path)
        rows = [case.to_data() for case in self.cases]
        if target.suffix in (".yaml", ".yml"):
            yaml = _yaml(str(path))
            text = yaml.safe_dump({"cases": rows}, sort_keys=False, allow_unicode=True)
        elif target.suffix == ".jsonl":
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        else:
            raise DatasetError(str(path), ["expected a .jsonl, .yaml or .yml file"])
        target.write_text(text, encoding="utf-8")

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def __getitem__(self, name: str) -> Case:
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(name)

    def filter(self, **metadata: Any) -> Dataset:
        """The cases whose metadata has every given value (``dataset.filter(split="test")``)."""
        return Dataset(tuple(c for c in self.cases
                             if all(c.metadata.get(k) == v for k, v in metadata.items())),
                       self.name)

    def split(self, train: float = 0.5, *, seed: int = 0) -> tuple[Dataset, Dataset]:
        """(train, test): by ``metadata["split"]`` where every case has one, else a seeded
        shuffle within each kind, so both halves see every kind of case."""
        if self.cases and all(c.metadata.get("split") in ("train", "test") for c in self.cases):
            return self.filter(split="train"), self.filter(split="test")
        rng = random.Random(seed)
        first: list[Case] = []
        second: list[Case] = []
        for kind in dict.fromkeys(c.kind for c in self.cases):
            group = [c for c in self.cases if c.kind == kind]
            rng.shuffle(group)
            cut = round(len(group) * train)
            first += group[:cut]
            second += group[cut:]
        order = {c.name: i for i, c in enumerate(self.cases)}
        return (Dataset(tuple(sorted(first, key=lambda c: order[c.name])), self.name),
                Dataset(tuple(sorted(second, key=lambda c: order[c.name])), self.name))


def _cases(source: str, rows: list[tuple[str, Any]]) -> tuple[Case, ...]:
    """Every row parsed; one :class:`DatasetError` naming each bad row and duplicate name."""
    problems: list[str] = []
    cases: list[Case] = []
    where_named: dict[str, str] = {}
    for where, row in rows:
        if isinstance(row, _Unreadable):
            problems.append(f"{where}: {row.reason}")
            continue
        found, case = _parse_case(row)
        problems += [f"{where}: {problem}" for problem in found]
        if case is None:
            continue
        if case.name in where_named:
            problems.append(f"{where}: case name {case.name!r} is already used by "
                            f"{where_named[case.name]}")
            continue
        where_named[case.name] = where
        cases.append(case)
    if problems:
        raise DatasetError(source, problems)
    return tuple(cases)


@dataclass(frozen=True, slots=True)
class _Unreadable:
    reason: str


def _jsonl_rows(text: str) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"line {number}", json.loads(line)))
        except ValueError as exc:
            rows.append((f"line {number}", _Unreadable(f"not JSON ({exc})")))
    return rows


def _yaml_rows(source: str, text: str) -> list[tuple[str, Any]]:
    yaml = _yaml(source)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DatasetError(source, [f"not YAML: {exc}"]) from exc
    # YAML has values JSON has not (dates, times): as text, so that a case is JSON data
    # everywhere it goes (the experiment log, reports, a JSONL copy)
    data = json.loads(json.dumps(data, default=str))
    cases = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(cases, list):
        raise DatasetError(source, ["expected a 'cases:' list (or a list of cases)"])
    return [(f"case {i}" + _yaml_line(item), item) for i, item in enumerate(cases, start=1)]


def _yaml_line(item: Any) -> str:
    """PyYAML keeps no line numbers on plain data; the case's name says which one it is."""
    name = item.get("name") if isinstance(item, dict) else None
    return f" ({name!r})" if isinstance(name, str) else ""


def _yaml(source: str) -> Any:
    try:  # imported by name: PyYAML is an optional extra and ships no type hints
        return importlib.import_module("yaml")
    except ImportError as exc:
        raise DatasetError(source, ["YAML datasets need PyYAML: pip install 'toolcycle[yaml]'"]
                           ) from exc

"""The experiment log: one JSON line per finished (case, repeat), written as it finishes.

Why a log, and why this shape: an eval on a real model runs for minutes to hours, and a kill
(a laptop lid, a CI timeout, Ctrl-C) must not throw that away. Each run's record is appended
and flushed the moment its scores exist, so after a kill the log holds every finished run; a
resumed experiment reads it, skips exactly those (case, repeat) keys and runs the rest. The
record is written only after the run and its evaluation are complete, so nothing half-done is
ever taken for done, and a run in flight at the kill is simply run again.

The first line is a header naming the experiment and its evaluators: a log written with other
evaluators, or holding a case whose content changed since (each record keeps a fingerprint of
its case), is refused with a clear error instead of mixing two experiments' scores. A torn last
line (the process killed mid-write) is cut off and that run is redone; a bad line anywhere
else is an error, as it means the file is not what it claims to be.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import ToolcycleError
from .dataset import Case
from .evaluators import Score

FORMAT = "toolcycle.evals/1"


class ExperimentLogError(ToolcycleError, ValueError):
    """The log file cannot be resumed from (a message says which line and why)."""


def fingerprint(case: Case) -> str:
    """A short hash of the case's content: a record of an edited case is not a record of it."""
    text = json.dumps(case.to_data(), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of one case: its outcome, scores and cost, as the log and the reports keep it.

    ``repeat`` is 1-based. ``succeeded`` is ``result.succeeded`` (the model answered on its
    own and the answer passed, docs/status.md); a run that raised has ``succeeded=False``
    and its ``error``. ``cost_usd`` is ``None`` where the model's price is unknown.
    """

    case: str
    repeat: int
    succeeded: bool
    status: str
    scores: tuple[Score, ...] = ()
    output: Any = None
    error: str | None = None
    iterations: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    run_id: str | None = None
    tools: tuple[str, ...] = ()
    kind: str = ""
    fingerprint: str = ""

    @property
    def key(self) -> tuple[str, int]:
        return self.case, self.repeat

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def score(self, evaluator: str) -> Score | None:
        return next((s for s in self.scores if s.evaluator == evaluator), None)

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "repeat": self.repeat, "succeeded": self.succeeded,
                "status": self.status, "scores": [s.to_dict() for s in self.scores],
                "output": self.output, "error": self.error, "iterations": self.iterations,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd, "latency_s": self.latency_s, "run_id": self.run_id,
                "tools": list(self.tools), "kind": self.kind, "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        """A record from its JSON form; raises ``ValueError`` (``TypeError``/``KeyError`` on
        a malformed record are turned into it) saying what is missing."""
        try:
            scores = tuple(Score(str(s["evaluator"]), float(s["value"]), bool(s["passed"]),
                                 str(s.get("reason", ""))) for s in data["scores"])
            cost = data.get("cost_usd")
            return cls(
                case=_text(data["case"]), repeat=_count(data["repeat"]),
                succeeded=bool(data["succeeded"]), status=str(data["status"]), scores=scores,
                output=data.get("output"), error=data.get("error"),
                iterations=_count(data.get("iterations", 0)),
                input_tokens=_count(data.get("input_tokens", 0)),
                output_tokens=_count(data.get("output_tokens", 0)),
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                latency_s=float(data.get("latency_s", 0.0)), run_id=data.get("run_id"),
                tools=tuple(str(t) for t in data.get("tools", ())),
                kind=str(data.get("kind", "")), fingerprint=str(data.get("fingerprint", "")))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a run record ({type(exc).__name__}: {exc})") from exc


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"expected a number, got {value!r}")
    return int(value)


@dataclass
class ExperimentLog:
    """The JSONL log of one experiment: read what is done, then append as runs finish."""

    path: Path | None  # None: kept in memory only
    name: str
    evaluators: Sequence[str]
    #: what ran (the CLI: a hash of the spec, tools and model): a log of another agent is
    #: refused rather than taken for this one's finished runs
    identity: str = ""
    records: dict[tuple[str, int], RunRecord] = field(default_factory=dict)
    _handle: IO[str] | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], name: str, evaluators: Sequence[str],
             cases: Iterable[Case], identity: str = "") -> ExperimentLog:
        """Read the records already in ``path`` (cutting a torn last line), checked against
        the experiment's evaluators and cases; a new file gets the header."""
        target = Path(path)
        log = cls(target, name, list(evaluators), identity)
        known = {case.name: fingerprint(case) for case in cases}
        if target.exists() and target.stat().st_size:
            log._read(known)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            log._append(log.header())
        return log

    def _read(self, known: dict[str, str]) -> None:
        assert self.path is not None
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        keep = len(data)
        if lines[-1] != b"":  # no newline at the end: the last write was cut short
            keep -= len(lines[-1])
        lines.pop()
        if not lines:  # killed while writing the header itself
            self.path.write_bytes(b"")
            self._append(self.header())
            return
        for number, raw in enumerate(lines, start=1):
            try:
                item = json.loads(raw)
            except ValueError as exc:
                raise ExperimentLogError(f"{self.path}: line {number} is not JSON") from exc
            if number == 1:
                self._check_header(item)
                continue
            try:
                record = RunRecord.from_dict(item)
            except ValueError as exc:
                raise ExperimentLogError(f"{self.path}: line {number}: {exc}") from exc
            if known.get(record.case) != record.fingerprint:
                raise ExperimentLogError(
                    f"{self.path}: line {number} records case {record.case!r}, which the "
                    "dataset no longer has as it was (removed or edited since); write this "
                    "experiment to another log")
            self.records[record.key] = record
        if keep < len(data):
            with open(self.path, "r+b") as handle:
                handle.truncate(keep)

    def header(self) -> dict[str, Any]:
        return {"format": FORMAT, "experiment": self.name, "evaluators": list(self.evaluators),
                "identity": self.identity}

    def _check_header(self, item: Any) -> None:
        if not isinstance(item, dict) or item.get("format") != FORMAT:
            raise ExperimentLogError(f"{self.path}: line 1 is not an experiment log header "
                                     f"(format {FORMAT!r})")
        if list(item.get("evaluators", [])) != list(self.evaluators):
            raise ExperimentLogError(
                f"{self.path}: written with evaluators {item.get('evaluators')}, this "
                f"experiment has {list(self.evaluators)}; write it to another log")
        if str(item.get("identity", "")) != self.identity:
            raise ExperimentLogError(
                f"{self.path}: written by another agent (identity {item.get('identity')!r}, "
                f"this experiment is {self.identity!r}: the spec, tools or model changed); "
                "write it to another log")

    def add(self, record: RunRecord) -> None:
        """Append and flush one finished run (a second record for a key is a bug: raise)."""
        if record.key in self.records:
            raise ExperimentLogError(f"{record.key} is already recorded in {self.path}")
        self.records[record.key] = record
        self._append(record.to_dict())

    def _append(self, item: dict[str, Any]) -> None:
        if self.path is None:
            return
        if self._handle is None:
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        self._handle.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_records(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[RunRecord]]:
    """The header and records of a finished log (for reports and comparisons later)."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
    if not lines:
        raise ExperimentLogError(f"{path}: empty experiment log")
    try:
        header = json.loads(lines[0])
        records = [RunRecord.from_dict(json.loads(line)) for line in lines[1:]]
    except ValueError as exc:
        raise ExperimentLogError(f"{path}: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ExperimentLogError(f"{path}: not an experiment log (format {FORMAT!r})")
    return header, records

"""A person's decisions about the calls a batch's paused inputs wait on.

A paused input's record lists its ``pending`` calls (call id, tool, arguments) and keeps the
run's ``snapshot``. ``toolcycle batch ... --resume`` with ``--approve``/``--deny`` or an
``--approvals FILE`` resumes each paused input whose every pending call the decisions answer;
the others stay paused. A decision names all paused inputs (``all``), one input line
(``12``) or one call of a line (``12:call_1``); the most specific decision wins, and two
contrary decisions about the same thing are refused before anything runs. A decision in a
file may also quote the call's ``arguments``: it then applies only to a call with exactly those
arguments, so a file written for one pause cannot approve a different call.

The batch resumes a snapshot at most once itself (a ``resuming`` entry in the output file, see
:mod:`.records`), under the output's lock.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..approval import ApprovalAnswer
from ..errors import ConfigurationError

#: The reason the model reads for a call denied without one.
DEFAULT_DENIAL = "denied by the batch's operator"


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    """One decision: ``answer`` (True, or the reason to deny) for the calls it names."""

    answer: ApprovalAnswer
    line: int | None = None  #: None: every paused input
    call_id: str | None = None  #: None: every pending call of the line
    arguments: dict[str, Any] | None = None  #: when given, the call's arguments must equal it

    @property
    def specificity(self) -> int:
        return ((self.line is not None) + (self.call_id is not None)
                + (self.arguments is not None))

    def names(self, line: int, call: dict[str, Any]) -> bool:
        return ((self.line is None or self.line == line)
                and (self.call_id is None or self.call_id == call.get("call_id"))
                and (self.arguments is None or self.arguments == call.get("arguments")))


@dataclass(frozen=True, slots=True)
class BatchApprovals:
    """The decisions a resumed batch applies to its paused inputs."""

    rules: tuple[ApprovalRule, ...] = ()

    def __post_init__(self) -> None:
        problems = []
        seen: dict[tuple[int | None, str | None, str], ApprovalRule] = {}
        for rule in self.rules:
            if rule.call_id is not None and rule.line is None:
                problems.append(f"a decision about call {rule.call_id!r} must name its line")
            if rule.answer is not True and not (isinstance(rule.answer, str)
                                                and rule.answer.strip()):
                problems.append(f"a decision must approve (true) or give a reason to deny, "
                                f"got {rule.answer!r}")
            where = (rule.line, rule.call_id, json.dumps(rule.arguments, sort_keys=True))
            other = seen.setdefault(where, rule)
            if (other.answer is True) != (rule.answer is True):
                problems.append(f"contrary decisions about {_describe(rule)}")
        if problems:
            raise ConfigurationError(problems, subject="batch approvals")

    @classmethod
    def from_options(cls, approve: list[str], deny: list[str], reason: str | None = None,
                     file: str | os.PathLike[str] | None = None) -> BatchApprovals:
        """Decisions from the command line (``all``, ``LINE``, ``LINE:CALL_ID``) and a file of
        JSON lines ``{"line": 12, "call_id": "call_1", "approve": true}`` or
        ``{"line": 12, "deny": "why"}`` (``call_id`` and ``arguments`` optional)."""
        problems: list[str] = []
        rules = [_from_selector(text, True, problems) for text in approve]
        rules += [_from_selector(text, reason or DEFAULT_DENIAL, problems) for text in deny]
        if file is not None:
            rules += _from_file(file, problems)
        if problems:
            raise ConfigurationError(problems, subject="batch approvals")
        return cls(tuple(rule for rule in rules if rule is not None))

    def answers(self, line: int, pending: list[dict[str, Any]]) -> dict[str, ApprovalAnswer] | None:
        """``call_id -> answer`` for every pending call of a paused input, or None when some
        call has no decision (the input stays paused)."""
        found: dict[str, ApprovalAnswer] = {}
        for call in pending:
            rules = [rule for rule in self.rules if rule.names(line, call)]
            if not rules:
                return None
            found[str(call.get("call_id"))] = max(rules, key=lambda r: r.specificity).answer
        return found


def _describe(rule: ApprovalRule) -> str:
    if rule.line is None:
        return "all paused inputs"
    return f"line {rule.line}" + (f" call {rule.call_id}" if rule.call_id else "")


def _from_selector(text: str, answer: ApprovalAnswer, problems: list[str]) -> ApprovalRule | None:
    if text == "all":
        return ApprovalRule(answer)
    line, _, call_id = text.partition(":")
    if not line.isdigit() or int(line) < 1 or (_ and not call_id):
        problems.append(f"{text!r}: expected 'all', a line number or LINE:CALL_ID")
        return None
    return ApprovalRule(answer, int(line), call_id or None)


def _from_file(path: str | os.PathLike[str], problems: list[str]) -> list[ApprovalRule]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"cannot read the approvals file {path}: {exc}")
        return []
    rules = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            problems.append(f"{path}: line {number} is not JSON")
            continue
        rule = _rule_of(data)
        if isinstance(rule, str):
            problems.append(f"{path}: line {number}: {rule}")
        else:
            rules.append(rule)
    return rules


def _rule_of(data: object) -> ApprovalRule | str:
    """A rule from one line of an approvals file, or what is wrong with it."""
    if not isinstance(data, dict):
        return "expected an object"
    unknown = set(data) - {"line", "call_id", "approve", "deny", "arguments"}
    if unknown:
        return f"unknown fields {sorted(unknown)}"
    if ("approve" in data) == ("deny" in data):
        return "give exactly one of 'approve': true or 'deny': \"reason\""
    if "approve" in data and data["approve"] is not True:
        return "'approve' must be true (to deny, give 'deny' with a reason)"
    answer: ApprovalAnswer = True if "approve" in data else data["deny"]
    if "deny" in data and not (isinstance(answer, str) and answer.strip()):
        return "'deny' must be a non-empty reason"
    line, call_id, arguments = data.get("line"), data.get("call_id"), data.get("arguments")
    if line is not None and not (isinstance(line, int) and not isinstance(line, bool)
                                 and line >= 1):
        return "'line' must be a line number"
    if call_id is not None and not isinstance(call_id, str):
        return "'call_id' must be a string"
    if arguments is not None and not isinstance(arguments, dict):
        return "'arguments' must be an object"
    return ApprovalRule(answer, line, call_id, arguments)

"""A user with a playbook and no read-only tool is told what they miss: once, in the log, and
in the learning session's report and the evals' playbook A/B (issue 69: the docs' own example
declared no lookup read-only, so its probes never ran and one kind was never learned)."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, tool
from toolcycle.evals import Contains, Dataset, playbook_ab
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.read_only import missing_read_only
from toolcycle.testing import ScriptedModel, call


def stock(item: str) -> str:
    """Units on hand of an item."""
    return f"{item}: 12 units"


def ledger(item: str) -> str:
    """The warehouse ledger."""
    return f"{item}: 12"


def _name() -> str:
    return f"desk-{uuid.uuid4().hex[:6]}"  # the warning is once per agent name and process


def _notes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "toolcycle.playbook" and "read-only" in r.getMessage()]


def test_an_agent_with_no_read_only_tool_is_warned_once(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "toolcycle.playbook")
    pb = Playbook(tmp_path / "pb.db")
    name = _name()
    for _ in range(3):  # built again and again: told once
        Agent(ScriptedModel(["ok"]), "Look up.", [stock, ledger], name=name, playbook=pb)
    [note] = _notes(caplog)
    assert name in note and "runs no probes" in note
    assert "read_only=True" in note and "trust_hints=True" in note
    assert "routine" in note


def test_one_read_only_tool_is_enough_and_no_playbook_no_note(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "toolcycle.playbook")
    pb = Playbook(tmp_path / "pb.db")
    Agent(ScriptedModel(["ok"]), "Look up.", [stock, tool(read_only=True)(ledger)],
          name=_name(), playbook=pb)
    Agent(ScriptedModel(["ok"]), "Look up.", [stock, ledger], name=_name())
    assert _notes(caplog) == []
    assert missing_read_only("x", {}) is None  # no tools yet (an MCP server's come later)


async def test_the_learning_report_says_what_could_not_run(tmp_path: Path) -> None:
    pb = Playbook(tmp_path / "pb.db")
    task = LearningTask("t1", "How many units of chisels?", "12")
    model = ScriptedModel([call("stock", {"item": "chisel"}), "12 units"])
    agent = Agent(model, "Look up.", [stock, ledger], name=_name(), playbook=pb)
    report = await learn([task], agent, playbook=pb, progress=False)
    [note] = report.notes
    assert "none of its 2 tools is declared read-only" in note and "no probes" in note
    pb2 = Playbook(tmp_path / "pb2.db")
    model = ScriptedModel([call("stock", {"item": "chisel"}), "12 units"])
    agent = Agent(model, "Look up.", [tool(read_only=True)(stock), ledger], name=_name(),
                  playbook=pb2)
    assert (await learn([task], agent, playbook=pb2, progress=False)).notes == []


async def test_the_playbook_ab_carries_the_note(tmp_path: Path) -> None:
    rows = [{"name": f"c{i}", "inputs": f"units of item{i}?", "expected_output": f"item{i}",
             "metadata": {"kind": "stock", "split": split}}
            for i, split in enumerate(["train", "test"])]
    name = _name()

    def make_agent(playbook: Playbook | None) -> Agent[Any, str]:
        model = ScriptedModel(lambda messages, settings: "item0 item1: 12")
        return Agent(model, "Look up.", [stock], name=name, playbook=playbook)

    result = await playbook_ab(make_agent, Dataset.of(rows), [Contains()],
                               playbook=tmp_path / "pb.db")
    assert any("declared read-only" in note for note in result.notes)
    assert "declared read-only" in result.render()

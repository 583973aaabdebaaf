"""``toolcycle playbook show|stats|learn|prune|export`` on a real playbook file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcycle.cli import main
from toolcycle.playbook import Playbook, Strategy

from .conftest import make_trace

AGENT_MODULE = '''
from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel, call


def lookup(key: str) -> str:
    """Look a key up."""
    return "value-" + key


def policy(messages, settings):
    if messages[-1].role == "tool":
        return "answer: " + messages[-1].parts[0].content
    return call("lookup", {"key": "k"})


def make_agent():
    return Agent(ScriptedModel(policy), "Use lookup.", [lookup], name="cli_agent")
'''


@pytest.fixture
def playbook_file(tmp_path: Path) -> str:
    db = str(tmp_path / "pb.db")
    pb = Playbook(db)
    pb.store.put([
        Strategy(id="s-good", domain="support", advice="Call find_ticker, then get_quote.",
                 tools=["find_ticker", "get_quote"], applies_when=["stock"], helpful=5),
        Strategy(id="s-bad", domain="support", advice="Call get_quote directly.",
                 tools=["get_quote"], applies_when=["stock"], helpful=0, harmful=6),
    ])
    pb.observe(make_trace("x", [[("get_quote", {"ticker": "A"}, None, "timed out")]]))
    pb.close()
    return db


def test_show_lists_strategies_best_first(playbook_file: str, capsys: Any) -> None:
    assert main(["playbook", "show", "--db", playbook_file]) == 0
    out = capsys.readouterr().out
    assert out.index("s-good") < out.index("s-bad")
    assert "2 strategies" in out


def test_show_names_a_sequences_routine_and_its_rule_with_hostile_anchors_quoted(
        tmp_path: Path, capsys: Any) -> None:
    db = str(tmp_path / "pb.db")
    pb = Playbook(db)
    feeds = [[{"arg": "currency", "left": "X: code\x1b[31m ", "value": v, "right": "",
               "whole_left": True, "whole_right": True}] for v in ("FDK", "SYK")]
    pb.store.put([Strategy(id="s-chain", domain="d", advice="Call a, then b.",
                           tools=["country_info", "exchange_rate"], support=3, feeds=feeds)])
    pb.close()
    assert main(["playbook", "show", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "routine: country_info_then_exchange_rate: currency of exchange_rate" in out
    assert '"(end)"' in out and "\x1b" not in out


def test_stats_prints_the_tool_table(playbook_file: str, capsys: Any) -> None:
    assert main(["playbook", "stats", "--db", playbook_file]) == 0
    [row] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("get_q")]
    assert row.split()[:5] == ["get_quote", "1", "1", "0", "100%"]


def test_prune_retires_harmful_strategies(playbook_file: str, capsys: Any) -> None:
    assert main(["playbook", "prune", "--db", playbook_file, "--purge"]) == 0
    out = capsys.readouterr().out
    assert "retire s-bad" in out and "deleted 1 retired" in out
    assert [s.id for s in Playbook(playbook_file).strategies(status=None)] == ["s-good"]


def test_export_json_round_trips(playbook_file: str, capsys: Any) -> None:
    assert main(["playbook", "export", "--db", playbook_file]) == 0
    exported = [Strategy.from_dict(d) for d in json.loads(capsys.readouterr().out)]
    assert {s.id for s in exported} == {"s-good", "s-bad"}
    assert main(["playbook", "export", "--db", playbook_file, "--format", "markdown"]) == 0
    assert "## support" in capsys.readouterr().out


def test_learn_runs_the_agent_over_the_tasks_and_resumes(
    tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    (tmp_path / "cli_agent_mod.py").write_text(AGENT_MODULE)
    tasks = [{"id": f"t{i}", "prompt": f"look up k for {who}", "expected": "value-k"}
             for i, who in enumerate(["ann", "bob", "cyd"])]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    monkeypatch.chdir(tmp_path)
    args = ["playbook", "learn", "--db", "pb.db", "--agent", "cli_agent_mod:make_agent",
            "--tasks", "tasks.json", "--session", "s1"]
    assert main(args) == 0
    assert "3 tasks (0 done earlier), success 100%" in capsys.readouterr().out
    [strategy] = Playbook("pb.db").strategies("cli_agent")
    assert strategy.tools == ["lookup"] and strategy.support == 3
    assert main(args) == 0
    assert "3 tasks (3 done earlier)" in capsys.readouterr().out


def test_a_missing_playbook_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no playbook"):
        main(["playbook", "show", "--db", str(tmp_path / "none.db")])

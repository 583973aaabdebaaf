"""The status vocabulary where people read runs (docs/status.md): the trace store (its column,
its filter, and stores written before the vocabulary), ``toolcycle trace list``/``show`` and the
HTML viewer's badge. Before, a forced answer was stored, listed and badged as a green
"success"."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, Limits, tool
from toolcycle.cli import main
from toolcycle.models.base import ModelSettings
from toolcycle.status import NOT_SUCCESS
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.html import render_comparison_html, render_html
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Trace

ERROR = "Tool `lookup` failed: ValueError: 'Atlantis' is not in the atlas we have"


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def lookup(city: str) -> str:
    """Find a city."""
    raise ValueError(f"{city!r} is not in the atlas we have")


def _forced(_messages: Any, settings: ModelSettings) -> Any:
    return "a guess" if settings.tool_choice == "none" else call("ping")


async def _record(location: str) -> dict[str, str]:
    """One run of each returned status, recorded by the agent into ``location``."""
    runs = {
        "success": dict(model=ScriptedModel([call("ping"), "pong"]), tools=[ping]),
        "forced": dict(model=ScriptedModel(_forced), tools=[ping],
                       limits=Limits(max_iterations=1)),
        "partial": dict(model=ScriptedModel(_forced), tools=[ping],
                        limits=Limits(max_iterations=1, on_limit="partial")),
        "tool_error": dict(model=ScriptedModel([call("lookup", {"city": "Atlantis"}), ERROR]),
                           tools=[lookup]),
    }
    ids = {}
    with TraceStore(location) as store:
        for status, settings in runs.items():
            result = await Agent(**settings, name=status, trace_store=store).run("go")
            assert result.status == status
            ids[status] = result.run_id
    return ids


async def test_the_store_keeps_and_filters_each_status(db_location: str) -> None:
    ids = await _record(db_location)
    with TraceStore(db_location) as store:
        for status, run_id in ids.items():
            trace = store.get(run_id)
            assert trace is not None and trace.status == status
            [summary] = store.list(status=status)
            assert summary.run_id == run_id and summary.succeeded is (status == "success")
        failed = {r.run_id for r in store.list(status=NOT_SUCCESS)}
        assert failed == {ids["forced"], ids["partial"], ids["tool_error"]}
        assert store.list(status=[]) == []


async def test_a_store_written_before_the_vocabulary_is_brought_up_to_date(
        db_location: str) -> None:
    """Rows an older toolcycle wrote say "success" for a forced, a partial and a tool-error
    run: opening the store re-reads them once, and marks it done."""
    ids = await _record(db_location)
    with TraceStore(db_location) as store:  # as an older version wrote them
        conn: Any = store._conn
        with conn:
            conn.execute("UPDATE runs SET status = 'success'")
            conn.execute("DELETE FROM trace_store_meta")
    with TraceStore(db_location) as store:
        assert {r.run_id: r.status for r in store.list()} == {v: k for k, v in ids.items()}
        # once marked, a later open does not read the rows again
        conn = store._conn
        with conn:
            conn.execute("UPDATE runs SET status = 'success' WHERE run_id = ?",
                         (ids["forced"],))
    with TraceStore(db_location) as store:
        assert {r.run_id for r in store.list(status="success")} == {ids["success"],
                                                                    ids["forced"]}


def test_a_damaged_old_row_keeps_its_status(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with TraceStore(path) as store:
        store.save(Trace(run_id="damaged", status="success", output="x",
                         termination={"action": "answered"}))
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE runs SET header = '[1, 2'")
        conn.execute("DELETE FROM trace_store_meta")
    conn.close()
    with TraceStore(path) as store:
        assert [r.status for r in store.list()] == ["success"]


@pytest.mark.parametrize("header", [
    "[" * 100_000 + "]" * 100_000,  # deeper than json will go
    json.dumps({"run_id": "hostile", "output": "boom", "termination": {"action": "answered"},
                "status": "success"}),
])
def test_a_crafted_old_row_neither_crashes_the_open_nor_changes(tmp_path: Path,
                                                               header: str) -> None:
    """Untrusted rows: a header too deep to read, steps whose calls hold non-text errors and
    unhashable kinds. Opening the store reads them, leaves them as they are, and opens."""
    path = tmp_path / "crafted.db"
    with TraceStore(path) as store:
        store.save(Trace(run_id="hostile", status="success", output="boom",
                         termination={"action": "answered"}))
    step = {"iteration": 1, "attempt": 1, "tool_calls": [
        {"call_id": "c", "name": "t", "args": {}, "iteration": 1, "error": 7, "kind": []},
        {"call_id": "d", "name": "t", "args": {}, "iteration": 1, "error": ["boom"]}]}
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE runs SET header = ?", (header,))
        conn.execute("INSERT INTO steps (run_id, position, data) VALUES ('hostile', 0, ?)",
                     (json.dumps(step),))
        conn.execute("DELETE FROM trace_store_meta")
    conn.close()
    with TraceStore(path) as store:
        assert [r.status for r in store.list()] == ["success"]


async def test_trace_list_filters_by_status(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "traces.db")
    ids = await _record(db)
    assert main(["trace", "list", "--db", db, "--status", "forced", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["run_id"], r["status"]) for r in rows] == [(ids["forced"], "forced")]
    assert main(["trace", "list", "--db", db, "--status", "forced,tool_error", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["status"] for r in rows} == {"forced", "tool_error"}
    assert main(["trace", "list", "--db", db, "--failed", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["status"] for r in rows} == {"forced", "partial", "tool_error"}
    assert main(["trace", "list", "--db", db]) == 0  # the table shows the word
    table = capsys.readouterr().out
    assert "forced" in table and "tool_error" in table
    with pytest.raises(SystemExit) as bad:
        main(["trace", "list", "--db", db, "--status", "forced,exploded"])
    assert bad.value.code == 2
    assert "exploded" in capsys.readouterr().err
    assert main(["trace", "show", ids["forced"], "--db", db, "--no-color", "--width", "200"]) == 0
    shown = capsys.readouterr().out
    assert "status forced" in shown and "do not trust it as a success" in shown


async def test_the_viewer_badge_is_green_only_for_a_success(tmp_path: Path) -> None:
    db = str(tmp_path / "traces.db")
    ids = await _record(db)
    with TraceStore(db) as store:
        traces = {status: store.get(run_id) for status, run_id in ids.items()}
    pages = {status: render_html(trace) for status, trace in traces.items() if trace}
    assert '<span class="badge success" data-status="success">' in pages["success"]
    for status in ("forced", "partial", "tool_error"):
        page = pages[status]
        assert f'<span class="badge {status}" data-status="{status}">' in page
        assert "badge success" not in page
    assert 'class="panel warn" id="termination"' in pages["forced"]
    assert "limit max_iterations" in pages["forced"]
    assert "do not trust it as a success" in pages["forced"]
    assert 'class="panel error" id="termination"' in pages["tool_error"]
    assert "a tool&#x27;s error text" in pages["tool_error"] or \
        "a tool's error text" in pages["tool_error"]
    both = render_comparison_html(traces["success"], traces["forced"])  # type: ignore[arg-type]
    assert 'data-status="forced"' in both and 'data-status="success"' in both


def test_an_unknown_stored_status_is_shown_as_unknown() -> None:
    page = render_html(Trace(run_id="r", status="forced panel"))
    assert 'class="badge unknown" data-status="forced panel"' in page

"""``toolcycle trace``: snapshot of ``show`` with colours off, list, html and export."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolcycle.cli import main
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Trace

from .sample_traces import failed_trace, weather_trace

SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
def db(db_location: str) -> str:
    """The two sample runs in a SQLite file, then in a PostgreSQL database (``--db URL``)."""
    with TraceStore(db_location) as store:
        store.save(weather_trace())
        store.save(failed_trace())
    return db_location


def _matches_snapshot(name: str, text: str) -> None:
    """Compare with the stored snapshot; ``UPDATE_SNAPSHOTS=1`` rewrites it (review the diff)."""
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("run_id", ["run-weather-0001", "run-search-0002"])
def test_show_matches_snapshot(db: str, run_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", run_id, "--db", db, "--no-color", "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # colours really are off
    _matches_snapshot(f"show-{run_id}.txt", out)


def test_show_is_coloured_when_asked(db: str, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["trace", "show", "run-search", "--db", db, "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[1;31mfailure" in out  # status in bold red
    assert "\x1b[31mTimeoutError" in out  # tool errors in red


def test_show_unknown_and_ambiguous_runs(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", "nope", "--db", db]) == 1
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["trace", "show", "run-", "--db", db]) == 1
    assert "ambiguous" in capsys.readouterr().err


def test_missing_database_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``list`` on a store nobody wrote yet is not an error (nothing was run yet): a friendly
    line and status 0; ``show`` of a run there is (it names a run that is not there)."""
    assert main(["trace", "list", "--db", str(tmp_path / "none.db")]) == 0
    captured = capsys.readouterr()
    assert "no runs recorded yet" in captured.err and "no trace database" in captured.err
    assert captured.out == ""
    assert main(["trace", "show", "--db", str(tmp_path / "none.db"), "r1"]) == 1
    assert "no trace database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_list_table_and_filters(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "list", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["run", "agent", "status", "started", "(UTC)", "iter",
                                "tokens", "in/out", "duration", "termination", "prompt",
                                "answer"]
    assert lines[1].split()[:3] == ["run-search-0002", "searcher", "failure"]
    assert lines[2].split()[:3] == ["run-weather-0001", "weather", "success"]
    assert main(["trace", "list", "--db", db, "--agent", "weather", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["run_id"] for r in rows] == ["run-weather-0001"]
    assert main(["trace", "list", "--db", db, "--status", "failure", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["run_id"], r["status"]) for r in rows] == [("run-search-0002", "failure")]
    assert main(["trace", "list", "--db", db, "--agent", "searcher", "--status", "success"]) == 0
    assert capsys.readouterr().out.strip() == "no runs match"  # the filters combine
    # both sample runs started on 2026-05-28 around 20:26 UTC
    assert main(["trace", "list", "--db", db, "--since", "2026-05-28T20:00+00:00",
                 "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["trace", "list", "--db", db, "--since", "2026-05-29", "--json"]) == 0
    assert capsys.readouterr().out.strip() == ""
    assert main(["trace", "list", "--db", db, "--since", "1h"]) == 0
    assert capsys.readouterr().out.strip() == "no runs match"
    assert main(["trace", "list", "--db", db, "--since", "someday"]) == 2
    with pytest.raises(SystemExit) as bad_status:  # argparse refuses an unknown status
        main(["trace", "list", "--db", db, "--status", "exploded"])
    assert bad_status.value.code == 2


def test_export_json_round_trips(db: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "export", "run-weather-0001", "--db", db, "--format", "json"]) == 0
    exported = Trace.from_json(capsys.readouterr().out)
    assert exported.run_id == "run-weather-0001" and len(exported.steps) == 5
    out = tmp_path / "all.jsonl"
    assert main(["trace", "export", "--all", "--db", db, "--format", "jsonl", "-o", str(out)]) == 0
    assert [json.loads(x)["run_id"] for x in out.read_text().splitlines()] == [
        "run-search-0002", "run-weather-0001"]
    assert main(["trace", "export", "--db", db]) == 2


def test_html_writes_a_page_and_a_comparison(db: str, tmp_path: Path) -> None:
    page = tmp_path / "run.html"
    assert main(["trace", "html", "run-weather", "--db", db, "-o", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "run-weather-0001" in text
    assert "sk-proj" not in text  # the stored trace was redacted
    both = tmp_path / "cmp.html"
    assert main(["trace", "html", "run-weather", "--compare", "run-search", "--db", db,
                 "-o", str(both)]) == 0
    assert 'id="comparison"' in both.read_text()


def test_bulk_export_shows_progress_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "many.db"
    with TraceStore(path) as store:
        for i in range(30):
            store.save(weather_trace(f"run-{i:02d}"))
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich treats the captured stderr as a terminal
    out = tmp_path / "all.json"
    assert main(["trace", "export", "--all", "--db", str(path), "-o", str(out)]) == 0
    assert "loading traces" in capsys.readouterr().err
    assert len(json.loads(out.read_text())) == 30

"""TraceStore on a real SQLite file and a real PostgreSQL database: round trips, filters,
incremental writes, redaction (each store test runs on both backends, see ``db_location``)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from postgres_cluster import stored_bytes

from toolcycle.tracing.redaction import REDACTED, Redactor
from toolcycle.tracing.store import ENV_VAR, TraceStore, parse_since, resolve_trace_store
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

from .sample_traces import T0, failed_trace, weather_trace


@pytest.fixture
def store(db_location: str) -> TraceStore:
    return TraceStore(db_location)


def test_round_trip_keeps_everything_but_secrets(store: TraceStore) -> None:
    original = weather_trace()
    store.save(original)
    loaded = store.get(original.run_id)
    assert loaded is not None
    expected = original.to_dict()
    expected["user_prompt"] = expected["user_prompt"].replace(
        "sk-proj-abcdefghijklmnop1234567890", REDACTED
    )
    assert loaded.to_dict() == expected


def test_file_is_real_sqlite_in_wal_mode(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "traces.db")
    store.save(weather_trace())
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 5


def test_list_filters_by_agent_status_and_since(store: TraceStore) -> None:
    store.save(weather_trace("w1"))
    store.save(failed_trace("f1"))
    old = weather_trace("w-old")
    old.started_at = T0 - 10 * 86400
    store.save(old)
    assert [r.run_id for r in store.list()] == ["f1", "w1", "w-old"]
    assert [r.run_id for r in store.list(agent="weather")] == ["w1", "w-old"]
    assert [r.run_id for r in store.list(status="failure")] == ["f1"]
    assert [r.run_id for r in store.list(since=T0 - 86400)] == ["f1", "w1"]
    assert [r.run_id for r in store.list(since="2026-05-25T00:00+00:00")] == ["f1", "w1"]
    assert store.list(limit=1)[0].run_id == "f1"
    row = store.list(status="failure")[0]
    assert (row.termination_reason, row.error_code, row.iterations) == (
        "max_iterations", "MAX_ITERATIONS", 3)
    assert row.duration_ms == pytest.approx(18000.0)


def test_parse_since_relative_and_invalid() -> None:
    assert parse_since("2h", now=10_000.0) == 10_000.0 - 7200
    assert parse_since("30m", now=10_000.0) == 10_000.0 - 1800
    with pytest.raises(ValueError, match="cannot read"):
        parse_since("yesterday-ish")


def test_get_by_unique_prefix_and_ambiguous_prefix(store: TraceStore) -> None:
    store.save(weather_trace("abc-1"))
    store.save(weather_trace("abc-2"))
    store.save(weather_trace("xyz_1"))
    assert store.get("xyz") is not None
    assert store.get("nope") is None
    with pytest.raises(KeyError, match="ambiguous"):
        store.get("abc")
    # LIKE wildcards in an id are literal, not patterns
    assert store.get("xy_") is None


def test_incremental_writes_are_visible_before_finish(db_location: str) -> None:
    path = db_location
    writer = TraceStore(path)
    trace = Trace("inc-1", agent_name="a", started_at=T0)
    writer.start(trace)
    reader = TraceStore(path)
    loaded = reader.get("inc-1")
    assert loaded is not None and loaded.status == "running" and loaded.steps == []
    trace.steps.append(Step(1, 1, thought="first"))
    writer.record_step(trace)
    trace.steps.append(Step(2, 1, thought="second"))
    writer.record_step(trace)
    # the loop may still amend the latest step (its tool calls) before the next record_step
    trace.steps[-1].tool_calls.append(ToolCallRecord("c1", "t", {}, 2, result="ok"))
    trace.steps.append(Step(3, 1))
    writer.record_step(trace)
    loaded = reader.get("inc-1")
    assert loaded is not None
    assert [s.thought for s in loaded.steps] == ["first", "second", ""]
    assert loaded.steps[1].tool_calls[0].result == "ok"
    trace.status, trace.ended_at = "success", T0 + 1
    writer.finish(trace)
    assert reader.list()[0].status == "success"


def test_a_crashed_writer_leaves_its_steps_and_reads_as_crashed(db_location: str) -> None:
    path = db_location
    script = textwrap.dedent(f"""
        import os
        from toolcycle.tracing.trace import Step, Trace
        from toolcycle.tracing.store import TraceStore
        store = TraceStore({path!r})
        trace = Trace("crash-1", agent_name="doomed", started_at=1.0)
        store.start(trace)
        trace.steps.append(Step(1, 1, thought="before the crash"))
        store.record_step(trace)
        os._exit(3)  # no finish(), no cleanup, like a killed process
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    store = TraceStore(path)
    trace = store.get("crash-1")
    assert trace is not None
    assert trace.status == "crashed"
    assert [s.thought for s in trace.steps] == ["before the crash"]
    assert [r.run_id for r in store.list(status="crashed")] == ["crash-1"]
    assert store.list(status="running") == []


def test_default_redaction_patterns() -> None:
    redactor = Redactor()
    samples = {
        "openai sk-abcdefghijklmnopqrstuvwx1234": "openai [REDACTED]",
        "key sk-ant-api03-AbCdEfGhIjKlMnOpQrSt_uv-wx": "key [REDACTED]",
        "aws AKIAIOSFODNN7EXAMPLE done": "aws [REDACTED] done",
        "Authorization: Bearer eyJhbGciOi.abc-def_ghi": "Authorization: Bearer [REDACTED]",
        "gh ghp_" + "a" * 36: "gh [REDACTED]",
        "google AIza" + "B" * 35: "google [REDACTED]",
        "nothing secret here, sk-short": "nothing secret here, sk-short",
        "AUTHORIZATION: BEARER abc123": "AUTHORIZATION: BEARER [REDACTED]",
        "jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4": "jwt [REDACTED]",
    }
    for raw, expected in samples.items():
        assert redactor.text(raw) == expected


def test_patterns_can_replace_the_defaults() -> None:
    only_tickets = Redactor([r"TKT-\d+"], secret_keys=None)
    assert only_tickets.text("sk-abcdefghijklmnopqrstuvwx TKT-42") == (
        f"sk-abcdefghijklmnopqrstuvwx {REDACTED}")
    assert only_tickets.data({"password": "x"}) == {"password": "x"}


def test_secret_named_fields_and_custom_patterns(db_location: str) -> None:
    trace = weather_trace("r1")
    trace.steps[0].tool_calls[0].args = {"city": "Paris", "api_key": "plain-looking-value"}
    trace.steps[0].tool_calls[0].result = "internal ticket TKT-123456 opened"
    trace.metadata["password"] = "hunter2"
    store = TraceStore(db_location, redactor=Redactor(extra_patterns=[r"TKT-\d{6}"]))
    store.save(trace)
    loaded = store.get("r1")
    assert loaded is not None
    call = loaded.steps[0].tool_calls[0]
    assert call.args == {"city": "Paris", "api_key": REDACTED}
    assert call.result == f"internal ticket {REDACTED} opened"
    assert loaded.metadata["password"] == REDACTED
    assert "sk-proj" not in json.dumps(loaded.to_dict())
    # and nothing secret reached the file or the database itself
    raw = stored_bytes(db_location)
    for secret in (b"hunter2", b"plain-looking-value", b"TKT-123456", b"abcdefghijklmnop1234"):
        assert secret not in raw


def test_redaction_can_be_turned_off(db_location: str) -> None:
    store = TraceStore(db_location, redact=False)
    store.save(weather_trace("r1"))
    loaded = store.get("r1")
    assert loaded is not None and "sk-proj-abcdefghijklmnop1234567890" in (loaded.user_prompt or "")


def test_resolve_trace_store_and_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve_trace_store(None) is None
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "env.db"))
    from_env = resolve_trace_store(None)
    assert from_env is not None and from_env.path == tmp_path / "env.db"
    assert resolve_trace_store(False) is None
    explicit = resolve_trace_store(str(tmp_path / "x.db"))
    assert explicit is not None and explicit.path.name == "x.db"
    assert resolve_trace_store(explicit) is explicit


def test_a_postgresql_url_works_wherever_a_path_does(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, postgres_url)
    from_env = resolve_trace_store(None)
    assert from_env is not None and from_env.path == postgres_url
    from_env.save(weather_trace("via-env"))
    explicit = resolve_trace_store(postgres_url)
    assert explicit is not None and explicit.get("via-env") is not None
    also = resolve_trace_store(True)
    assert also is not None and [r.run_id for r in also.list()] == ["via-env"]


def test_delete(store: TraceStore) -> None:
    store.save(weather_trace("d1"))
    assert store.delete("d1") is True
    assert store.get("d1") is None
    assert store.delete("d1") is False


def test_a_stand_ins_record_is_stored_typed_and_redacted(db_location: str) -> None:
    """What a routine did for the model (``ToolCallRecord.stand_in``) is part of the trace: it
    reads back typed from the store, where a learner in another process finds it, and the
    calls it made are redacted like the model's own (their arguments carry the same data)."""
    from toolcycle.tracing.stand_in import StandIn, StepOutcome

    trace = weather_trace("r-stand-in")
    trace.steps[0].tool_calls[0].stand_in = StandIn("routine", "find_then_weather", steps=(
        StepOutcome("find", {"city": "Paris", "api_key": "step-secret-value"}, "ok", "id 7"),
        StepOutcome("weather", {"id": 7}, "timeout", "timed out after 2 s", 2.0)))
    store = TraceStore(db_location)
    store.save(trace)
    loaded = store.get("r-stand-in")
    assert loaded is not None
    got = loaded.steps[0].tool_calls[0].stand_in
    assert got is not None and (got.kind, got.tool, got.ok) == ("routine", "find_then_weather",
                                                                True)
    assert [(s.tool, s.status, s.timeout_s) for s in got.steps] == [
        ("find", "ok", None), ("weather", "timeout", 2.0)]
    assert got.steps[0].arguments == {"city": "Paris", "api_key": REDACTED}
    assert b"step-secret-value" not in stored_bytes(db_location)


def test_a_damaged_stand_in_record_loses_itself_not_the_trace() -> None:
    data = weather_trace("r-bad").to_dict()
    data["steps"][0]["tool_calls"][0]["stand_in"] = {"kind": "wizard", "tool": 3}
    assert Trace.from_dict(data).steps[0].tool_calls[0].stand_in is None
    data["steps"][0]["tool_calls"][0]["stand_in"] = {
        "kind": "fallback", "tool": "a", "ok": False, "alternative": "b",
        "steps": [{"tool": "a", "arguments": {}, "status": "error", "text": ""}, "junk",
                  {"tool": "b", "arguments": [], "status": "ok", "text": ""}]}
    record = Trace.from_dict(data).steps[0].tool_calls[0].stand_in
    assert record is not None and [s.tool for s in record.steps] == ["a"]
    data["steps"][0]["tool_calls"][0]["stand_in"]["steps"] = [
        {"tool": "a", "arguments": {}, "status": "timeout", "text": "", "timeout_s": True}]
    record = Trace.from_dict(data).steps[0].tool_calls[0].stand_in
    assert record is not None and record.steps == ()  # a flag is no timeout in seconds

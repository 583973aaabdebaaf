"""``toolcycle run`` and ``toolcycle spec ...`` on the example specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolcycle.cli import main
from toolcycle.spec import AgentSpec

ROOT = Path(__file__).resolve().parents[2]
HELLO = "examples/hello_world.gram"
MODEL = "python:tests.spec.cli_models:hello_model"


@pytest.fixture(autouse=True)
def in_repository(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    # `toolcycle run` records every run: into a scratch store here, never the user's.
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))


def test_run_prints_the_answer_and_the_trace(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", HELLO, "--tools", "examples.hello_tools", "--model", MODEL,
                 "Hello, I'm Ada"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out == "Hello, Ada! Nice to meet you.\n"
    assert "agent hello_world_agent" in err
    assert 'call sayHello({"personName": "Ada"})' in err
    assert "observation: Hello, Ada! Nice to meet you." in err


def test_run_takes_a_tool_file_and_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", HELLO, "--tools", "examples/hello_tools.py", "--model", MODEL,
                 "--json", "hi"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["output"] == "Hello, Ada! Nice to meet you."
    assert data["termination"]["reason"] == "completed"
    assert [c["name"] for s in data["trace"]["steps"] for c in s["tool_calls"]] == ["sayHello"]


def test_run_reports_binding_problems(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "examples/hello_goodbye.gram", "--tools", "examples.hello_tools",
                 "--model", MODEL, "bye"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tool 'sayGoodbye': no implementation in the tool library" in err


def test_run_at_the_iteration_limit_still_answers(capsys: pytest.CaptureFixture[str]) -> None:
    """It prints what it had, but a forced answer is no success (docs/status.md): the status
    is said on stderr and the exit status is 4, not 0 (before: 0, as if it had answered)."""
    args = ["run", HELLO, "--tools", "examples.hello_tools", "--model",
            "python:tests.spec.cli_models:looping_model", "--max-iterations", "2", "hi"]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 4
    assert out == "\n"  # the forced final answer had no text
    assert "'reason': 'max_iterations', 'action': 'final_answer'" in err
    assert "status forced: a limit forced this answer" in err
    assert main([*args, "--json"]) == 4
    assert json.loads(capsys.readouterr().out)["status"] == "forced"


def test_spec_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "check", "examples/hello_goodbye.gram",
                 "--tools", "examples.hello_goodbye_tools"]) == 0
    assert "ok: agent 'hello_goodbye_agent' with 2 tool(s)" in capsys.readouterr().out
    assert main(["spec", "check", "examples/hello_goodbye.gram",
                 "--tools", "examples.hello_tools"]) == 1
    assert "1 binding problem(s)" in capsys.readouterr().err


def test_spec_check_shows_where_a_file_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.gram"
    bad.write_text("[a:Agent |\n  [t:Tool | (x::Strng)==>(::String)]\n]\n", encoding="utf-8")
    assert main(["spec", "check", str(bad)]) == 2
    assert f"{bad}:2:17: tool 't', parameter 1 'x': unknown type 'Strng'" in (
        capsys.readouterr().err
    )


def test_spec_convert_both_ways(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "convert", HELLO]) == 0
    as_json = capsys.readouterr().out
    assert AgentSpec.from_json(as_json) == AgentSpec.load(HELLO)
    assert main(["spec", "convert", HELLO, "-o", str(tmp_path / "a.json")]) == 0
    assert main(["spec", "convert", str(tmp_path / "a.json")]) == 0
    assert AgentSpec.from_gram(capsys.readouterr().out) == AgentSpec.load(HELLO)


def test_spec_import_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definitions = tmp_path / "tools.json"
    fixture = json.loads((ROOT / "tests/spec/fixtures/anthropic_tools.json").read_text())
    definitions.write_text(json.dumps(fixture["tools"]), encoding="utf-8")
    out = tmp_path / "stocks.gram"
    assert main(["spec", "import", str(definitions), "--from", "anthropic", "--name", "stocks",
                 "-o", str(out)]) == 0
    assert "[get_stock_price:Tool" in out.read_text()
    assert main(["spec", "export", str(out), "--to", "anthropic"]) == 0
    assert json.loads(capsys.readouterr().out) == fixture["tools"]


def test_run_records_its_trace_by_default_and_takes_temperature_and_seed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from toolcycle.tracing.store import TraceStore

    code = main(["run", HELLO, "--tools", "examples.hello_tools", "--model",
                 "python:tests.spec.cli_models:settings_model", "--temperature", "0.3",
                 "--seed", "7", "hi"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "temperature=0.3 seed=7\n"
    [row] = TraceStore(tmp_path / "traces.db").list()
    assert f"trace recorded: toolcycle trace show {row.run_id}" in err
    code = main(["run", HELLO, "--tools", "examples.hello_tools", "--model",
                 "python:tests.spec.cli_models:settings_model", "--no-trace", "hi"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "temperature=None seed=None\n" and err == ""
    assert len(TraceStore(tmp_path / "traces.db").list()) == 1  # --no-trace recorded nothing
    other = tmp_path / "other.db"
    assert main(["run", HELLO, "--tools", "examples.hello_tools", "--model", MODEL,
                 "--trace-db", str(other), "hi"]) == 0
    assert len(TraceStore(other).list()) == 1
    assert f"--db {other}" in capsys.readouterr().err


def test_select_tools_offers_only_the_related_tools(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    model = "python:tests.spec.cli_models:tools_model"
    base = ["run", HELLO, "--tools", "examples.hello_tools", "--model", model, "--no-trace"]
    assert main([*base, "Say hello to Ada"]) == 0
    assert capsys.readouterr().out == "tools: sayHello\n"
    assert main([*base, "--select-tools", "--", "What is 2 + 2?"]) == 0
    assert capsys.readouterr().out == "tools: \n"  # nothing related: no tools offered
    assert main([*base, "--select-tools", "0.0", "--", "Say hello to Ada"]) == 0
    assert capsys.readouterr().out == "tools: sayHello\n"
    assert main([*base, "--select-tools", "5", "--", "hi"]) != 0
    assert "min_relevance" in capsys.readouterr().err
    traced = [arg for arg in base if arg != "--no-trace"]
    db = str(tmp_path / "traces.db")
    assert main([*traced, "--trace-db", db, "--select-tools", "--", "What is 2 + 2?"]) == 0
    err = capsys.readouterr().err
    assert "tools offered (tool selection): none" in err  # the trace says what it was offered
    run_id = err.strip().split()[-1]  # "trace recorded: toolcycle trace show --db DB RUN"
    assert main(["trace", "show", run_id, "--db", db, "--no-color"]) == 0  # and the store kept it
    assert "tools offered (tool selection): none" in capsys.readouterr().out


def test_progress_shows_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from toolcycle.cli._progress import progress_on_stderr
    from toolcycle.events import IterationStart

    monkeypatch.setattr("sys.stderr", io.StringIO())
    with progress_on_stderr() as callbacks:
        assert callbacks is None

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with progress_on_stderr() as callbacks:
        assert callbacks is not None
        callbacks.on_iteration_start(IterationStart(1, 2))
        assert "iteration 2" in str(callbacks.status.status)


async def test_run_sync_inside_a_running_loop_says_to_await_run() -> None:
    from toolcycle import Agent
    from toolcycle.models.scripted import ScriptedModel

    with pytest.raises(RuntimeError, match=r"await agent\.run\(\.\.\.\)"):
        Agent(ScriptedModel(["hi"]), "x").run_sync("hello")

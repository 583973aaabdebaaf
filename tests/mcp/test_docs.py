"""docs/mcp.md runs as written: its python examples, and its `toolcycle mcp serve` commands
(the HTTP one on a free port instead of 8000, which may be taken on a shared machine; the
stdio one in test_serve.py, with a scripted model for the agent)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
from pathlib import Path

import pytest
from conftest import ROOT, everything_path, free_port, http_server
from doc_scripts import run_script

DOC = ROOT / "docs" / "mcp.md"
BIN = str(Path(sys.executable).parent)  # `python` and `toolcycle` as a user's shell finds them


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture(autouse=True)
def venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(ROOT)


def test_using_a_servers_tools(tmp_path: Path) -> None:
    """As a script in a subprocess (tests/doc_scripts.py), from an empty folder."""
    output, seen = run_script(blocks("python")[0], tmp_path, "mcp_clock.py").splitlines()
    assert output == "It is evening in Tokyo."
    assert '"timezone":"Asia/Tokyo"' in seen


def test_serve_over_http_and_both_clients(tmp_path: Path) -> None:
    (_, http) = blocks("bash")[1].splitlines()
    port = free_port()
    command = shlex.split(http.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
    with http_server(command, port, signal.SIGINT, cwd=ROOT):
        client = next(b for b in blocks("python") if "127.0.0.1:8000" in b)
        example = client.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        printed = run_script(example, tmp_path, "mcp_client.py")
    listed, hello, grace = printed.splitlines()
    assert listed == "['hello_world_agent', 'sayHello']"
    assert hello == "Hello, Ada! Nice to meet you."
    assert grace == "Hello, Grace! Nice to meet you."


def test_resources_prompts_elicitation_sampling(tmp_path: Path) -> None:
    """The server-everything sample, with the npm package installed in .mcp-servers (`make
    mcp-servers`) instead of fetched by npx."""
    sample = next(b for b in blocks("python") if "server-everything" in b)
    npx = '"npx", "-y", "@modelcontextprotocol/server-everything"'
    assert npx in sample
    printed = run_script(sample.replace(npx, f'"node", {everything_path()!r}'), tmp_path,
                         "mcp_everything.py")
    expected = next(b for b in blocks("text") if "The server asked" in b)
    assert printed == expected

"""Real MCP servers for the tests: started here, found by PID, stopped by PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
EVERYTHING = (ROOT / ".mcp-servers" / "node_modules" / "@modelcontextprotocol"
              / "server-everything" / "dist" / "index.js")
HOSTILE = str(HERE / "hostile_server.py")
SDK_EXAMPLE = str(HERE / "sdk_example_server.py")
PYTHON = sys.executable


def everything_path() -> str:
    if not EVERYTHING.is_file():  # `make test` installs it: a missing server is a failure
        pytest.fail(f"{EVERYTHING} is missing: run `make mcp-servers`")
    return str(EVERYTHING)


def child_pids(marker: str) -> set[int]:
    """PIDs of this process's children whose command line contains ``marker``."""
    found = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            state, ppid = fields[0], int(fields[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and marker in cmdline and state != "Z":
            found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(command: list[str], port: int, stop: int = signal.SIGTERM,
                **popen: Any) -> Iterator[str]:
    """Start ``command`` (listening on ``port``), wait until it accepts connections, yield its
    MCP URL, and stop it by PID (``stop``, then SIGKILL after 10 s)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               **popen)
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"{command[:3]} exited: {process.stderr.read()!r}")
                if time.monotonic() > deadline:
                    pytest.fail(f"{command[:3]} did not listen within 60 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.kill(process.pid, stop)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        process.stderr.close()


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """server-everything over streamable HTTP on a free port; stopped by PID."""
    port = free_port()
    with http_server(["node", everything_path(), "streamableHttp"], port,
                     env={**os.environ, "PORT": str(port)}) as url:
        yield url

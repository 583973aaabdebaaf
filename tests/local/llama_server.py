"""``python -m llama_cpp.server`` started for a test on a free loopback port, stopped by PID."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from toolcycle.models.local.llama import DEFAULT_SEED
from toolcycle.models.local.packs import pack_path

SERVER_START_SECONDS = 180


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve(log_dir: Path, options: list[str], pack: str = "qwen2.5-coder-0.5b") -> Iterator[str]:
    """Yield the base URL of a server running ``pack`` (``options``: more server flags, such
    as a chat format); the process is terminated when the generator is closed."""
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(pack_path(pack)), "--model_alias", pack,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096", "--n_threads", "2", "--seed", str(DEFAULT_SEED), *options,
    ]
    # llama.cpp logs ~170 KB while loading: a pipe would fill up and block the server.
    log_path = log_dir / "server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(process, f"{base_url}/models", log_path)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_serving(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"llama_cpp.server exited ({process.returncode}): {log}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise RuntimeError(f"llama_cpp.server did not answer {url} in {SERVER_START_SECONDS} s")

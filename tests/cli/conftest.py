"""The real ``toolcycle`` entry point, run as a user runs it: a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def toolcycle_command() -> list[str]:
    """The console script pip installed next to this interpreter (``python -m toolcycle``
    where there is none)."""
    script = Path(sys.executable).with_name("toolcycle")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolcycle"]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a command: this checkout first on the path, no logging switch or
    trace store inherited from the test run's own environment."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TOOLCYCLE_LOG", "TOOLCYCLE_TRACE_DB")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *extra.pop("PYTHONPATH", "").split(os.pathsep)]
                                        ).rstrip(os.pathsep)
    env.update(extra)
    return env


def toolcycle(*args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*toolcycle_command(), *args], cwd=ROOT, env=cli_env(**env),
                          capture_output=True, text=True, timeout=timeout, check=False)

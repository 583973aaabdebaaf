"""Run a docs sample the way a reader does: pasted into a script file, run with the venv's
Python in a subprocess, from a folder of its own.

An ``exec`` in the test process would share its imports, its ``sys.path``, its event loop and
its warnings filters, and would accept a top-level ``await`` a script cannot run; a subprocess
shares none of that. The environment is an activated venv's: its ``bin`` first on ``PATH`` (a
sample that starts ``python -m ...`` or ``toolcycle`` gets this one) and this checkout
importable, as the venv's editable install makes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reader_env(**extra: str) -> dict[str, str]:
    """The environment of a shell with the venv activated, plus ``extra``."""
    env = {**os.environ, **extra}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_script(code: str, folder: Path, name: str = "sample.py",
               env: dict[str, str] | None = None, timeout: float = 300) -> str:
    """Write ``code`` to ``folder/name``, run it there, and return its standard output; a
    failing script fails the test with its output and error."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, name], cwd=folder, env=env or reader_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout

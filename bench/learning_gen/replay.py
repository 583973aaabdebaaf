"""Replay test tasks of a measured seed with its frozen learned playbook, on the code of the
checkout this runs from (its PYTHONPATH), one run each, logged as JSONL and traces in the
run folder: to see whether a later change mends what a measured run showed. A run folder's
own ``replay.py`` calls :func:`main` with its folder and the label it measured:

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/runs/2026-12-06/learn32/replay.py \\
        SEED PROTOCOL CASE[,CASE...] LABEL [--no-playbook]
"""
from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

from toolcycle import Agent
from toolcycle.models import resolve_model
from toolcycle.models.local import llama
from toolcycle.playbook import Playbook

from . import generate

MODEL = "local:qwen2.5-coder-1.5b"
KINDS = ("unreliable", "empty_source", "arg_format", "id_first")


async def replay(folder: Path, measured: str, seed: int, protocol: str, cases: list[str],
                 label: str, with_playbook: bool = True) -> None:
    """Run ``cases`` of ``seed``'s suite once each, with the playbook the ``measured`` label
    learned on that seed and protocol (or none), into ``folder``'s ``replay-LABEL`` files."""
    llama.default_threads = lambda: 1
    suite = generate(seed, train=2, test=1, kinds=KINDS)
    pb = None
    if with_playbook:
        source = folder / measured / protocol / f"seed-{seed}" / "playbook.db"
        copy = Path(tempfile.mkdtemp()) / "playbook.db"
        for suffix in ("", "-wal", "-shm"):  # (a live SQLite file: its WAL holds the rows)
            if Path(str(source) + suffix).exists():
                shutil.copy(str(source) + suffix, str(copy) + suffix)
        pb = Playbook(copy, learn=False)
    model = resolve_model(MODEL if protocol == "json" else f"{MODEL}?protocol={protocol}")
    agent = Agent(model, suite.instructions, list(suite.tools), name=suite.agent_name,
                  playbook=pb, trace_store=folder / f"replay-{label}.db")
    for case in suite.dataset.cases:
        if case.name not in cases:
            continue
        result = await agent.run(str(case.inputs))
        row = {"label": label, "seed": seed, "protocol": protocol, "case": case.name,
               "playbook": pb is not None, "output": result.output, "status": result.status,
               "right": suite.grade(str(case.expected_output), result.output),
               "iterations": result.iterations, "tokens": result.usage.total_tokens,
               "tools": [c.name for c in result.trace.tool_calls], "run_id": result.run_id}
        with (folder / f"replay-{label}.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(row, flush=True)


def main(folder: Path, measured: str, argv: list[str]) -> None:
    """``argv``: SEED PROTOCOL CASE[,CASE...] LABEL [--no-playbook]."""
    asyncio.run(replay(folder, measured, int(argv[0]), argv[1], argv[2].split(","), argv[3],
                       with_playbook="--no-playbook" not in argv))

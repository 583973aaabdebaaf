"""Replay test tasks of a measured seed with its frozen learned playbook, on the code of the
checkout this runs from (its PYTHONPATH), one run each, logged as JSONL beside this script:
to see whether a later change mends what a measured run showed.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/runs/2026-12-06/learn32/replay.py \\
        SEED PROTOCOL CASE[,CASE...] LABEL [--no-playbook]
"""
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # bench/
from learning_gen import generate

from toolcycle import Agent
from toolcycle.models import resolve_model
from toolcycle.models.local import llama
from toolcycle.playbook import Playbook

llama.default_threads = lambda: 1
HERE = Path(__file__).resolve().parent
MODEL = "local:qwen2.5-coder-1.5b"


async def main() -> None:
    seed, protocol, label = int(sys.argv[1]), sys.argv[2], sys.argv[4]
    cases = sys.argv[3].split(",")
    suite = generate(seed, train=2, test=1,
                     kinds=("unreliable", "empty_source", "arg_format", "id_first"))
    pb = None
    if "--no-playbook" not in sys.argv:
        source = HERE / "he1523ea" / protocol / f"seed-{seed}" / "playbook.db"
        copy = Path(tempfile.mkdtemp()) / "playbook.db"
        for suffix in ("", "-wal", "-shm"):  # (a live SQLite file: its WAL holds the rows)
            if Path(str(source) + suffix).exists():
                shutil.copy(str(source) + suffix, str(copy) + suffix)
        pb = Playbook(copy, learn=False)
    model = resolve_model(MODEL if protocol == "json" else f"{MODEL}?protocol={protocol}")
    agent = Agent(model, suite.instructions, list(suite.tools), name=suite.agent_name,
                  playbook=pb, trace_store=HERE / f"replay-{label}.db")
    for case in suite.dataset.cases:
        if case.name not in cases:
            continue
        result = await agent.run(str(case.inputs))
        row = {"label": label, "seed": seed, "protocol": protocol, "case": case.name,
               "playbook": pb is not None, "output": result.output, "status": result.status,
               "right": suite.grade(str(case.expected_output), result.output),
               "iterations": result.iterations, "tokens": result.usage.total_tokens,
               "tools": [c.name for c in result.trace.tool_calls], "run_id": result.run_id}
        with (HERE / f"replay-{label}.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(row, flush=True)


asyncio.run(main())

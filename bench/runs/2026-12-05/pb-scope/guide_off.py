"""Ablation: the two seed-1001 ReAct test tasks the learned playbook made worse at 03e25f2,
run again with the same frozen playbook and the guide off (Playbook(guide=0)), nothing else
changed. One run each, logged as JSONL beside this script.

    nice -n 10 .venv/bin/python bench/runs/2026-12-05/pb-scope/guide_off.py PLAYBOOK_DB
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
CASES = ("s1001-unreliable-03", "s1001-empty_source-03")


async def main() -> None:
    suite = generate(1001, train=2, test=1,
                     kinds=("unreliable", "empty_source", "arg_format", "id_first"))
    copy = Path(tempfile.mkdtemp()) / "playbook.db"
    for suffix in ("", "-wal", "-shm"):  # (a live SQLite file: its WAL holds the rows)
        if Path(sys.argv[1] + suffix).exists():
            shutil.copy(sys.argv[1] + suffix, str(copy) + suffix)
    pb = Playbook(copy, learn=False, guide=0)
    agent = Agent(resolve_model("local:qwen2.5-coder-1.5b?protocol=react"), suite.instructions,
                  list(suite.tools), name=suite.agent_name, playbook=pb)
    out = Path(__file__).with_name("guide_off-03e25f2-react-1001.jsonl")
    for case in suite.dataset.cases:
        if case.name not in CASES:
            continue
        result = await agent.run(str(case.inputs))
        row = {"case": case.name, "prompt": case.inputs, "output": result.output,
               "right": suite.grade(str(case.expected_output), result.output),
               "iterations": result.iterations, "tokens": result.usage.total_tokens,
               "tools": [c.name for c in result.trace.tool_calls],
               "shown": result.trace.strategies_shown}
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(row, flush=True)


asyncio.run(main())

"""Replays a seed's test tasks on the playbook it learned (label g0-dc1596a), to tell a
lesson's effect from the order of the runs (docs/playbook.md, "Held-out seeds").

    cd <a checkout of dc1596a> && PYTHONPATH=$PWD nice -n 5 .venv/bin/python \\
        /work/main/bench/runs/2026-12-05/learn26/replay.py SEED MODE [CASE]

MODE ``alone``: CASE alone in this process. ``order``: every test task in the A/B's order,
one Agent and one Playbook. ``fresh``: the same order, a new Agent and a new copy of the
playbook for each task, the model object alone shared.
"""

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from toolcycle import Agent
from toolcycle.models import resolve_model
from toolcycle.models.local import llama
from toolcycle.playbook import Playbook

HERE = Path(__file__).resolve().parent
KINDS = ("unreliable", "empty_source", "arg_format", "id_first")


def copy_playbook(seed: int) -> Playbook:
    source = HERE / "g0-dc1596a" / "react" / f"seed-{seed}" / "playbook.db"
    target = Path(tempfile.mkdtemp()) / "playbook.db"
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{target}{suffix}")
    return Playbook(target, learn=False, guide=0)


async def main(seed: int, mode: str, only: str) -> None:
    from learning_gen import generate  # bench/, put on the path below

    llama.default_threads = lambda: 1
    suite = generate(seed, train=2, test=1, read_only=True, kinds=KINDS)
    _, test = suite.dataset.split()
    cases = [c for c in test.cases if mode != "alone" or c.name == only]
    model = resolve_model("local:qwen2.5-coder-1.5b?protocol=react")
    shared = copy_playbook(seed)
    agent = Agent(model, suite.instructions, list(suite.tools), name=suite.agent_name,
                  playbook=shared)
    for case in cases:
        if mode == "fresh":
            agent = Agent(model, suite.instructions, list(suite.tools),
                          name=suite.agent_name, playbook=copy_playbook(seed))
        result = await agent.run(str(case.inputs))
        right = suite.grade(str(case.expected_output), result.output)
        print(case.name, result.status, right, [c.name for c in result.trace.tool_calls],
              result.output[:80], flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path.cwd() / "bench"))
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""))

"""Does a fallback (the learned alternative called when the failing tool fails) help? (train split)

Runs the given kinds of a suite's train split with a learned playbook frozen (routines on, so
stand-ins on), once with the fallbacks cleared (``off``) and once as the library offers them
(``on``), or with the routines' repairs of their last tool's failed calls cleared
(``norepair``), or with no first call required of runs shown a sequence (``nofirst``), at
the given seeds and protocol, and prints success, iterations and the tool calls::

    .venv/bin/python bench/fallback_check.py PLAYBOOK.db rail delay 1,2 react [off,on,...]

PLAYBOOK.db: a copy made with sqlite3 backup (see ``bench/routine_naming.py``), or a file
this script writes from the ``strategies`` of learning results (``--from A.json[,B.json]``;
a later result's strategy replaces an earlier one's of the same id).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from routine_wording import _bench  # bench/ is the script's own directory on sys.path

from toolcycle.models import resolve_model
from toolcycle.playbook import Playbook, legacy
from toolcycle.playbook.strategy import Strategy


async def main(db: str, suite_name: str, kinds: list[str], seeds: list[int],
               protocol: str, variants: list[str]) -> None:
    bench = _bench()
    suite = bench.load_suite(suite_name)
    model = resolve_model(f"local:qwen2.5-coder-1.5b?protocol={protocol}")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    for key in variants:
        rows = []
        for seed in seeds:
            frozen = Playbook(db, learn=False, routines=True)
            agent = bench.make_agent(suite, model, seed, 0.3, 6, frozen)
            offer = frozen.planner(agent.name)  # what plans its runs
            if key == "off":
                offer._fallbacks.clear()
            if key == "norepair":
                offer._repairs.clear()
            if key == "nofirst":
                offer.first_call_enabled = False
            for task in tasks:
                result = await agent.run(task.prompt)
                calls = [c.name for c in result.trace.tool_calls]
                ok = bench.evaluate(task, result.output)
                rows.append((ok, result.trace.iterations))
                print(f"  {key} seed {seed} {task.id} ok={ok} it={result.trace.iterations} "
                      f"{' > '.join(calls)}  answer={str(result.output)[:60]!r}", flush=True)
        print(f"{key}: success {sum(r[0] for r in rows)}/{len(rows)}, mean it "
              f"{sum(r[1] for r in rows) / len(rows):.2f}", flush=True)


def from_result(results: str, db: str) -> None:
    """A playbook file holding the strategies learning results ended with."""
    pb = Playbook(db, learn=False)
    for result in results.split(","):
        data = json.loads(Path(result).read_text())
        # results written before typed repairs: their parts derived as a store's upgrade does
        pb.store.put([Strategy.from_dict(legacy.upgrade(s) if legacy.is_legacy(s) else s)
                      for s in data["strategies"]])
    pb.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[0] == "--from":
        from_result(args[1], args[2])
        args = args[2:]
    asyncio.run(main(args[0], args[1], args[2].split(","), [int(s) for s in args[3].split(",")],
                     args[4], args[5].split(",") if len(args) > 5 else ["off", "on"]))

"""Does a routine's name make the 1.5B call its first tool by hand before it? (train split)

Runs the given kinds of a suite's train split with a learned playbook frozen (routines on),
once with the routine names as built (``find_booking_then_booking_detail``) and once with a
prefix no tool has (``lookup_find_booking_then_booking_detail``), at the given seeds, and
prints success, iterations and how often the run called the routine's first tool before the
routine. Used once, on 2026-11-28 at 01:00 UTC, on rail's seat train tasks with the playbook
its ReAct run learned at aa1c537; log ``rail-routine-naming-dev-react-2026-11-28.log``::

    .venv/bin/python bench/routine_naming.py PLAYBOOK.db rail seat 1,2

(PLAYBOOK.db: a copy made with sqlite3 backup; a bare file copy leaves the WAL behind, and
the first try, kept at the top of that log, ran with an empty playbook.)
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence

from routine_wording import _bench  # bench/ is the script's own directory on sys.path

import toolcycle.playbook.curator as curator_module
import toolcycle.playbook.playbook as playbook_module
import toolcycle.playbook.routine as routine_module
from toolcycle.models import resolve_model
from toolcycle.playbook import Playbook

OWN = routine_module.routine_name
NAMINGS: dict[str, Callable[[Sequence[str]], str]] = {
    "built": OWN,
    "lookup": lambda tools: "lookup_" + OWN(tools),
}


async def main(db: str, suite_name: str, kinds: list[str], seeds: list[int]) -> None:
    bench = _bench()
    suite = bench.load_suite(suite_name)
    model = resolve_model("local:qwen2.5-coder-1.5b?protocol=react")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    for key, naming in NAMINGS.items():
        for module in (routine_module, playbook_module, curator_module):
            module.routine_name = naming  # type: ignore[attr-defined]
        rows = []
        for seed in seeds:
            agent = bench.make_agent(suite, model, seed, 0.3, 6, Playbook(db, learn=False,
                                                                          routines=True))
            for task in tasks:
                result = await agent.run(task.prompt)
                calls = [c.name for c in result.trace.tool_calls]
                ok = bench.evaluate(task, result.output)
                routine_at = next((i for i, c in enumerate(calls) if "_then_" in c), None)
                late = routine_at is not None and calls[routine_at].removeprefix(
                    "lookup_").split("_then_")[0] in calls[:routine_at]
                rows.append((ok, result.trace.iterations, routine_at is not None, late))
                print(f"  {key} seed {seed} {task.id} ok={ok} it={result.trace.iterations} "
                      f"{' > '.join(calls)}", flush=True)
        print(f"{key}: success {sum(r[0] for r in rows)}/{len(rows)}, mean it "
              f"{sum(r[1] for r in rows) / len(rows):.2f}; routine called in "
              f"{sum(r[2] for r in rows)}, after its first tool by hand in "
              f"{sum(r[3] for r in rows)}", flush=True)
    for module in (routine_module, playbook_module, curator_module):
        module.routine_name = OWN  # type: ignore[attr-defined]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3].split(","),
                     [int(s) for s in sys.argv[4].split(",")]))

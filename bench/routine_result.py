"""Choose how a routine's result reads to the model, on the train split the test never sees.

Runs the given kinds of the `chains` train split with a learned playbook frozen (routines
on), at seeds 1 and 2, once per wording of a completed routine's result, and prints success,
iterations, and the iterations of the runs that called a routine. Used once, on 2026-11-27,
to choose ``toolcycle.playbook.routine.completed``; log
``bench/learning_tasks/results/chains-routine-result-dev-react-2026-11-27.log``::

    .venv/bin/python bench/routine_result.py PLAYBOOK.db office_weather,parcel,currency \
        current,done
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from routine_wording import _bench  # bench/ is the script's own directory on sys.path

import toolcycle.playbook.routine as routine
from toolcycle.models import resolve_model
from toolcycle.playbook import Playbook

#: "current": the calls and results alone (before 2026-11-27, night); "done": with the header
#: that says they ran (adopted).
WORDINGS: dict[str, Callable[[list[str], list[str]], str]] = {
    "current": lambda names, lines: "\n".join(lines),
    "done": lambda names, lines: (f"Ran {', then '.join(names)} for you (already called; "
                                  "answer from these results):\n" + "\n".join(lines)),
}


async def main(db: str, kinds: list[str], wordings: list[str]) -> None:
    bench = _bench()
    suite = bench.load_suite("chains")
    model = resolve_model("local:qwen2.5-coder-1.5b?protocol=react")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    own = routine.completed
    for key in wordings:
        routine.completed = WORDINGS[key]  # type: ignore[assignment]
        pb = Playbook(db, learn=False, routines=True)
        rows = []
        for seed in (1, 2):
            agent = bench.make_agent(suite, model, seed, 0.3, 6, pb)
            for task in tasks:
                result = await agent.run(task.prompt)
                calls = [c.name for c in result.trace.tool_calls]
                ok = bench.evaluate(task, result.output)
                rows.append((ok, result.trace.iterations, any("_then_" in c for c in calls)))
                print(f"  {key} seed {seed} {task.id} ok={ok} it={result.trace.iterations} "
                      f"{' > '.join(calls)}", flush=True)
        used = [r for r in rows if r[2]]
        print(f"{key}: success {sum(r[0] for r in rows)}/{len(rows)}, mean it "
              f"{sum(r[1] for r in rows) / len(rows):.2f}; routine used {len(used)}, their "
              f"mean it {sum(r[1] for r in used) / max(1, len(used)):.2f}", flush=True)
    routine.completed = own


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")))

"""Does offering a routine *instead of* its first tool stop the 1.5B calling that tool first?

Measured before (``bench/routine_naming.py``): offered ``find_booking_then_booking_detail``
beside ``find_booking``, the 1.5B called ``find_booking`` itself, then the routine, in 7 of 11
routine runs (``find_ticker_then_get_quote``: 10 of 10): three turns, as without the routine.
This script runs the given kinds of a suite's train split with a learned playbook frozen
(routines on): ``built``, the routines without their stand-ins (as before 247fb95);
``stand-in``, as the library offers them since (``routine.stand_in``); ``hide``, the routine's
first tool left out of the run's tools whenever the routine is offered. It prints
success, iterations, how often the routine came after its first tool by hand, and the text of
every tool name the engine could not accept (the ``invalid_tool_name`` calls)::

    .venv/bin/python bench/routine_first_tool.py PLAYBOOK.db rail seat 1,2 built,stand-in

(PLAYBOOK.db: a copy made with sqlite3 backup, see ``bench/routine_naming.py``.)
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace

from routine_wording import _bench  # bench/ is the script's own directory on sys.path

import toolcycle.playbook.playbook as playbook_module
from toolcycle.models import resolve_model
from toolcycle.playbook import Playbook
from toolcycle.run.plan import RunPlan

VARIANTS = sys.argv[5].split(",") if len(sys.argv) > 5 else ["built", "stand-in", "hide"]


class _Hiding(playbook_module.RoutineOffer):
    """The offer, with each offered routine's first tool taken out of the run's tools."""

    def plan(self, task: str, offered: frozenset[str], *, gated: bool) -> RunPlan:
        made = super().plan(task, offered, gated=gated)
        routines = (offered - made.withheld) & self.routines
        first = {name.split("_then_")[0] for name in routines}
        return replace(made, withheld=made.withheld | first)


async def main(db: str, suite_name: str, kinds: list[str], seeds: list[int]) -> None:
    bench = _bench()
    suite = bench.load_suite(suite_name)
    model = resolve_model("local:qwen2.5-coder-1.5b?protocol=react")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    own = playbook_module.RoutineOffer
    for key in VARIANTS:
        playbook_module.RoutineOffer = _Hiding if key == "hide" else own  # type: ignore[misc]
        # "stand-in": as the library offers routines since 2026-11-28 (routine.stand_in)
        rows = []
        for seed in seeds:
            frozen = Playbook(db, learn=False, routines=True)
            agent = bench.make_agent(suite, model, seed, 0.3, 6, frozen)
            if key == "built":  # the routines without their stand-ins (as before 2026-11-28)
                offer = frozen.planner(agent.name)  # what plans its runs
                offer._stand_ins.clear()
            for task in tasks:
                result = await agent.run(task.prompt)
                calls = [c.name for c in result.trace.tool_calls]
                bad = [(c.error or "")[:90] for c in result.trace.tool_calls
                       if c.name == "invalid_tool_name"]
                ok = bench.evaluate(task, result.output)
                routine_at = next((i for i, c in enumerate(calls) if "_then_" in c), None)
                late = routine_at is not None and calls[routine_at].split(
                    "_then_")[0] in calls[:routine_at]
                rows.append((ok, result.trace.iterations, routine_at is not None, late))
                print(f"  {key} seed {seed} {task.id} ok={ok} it={result.trace.iterations} "
                      f"{' > '.join(calls)}" + (f"  invalid: {bad!r:.200}" if bad else ""),
                      flush=True)
        print(f"{key}: success {sum(r[0] for r in rows)}/{len(rows)}, mean it "
              f"{sum(r[1] for r in rows) / len(rows):.2f}; routine called in "
              f"{sum(r[2] for r in rows)}, after its first tool by hand in "
              f"{sum(r[3] for r in rows)}", flush=True)
    playbook_module.RoutineOffer = own  # type: ignore[misc]


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3].split(","),
                     [int(s) for s in sys.argv[4].split(",")]))

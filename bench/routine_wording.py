"""Choose how the playbook words a routine's line, on a split the test never sees.

Runs the given kinds of a suite's train split with a learned playbook frozen (routines on),
once per wording, and prints success and iterations. Used once, on 2026-11-27, to choose the
wording of the routine line (then ``_render`` in ``toolcycle/playbook/playbook.py``, now
``render_line`` in ``toolcycle/playbook/offer.py``); the log is
``bench/learning_tasks/results/chains-routine-wording-dev-2026-11-27.log``::

    .venv/bin/python bench/routine_wording.py \
        --playbook bench/learning_tasks/results/chains-react-2026-11-27-learned.playbook.db \
        --kinds currency,office_weather --seed 7

Used again the same evening for a prerequisite pitfall shown without its sequence (keys
starting with ``P`` reword those pitfalls; ``none`` shows no playbook), on the stock train
tasks with the JSON protocol; log ``chains-prerequisite-wording-dev-json-2026-11-27.log``.
``nostats`` is ``plain`` without the tool-reliability lines, used on the same tasks (seeds 7,
8, 9; log ``chains-reliability-lines-dev-json-2026-11-27.log``) to test whether "get_quote
often fails (3/6 calls)" beside the prerequisite pitfall made the 1.5B answer without a tool:
it did not (with the lines 4/6, 0/6, 0/6; without 0/6, 0/6, 0/6), and a rule that would have
dropped them was not adopted.

At e0d460d (reverted by the next commit) a rule held a prerequisite pitfall back beside the
routine that runs its prerequisite; ``--wordings plain,beside`` (``beside``: the pitfall shown
anyway) on the chains stock and currency train tasks, ReAct, seeds 1, 2, 3, log
``chains-routine-covers-dev-react-2026-11-27.log``: with the rule 27/36 right, 3.38
iterations per successful run, a routine called in 6 runs; without it 28/36, 2.96, 13 (the
1.5B called find_ticker > get_quote by hand when the pitfall was gone). Not adopted.

Wordings are format strings over ``name``, ``args``, ``tools``, ``skip`` (the sequence's "Do
not use" list), ``advice_core`` (the sequence's advice before that list), ``skip_sentence``
and ``n`` (its support); ``plain`` keeps the sequence's own advice (the routine
is still offered) and ``off`` offers no routine.

Since then (December 2026) a lesson carries its parts typed (``first_args``, ``skips``,
``repair``: ``toolcycle/playbook/parts.py``), which is what a wording is filled from here,
and a playbook with routines makes a sequence's first call before the model's first turn
(``head_start``); ``--head-start`` turns that on, off by default as on 2026-11-27, so that
only the wording differs between the lines. Figures measured since are not comparable with
the logs above (other code, other playbook rules). The playbook is read from a copy: opening
one written before typed parts upgrades it, and the file given is a committed log's.
A smoke check (a minute on the 0.5B, one thread)::

    .venv/bin/python bench/routine_wording.py --limit 1 --threads 1 --wordings D \
        --playbook bench/learning_tasks/results/chains-react-2026-11-27-learned.playbook.db \
        --model "local:qwen2.5-coder-0.5b?protocol=react"
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

WORDINGS = {
    "A": "Call {name}({args}) first: one call that runs {tools}. Then answer from its result. "
         "Do not use {skip} (seen in {n} successful runs)",
    "B": "Call {name}({args}), then answer. Do not use {skip} (seen in {n} successful runs)",
    "D": "Call {name}({args}) to look the answer up, then answer with what it returns. "
         "Do not use {skip} (seen in {n} successful runs)",
    "G": "{advice_core} Or both in one call: {name}({args}). {skip_sentence}"
         "(seen in {n} successful runs)",
    "plain": "", "off": "", "none": "", "nostats": "",
    # a prerequisite pitfall ("T needs A from V: call V(args) first and pass its result as A.")
    # worded as the sequence it implies; keys starting with P apply to those pitfalls only
    "P1": "Call {via}({via_args}) first, then {tool}({argument}=its result), then answer "
          "({tool} fails when {argument} is anything else).",
}


def _bench() -> Any:
    path = Path(__file__).resolve().parent / "learning.py"
    spec = importlib.util.spec_from_file_location("learning_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["learning_bench"] = module
    spec.loader.exec_module(module)
    return module


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playbook", required=True)
    parser.add_argument("--suite", default="chains")
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b?protocol=react")
    parser.add_argument("--kinds", default="currency,office_weather")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--wordings", default=",".join(WORDINGS))
    parser.add_argument("--limit", type=int, default=0, help="run only the first N tasks")
    parser.add_argument("--threads", type=int, default=0,
                        help="llama.cpp threads per local model (default: the library's)")
    parser.add_argument("--head-start", action="store_true",
                        help="make a sequence's first call before the model's first turn")
    args = parser.parse_args()
    unknown = [key for key in args.wordings.split(",") if key not in WORDINGS]
    if unknown:
        parser.error(f"unknown wordings {', '.join(unknown)}: use {', '.join(WORDINGS)}")

    import toolcycle.playbook.advice as advice_module
    from toolcycle.models import resolve_model
    from toolcycle.playbook import Playbook
    from toolcycle.playbook.routine import routine_name
    from toolcycle.playbook.strategy import SKIP, skipped

    bench = _bench()
    suite = bench.load_suite(args.suite)
    if args.threads:  # benchmarks sharing two cores: one llama.cpp thread each
        from toolcycle.models.local import llama

        llama.default_threads = lambda: int(args.threads)
    model = resolve_model(args.model)
    kinds = args.kinds.split(",")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    tasks = tasks[:args.limit] if args.limit else tasks
    if not tasks:
        parser.error(f"no {args.suite} train task is of the kinds {args.kinds}")
    frozen = Path(tempfile.mkdtemp(prefix="routine_wording-")) / "playbook.db"
    shutil.copyfile(args.playbook, frozen)
    own_render = advice_module.render_line
    for key in args.wordings.split(","):
        template = WORDINGS[key]

        def render(strategy: Any, names: Any, template: str = template, key: str = key) -> str:
            name = routine_name(strategy.tools)
            repair = strategy.repair
            if (key.startswith("P") and strategy.kind == "pitfall" and repair is not None
                    and repair.kind == "prerequisite"):
                line = template.format(tool=repair.tool, argument=repair.argument,
                                       via=repair.via, via_args=", ".join(repair.via_args))
                return f"- {line} (seen in {strategy.support} runs)"
            if (not template or key.startswith("P") or strategy.kind != "sequence"
                    or name not in names):
                return str(own_render(strategy, names))
            clause = skipped(strategy)  # " Do not use a, b for this kind of task." or ""
            skip = clause.removeprefix(SKIP)
            return "- " + template.format(
                name=name, args=", ".join(map(str, strategy.first_args)),
                tools=", then ".join(strategy.tools), n=strategy.support, skip=skip,
                advice_core=strategy.advice.removesuffix(clause),
                skip_sentence=f"Do not use {skip} " if skip else "")

        advice_module.render_line = render  # the one place a playbook's lines are rendered
        pb = Playbook(str(frozen), learn=False, routines=key != "off",
                      max_strategies=0 if key == "none" else 4,
                      include_tool_stats=key != "nostats", head_start=args.head_start)
        agent = bench.make_agent(suite, model, args.seed, 0.3, 6, pb)
        rows = []
        print(f"== {key}: {template or key}", flush=True)
        for task in tasks:
            result = await agent.run(task.prompt)
            ok = bench.evaluate(task, result.output)
            calls = [c.name for c in result.trace.tool_calls]
            rows.append((ok, result.trace.iterations, any("_then_" in c for c in calls)))
            print(f"  {task.id} ok={ok} it={result.trace.iterations} {' > '.join(calls)}",
                  flush=True)
        wins = [r[1] for r in rows if r[0]]
        print(f"  {key}: success {sum(r[0] for r in rows)}/{len(rows)}, mean iterations "
              f"{sum(r[1] for r in rows) / len(rows):.2f} (successful runs "
              f"{sum(wins) / max(1, len(wins)):.2f}), routine used in {sum(r[2] for r in rows)}",
              flush=True)
        advice_module.render_line = own_render


if __name__ == "__main__":
    asyncio.run(main())

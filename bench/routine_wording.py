"""Choose how the playbook words a routine's line, on a split the test never sees.

Runs the given kinds of a suite's train split with a learned playbook frozen (routines on),
once per wording, and prints success and iterations. Used once, on 2026-11-27, to choose the
wording in ``toolcycle/playbook/playbook.py`` (``_render``); the log is
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
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import re
import sys
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
#: The prerequisite pitfall's own advice (toolcycle/playbook/reflector.py, pitfall_advice).
_PREREQUISITE = re.compile(r"^(\w+) needs (\w+) from (\w+): call \w+\(([^)]*)\) first")


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
    args = parser.parse_args()

    import toolcycle.playbook.playbook as playbook_module
    from toolcycle.models import resolve_model
    from toolcycle.playbook import Playbook
    from toolcycle.playbook.routine import routine_name

    bench = _bench()
    suite = bench.load_suite(args.suite)
    model = resolve_model(args.model)
    kinds = args.kinds.split(",")
    tasks = [t for t in suite.tasks("train") if any(k in t.id for k in kinds)]
    own_render = playbook_module._render
    for key in args.wordings.split(","):
        template = WORDINGS[key]

        def render(strategy: Any, names: Any, template: str = template, key: str = key) -> str:
            name = routine_name(strategy.tools)
            prerequisite = _PREREQUISITE.match(strategy.advice)
            if key.startswith("P") and strategy.kind == "pitfall" and prerequisite:
                tool, argument, via, via_args = prerequisite.groups()
                line = template.format(tool=tool, argument=argument, via=via, via_args=via_args)
                return f"- {line} (seen in {strategy.support} runs)"
            if (not template or key.startswith("P") or strategy.kind != "sequence"
                    or name not in names):
                return str(own_render(strategy, names))
            first = playbook_module._FIRST_CALL.match(strategy.advice)
            core, _, skip = strategy.advice.partition(" Do not use ")
            return "- " + template.format(
                name=name, args=first.group(1) if first else "",
                tools=", then ".join(strategy.tools), n=strategy.support, skip=skip,
                advice_core=core, skip_sentence=f"Do not use {skip} " if skip else "")

        playbook_module._render = render  # type: ignore[assignment]
        pb = Playbook(args.playbook, learn=False, routines=key != "off",
                      max_strategies=0 if key == "none" else 4,
                      include_tool_stats=key != "nostats")
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
        playbook_module._render = own_render


if __name__ == "__main__":
    asyncio.run(main())

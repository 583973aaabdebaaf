"""Would grounding have flagged it? The grounding check run over an arm's recorded answers.

    .venv/bin/python -m bench.first_hour.flags --set dev --arm default --traces TRACES.db

Beside it, the asked check (:func:`toolcycle.run.asked.mismatches`: a unit or conversion the
request did not ask for, figures of different units added up, a named thing not looked up)
over the same recorded request, calls and answer: ``asked=[...]`` per run, and its own
count of wrong and right answers flagged.

For every run of the arm's logs, the answer its trace recorded is checked with the library's
own :func:`toolcycle.run.grounding.unsupported_claims` against the sources the run had (the
agent's instructions and tool descriptions, the question, every successful tool result), and
crossed with the grade: a flag on a wrong answer is a wrong answer the status would have
told; a flag on a right one is a false alarm (a figure the model rightly worked out itself).
This is how the default was decided on the development set without a second full run: the
check does not change a run it passes, and on a run it fails it adds one re-ask.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from pydantic_core import to_jsonable_python

from toolcycle.evals import read_records
from toolcycle.run.asked import mismatches
from toolcycle.run.grounding import answer_text, unsupported_claims
from toolcycle.run.provenance import Call
from toolcycle.run.said_missing import SAID_MISSING, named_returned
from toolcycle.run.units import named_units
from toolcycle.run.unused_handle import handle_of
from toolcycle.testing import ScriptedModel
from toolcycle.tracing.store import TraceStore

from .run import agents_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--seed", type=int, default=68)
    parser.add_argument("--arm", default="default")
    parser.add_argument("--traces", required=True, help="the trace store the arm wrote")
    parser.add_argument("--log-dir", default="bench/runs/2026-12-05/firsthour")
    args = parser.parse_args(argv)
    folder = Path(args.log_dir) / f"{args.set}-{args.arm}"
    table: Counter[tuple[bool, bool]] = Counter()
    asked: Counter[tuple[bool, bool]] = Counter()
    rows = []
    with TraceStore(args.traces) as store:
        for spec in agents_of(args.set, args.seed):
            path = folder / f"{spec.name}.jsonl"
            if not path.exists():
                continue
            agent = spec.build(ScriptedModel([]))
            fixed = [spec.instructions, *(t.description for t in agent.model_settings.tools)]
            described = {t.name: t.description for t in agent.model_settings.tools}
            for record in read_records(path)[1]:
                trace = store.get(record.run_id) if record.run_id else None
                if trace is None:
                    continue
                results = [c.result for s in trace.steps for c in s.tool_calls
                           if c.kind == "tool" and c.error is None and c.result is not None]
                sources = "\n".join([*fixed, trace.user_prompt or "", *results])
                answer = answer_text(to_jsonable_python(trace.output, fallback=str))
                claims = unsupported_claims(answer, sources)
                calls = [Call(c.name, c.args or {}, c.result, described.get(c.name, ""))
                         for s in trace.steps for c in s.tool_calls
                         if c.kind == "tool" and c.error is None and c.result is not None]
                request = f"{spec.instructions}\n{trace.user_prompt or ''}"
                off = [m.kind for m in mismatches(
                    request, named_units(request), calls,
                    to_jsonable_python(trace.output, fallback=str), list(described.items()))]
                # the answer says what was asked is missing where a result named it, or the
                # last finding was an id no later call was given (no check that a tool takes
                # it: this over-counts the library's said_missing, which asks the agent)
                if SAID_MISSING.search(answer) and (named_returned(request, calls, answer) or (
                        calls and handle_of(calls[-1].result) is not None)):
                    off.append("said_missing")
                score = record.score("right")
                right = bool(score and score.passed)
                table[(right, bool(claims))] += 1
                asked[(right, bool(off))] += 1
                rows.append({"agent": spec.name, "case": record.case, "right": right,
                             "status": record.status, "flagged": claims, "asked": off})
    for row in rows:
        print(f"{row['agent']}/{row['case']}: {'right' if row['right'] else 'WRONG'} "
              f"{row['status']} flagged={row['flagged']} asked={row['asked']}")
    for name, counts in (("grounding", table), ("asked", asked)):
        print(f"{name}: wrong and flagged {counts[(False, True)]}, wrong not flagged "
              f"{counts[(False, False)]}, right and flagged {counts[(True, True)]}, right not "
              f"flagged {counts[(True, False)]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

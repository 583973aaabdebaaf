"""Run the first-hour agents on a model and report per agent, per question and overall.

    nice -n 10 .venv/bin/python -m bench.first_hour.run --set dev --arm default \
        --log-dir bench/runs/2026-12-05/firsthour
    nice -n 10 .venv/bin/python -m bench.first_hour.run --set heldout --arm grounding ...
    .venv/bin/python -m bench.first_hour.run --set heldout --arm default --compare grounding

Each (set, arm) writes one experiment log per agent (``<log-dir>/<set>-<arm>/<agent>.jsonl``,
toolcycle.evals' resumable format: a killed run resumed with the same command runs only what
is missing), ``meta.jsonl`` (the commit and model each invocation ran at) and ``summary.json``.
``--compare ARM`` reads another arm's logs of the same set and prints the paired comparison
(sign test over questions that changed).

Traces go to ``$TOOLCYCLE_TRACE_DB`` when set (``toolcycle trace show RUN_ID``).

Arms: ``default`` (the Agent's defaults), ``grounding`` (``Agent(grounding=True)``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from toolcycle import Limits, ModelSettings
from toolcycle.evals import Experiment, ExperimentReport, RunRecord, compare, read_records

from .heldout import REPORT_SEED
from .suite import RIGHT, FirstHourAgent

#: ``default`` leaves every option at the library's default (grounding on for local models
#: since issue 68; the 2026-12-05 default arms ran before that, with it off).
#: ``attempts4``: a fourth answer attempt (the checks never re-ask on the last attempt, so
#: with three a run whose first re-ask went to an answer given before any tool result has one
#: re-ask left over the results).
#: ``no-invented``: the local model's question about invented values off (docs/local-model.md,
#: "Invented values"; chosen on single-turn BFCL entries): in an agent loop the call it asks
#: about would otherwise meet the loop's own refusal of figures from nowhere, which ends no
#: attempt, where the answer in words the question invites ends one when grounding refuses it.
ARMS: dict[str, dict[str, Any]] = {
    "default": {}, "grounding": {"grounding": True}, "no-grounding": {"grounding": False},
    "attempts4": {"limits": Limits(max_attempts=4)},
    "no-invented": {"model_settings": ModelSettings(extra={"invented_values": False})}}


def agents_of(which: str, seed: int) -> tuple[FirstHourAgent, ...]:
    if which == "dev":
        from . import dev_a, dev_b

        return dev_a.AGENTS + dev_b.AGENTS
    from .heldout import heldout_agents

    return heldout_agents(seed)


def only(agents: tuple[FirstHourAgent, ...], keys: list[str]) -> tuple[FirstHourAgent, ...]:
    """The agents with only the questions ``keys`` name (``agent/question``); an unknown key
    is an error, not a silent empty run."""
    wanted = {tuple(key.split("/", 1)) for key in keys if key}
    known = {(a.name, q.name) for a in agents for q in a.questions}
    if unknown := sorted("/".join(k) for k in wanted - known):
        raise SystemExit(f"--only: no such agent/question: {', '.join(unknown)}")
    return tuple(replace(a, questions=[q for q in a.questions if (a.name, q.name) in wanted])
                 for a in agents if any(name == a.name for name, _ in wanted))


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


async def run_arm(agents: tuple[FirstHourAgent, ...], arm: str, model: Any, out: Path,
                  repeats: int) -> dict[str, ExperimentReport]:
    out.mkdir(parents=True, exist_ok=True)
    reports = {}
    for spec in agents:
        agent = spec.build(model, **ARMS[arm])
        experiment = Experiment(agent, spec.dataset(), [RIGHT], repeats=repeats, concurrency=1,
                                log=out / f"{spec.name}.jsonl", trace_store=None,
                                identity=f"{spec.name} {arm}")
        reports[spec.name] = await experiment.run()
        print(f"  {spec.name}: " + " ".join(
            f"{r.case}={'R' if _right(r) else 'w'}/{r.status}" for r in reports[spec.name].records),
            flush=True)
    return reports


def _right(record: RunRecord) -> bool:
    score = record.score("right")
    return score is not None and score.passed


def pooled(reports: dict[str, ExperimentReport], name: str) -> ExperimentReport:
    """Every agent's runs in one report, cases named ``agent/question``."""
    records = [replace(r, case=f"{agent}/{r.case}", kind=agent)
               for agent, report in reports.items() for r in report.records]
    return ExperimentReport.from_records(name, ["right"], records)


def summary(report: ExperimentReport) -> dict[str, Any]:
    """The issue's two figures: the share right, and whether the status says so when not."""
    records = report.records
    right = report.evaluator("right").passed
    statuses = Counter(r.status for r in records)
    wrong = [r for r in records if not _right(r)]
    return {
        "runs": len(records),
        "right": {"share": round(right.mean, 3), "low": round(right.low, 3),
                  "high": round(right.high, 3), "count": sum(map(_right, records))},
        "statuses": dict(statuses),
        "wrong_by_status": dict(Counter(r.status for r in wrong)),
        "wrong_reported_success": sum(r.status == "success" for r in wrong),
        "right_not_success": sum(_right(r) and r.status != "success" for r in records),
        "mean_iterations": round(sum(r.iterations for r in records) / max(1, len(records)), 2),
        "mean_tokens": round(sum(r.tokens for r in records) / max(1, len(records))),
        "mean_latency_s": round(sum(r.latency_s for r in records) / max(1, len(records)), 1),
    }


def both_ran(report: ExperimentReport, other: ExperimentReport) -> ExperimentReport:
    """``report`` restricted to the (question, repeat) keys ``other`` also has."""
    keys = {r.key for r in other.records}
    return ExperimentReport.from_records(report.name, report.evaluators,
                                         [r for r in report.records if r.key in keys])


def paired_table(a: ExperimentReport, b: ExperimentReport) -> str:
    """Per agent, in each arm: right, wrong reported as ``success``, wrong with a status that
    says so (the issue's two figures: the share right, and an honest status when not)."""
    lines = [f"| agent | right {a.name} | right {b.name} | wrong+success {a.name} | "
             f"wrong+success {b.name} | wrong, honest status {a.name} | "
             f"wrong, honest status {b.name} | statuses {b.name} |",
             "|---|---|---|---|---|---|---|---|"]
    for kind in dict.fromkeys(r.kind for r in a.records):
        sa, sb = (summary(ExperimentReport.from_records(x.name, ["right"], [
            r for r in x.records if r.kind == kind])) for x in (a, b))
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(sb["statuses"].items()))
        honest = [s["runs"] - s["right"]["count"] - s["wrong_reported_success"]
                  for s in (sa, sb)]
        lines.append(f"| {kind} | {sa['right']['count']}/{sa['runs']} | "
                     f"{sb['right']['count']}/{sb['runs']} | {sa['wrong_reported_success']} | "
                     f"{sb['wrong_reported_success']} | {honest[0]} | {honest[1]} | "
                     f"{statuses} |")
    return "\n".join(lines)


def table(reports: dict[str, ExperimentReport]) -> str:
    lines = ["| agent | right | statuses | wrong+success | iter | tokens |",
             "|---|---|---|---|---|---|"]
    for agent, report in reports.items():
        s = summary(report)
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items()))
        lines.append(f"| {agent} | {s['right']['count']}/{s['runs']} | {statuses} | "
                     f"{s['wrong_reported_success']} | {s['mean_iterations']} | "
                     f"{s['mean_tokens']} |")
    return "\n".join(lines)


def load_reports(agents: tuple[FirstHourAgent, ...], out: Path) -> dict[str, ExperimentReport]:
    reports = {}
    for spec in agents:
        path = out / f"{spec.name}.jsonl"
        if path.exists():
            _, records = read_records(path)
            reports[spec.name] = ExperimentReport.from_records(spec.name, ["right"], records)
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--seed", type=int, default=REPORT_SEED,
                        help="held-out set's seed (68: the first session's, now development "
                        "data)")
    parser.add_argument("--arm", choices=tuple(ARMS), default="default")
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads of a "
                        "local: model (0: the library's default)")
    parser.add_argument("--agents", default="", help="comma-separated agent names (all)")
    parser.add_argument("--only", default="", help="comma-separated agent/question keys "
                        "(shop/value,h01-exhibit/sum): only these questions run")
    parser.add_argument("--log-dir", default="bench/runs/2026-12-05/firsthour")
    parser.add_argument("--compare", default="", help="another arm to compare with (no runs)")
    parser.add_argument("--tag", default="", help="suffix of the arm's folder: the same arm "
                        "on other code (a changed default) gets its own logs")
    args = parser.parse_args(argv)
    agents = agents_of(args.set, args.seed)
    if args.agents:
        wanted = set(args.agents.split(","))
        unknown = wanted - {a.name for a in agents}
        if unknown:  # (an empty run that reports 0 of 0 reads like a result)
            raise SystemExit(f"--agents: no agent {', '.join(sorted(unknown))} in this set: "
                             f"{', '.join(a.name for a in agents)}")
        agents = tuple(a for a in agents if a.name in wanted)
    if args.only:
        agents = only(agents, args.only.split(","))
    root = Path(args.log_dir)
    out = root / f"{args.set}-{args.arm}{'-' + args.tag if args.tag else ''}"
    if args.compare:  # another folder's name under the same set: an arm, or arm-tag
        a = pooled(load_reports(agents, root / f"{args.set}-{args.compare}"), args.compare)
        b = pooled(load_reports(agents, out), out.name.removeprefix(f"{args.set}-"))
        a, b = both_ran(a, b), both_ran(b, a)  # an arm cut short: the questions both ran
        change = compare(a, b)
        print(json.dumps({a.name: summary(a), b.name: summary(b)}, indent=1))
        print(paired_table(a, b))
        print(f"{a.name} -> {b.name}: better {change.better}, worse {change.worse}, "
              f"sign test p={change.p_value:.3f}")
        return 0
    from toolcycle.models import resolve_model

    if args.threads and args.model.startswith("local:"):
        from toolcycle.models.local.llama import PROTOCOLS, local_model

        name, _, query = args.model.removeprefix("local:").partition("?")
        options = dict(parse_qsl(query))  # protocol= only (the rest: leave --threads out)
        if set(options) - {"protocol"}:
            raise SystemExit(f"--threads takes a model string with protocol= only: {args.model}")
        protocol = next((p for p in PROTOCOLS if p == options.get("protocol")), None)
        model = local_model(name, n_threads=args.threads, protocol=protocol)
    else:
        model = resolve_model(args.model)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "meta.jsonl").open("a", encoding="utf-8") as meta:
        meta.write(json.dumps({"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "commit": commit(), "model": args.model, "arm": args.arm,
                               "set": args.set, "seed": args.seed, "threads": args.threads,
                               "only": args.only,
                               "agents": [a.name for a in agents]}) + "\n")
    reports = asyncio.run(run_arm(agents, args.arm, model, out, args.repeats))
    everything = pooled(reports, f"{args.set}-{args.arm}")
    result = {"set": args.set, "arm": args.arm, "model": args.model, "commit": commit(),
              "all": summary(everything),
              "agents": {name: summary(report) for name, report in reports.items()}}
    if len(agents) == len(agents_of(args.set, args.seed)) and not args.only:
        (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(reports))
    print(json.dumps(result["all"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

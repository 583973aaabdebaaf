"""Does learning help on generated suites? toolcycle.evals' playbook A/B per seed, then per kind.

    nice -n 10 .venv/bin/python bench/learning_gen/measure.py run --seed 1001 \\
        --protocol react --label main-1c0a2c8 --threads 2      # one seed, resumable
    .venv/bin/python bench/learning_gen/measure.py report --label main-1c0a2c8 --protocol react

``run`` measures one seed in the configuration docs/playbook.md tells a user to use: the
local 1.5B (``local:qwen2.5-coder-1.5b``, the default JSON protocol, or ReAct with
``--protocol react``), ``Agent(model, instructions, tools, name=..., playbook=pb)`` with no
other settings, ``Playbook(path)`` with its defaults, the lookups declared ``read_only`` (the
docs' first example; ``--no-read-only`` for a user who declares nothing), and offline learning
on the train split graded by the exact answer (:func:`toolcycle.evals.playbook_ab`: no
playbook vs the learned playbook frozen, on the test split). ``--reflector llm`` has the same
local model write the lessons instead (:class:`toolcycle.playbook.LLMReflector`, rule lessons
off; ``both`` keeps them too), the comparison issue 69 asks for; give it its own ``--label``.
Everything goes under ``OUT/LABEL/PROTOCOL/seed-N/``: the two arms' experiment logs (JSONL,
resumed when rerun), the playbook and its learning session (resumed), ``traces.db`` (every
run's trace, train and test, for ``toolcycle trace``), and ``result.json``.

``report`` pools the seeds measured under one label and protocol: per kind, success in both
arms, iterations over all runs and over the pairs where both arms passed, tokens, and the
share of test tasks made worse, each as the paired mean over cases with its 95 % interval,
and the per-seed relative changes with their interval over seeds. Seeds to measure are fixed
in ``test_seeds.json`` before measuring; the generator was built on the ``dev`` seeds alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: learning_gen itself

from learning_gen import ExactAnswer, generate
from toolcycle import Agent
from toolcycle.evals import playbook_ab
from toolcycle.evals.compare import Comparison, compare
from toolcycle.evals.records import RunRecord
from toolcycle.evals.report import ExperimentReport
from toolcycle.evals.stats import mean_interval
from toolcycle.playbook import LLMReflector, Playbook

OUT = Path(__file__).resolve().parents[1] / "runs" / "2026-12-05" / "learngen"
MODEL = "local:qwen2.5-coder-1.5b"


def model_string(protocol: str) -> str:
    return MODEL if protocol == "json" else f"{MODEL}?protocol={protocol}"


def seed_dir(out: Path, label: str, protocol: str, seed: int) -> Path:
    return out / label / protocol / f"seed-{seed}"


async def run_seed(args: argparse.Namespace) -> dict[str, Any]:
    from toolcycle.models import resolve_model

    if args.threads:  # several benchmarks share two cores: as bench/learning.py --threads
        from toolcycle.models.local import llama

        llama.default_threads = lambda: int(args.threads)
    suite = generate(args.seed, train=args.train, test=args.test, read_only=args.read_only,
                     kinds=tuple(args.kinds.split(",")) if args.kinds else None)
    model = resolve_model(model_string(args.protocol))
    folder = seed_dir(args.out, args.label, args.protocol, args.seed)
    folder.mkdir(parents=True, exist_ok=True)

    def make_agent(playbook: Playbook | None) -> Agent[Any, Any]:
        # every run's trace, to read why a task went the way it did (`toolcycle trace show`)
        return Agent(model, suite.instructions, list(suite.tools), name=suite.agent_name,
                     playbook=playbook, trace_store=folder / "traces.db")

    options: dict[str, Any] = {} if args.guide is None else {"guide": args.guide}
    if args.reflector != "rules":  # the model writes lessons too ("both") or alone ("llm")
        options["llm_reflector"] = LLMReflector(model)
        options["rule_lessons"] = args.reflector == "both"
    result = await playbook_ab(make_agent, suite.dataset, [ExactAnswer()],
                               playbook=folder / "playbook.db", log_dir=folder,
                               name=f"gen{args.seed}-{args.protocol}", progress=False,
                               playbook_options=options)
    data = json.loads(result.to_json())
    data["suite"] = {"seed": args.seed, "domain": suite.domain.key, "model":
                     model_string(args.protocol), "read_only": args.read_only,
                     "variants": {p.kind: p.variant for p in suite.parts},
                     "train": args.train, "test": args.test, "kinds": args.kinds or "all",
                     "playbook_options": {k: v for k, v in options.items()
                                          if k != "llm_reflector"},
                     "reflector": args.reflector}
    (folder / "result.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(result.render(), flush=True)
    return data


def _arm(data: dict[str, Any], arm: str) -> list[RunRecord]:
    return [RunRecord.from_dict(r) for r in data[arm]["records"]]


def _change(comparison: Comparison, metric: str, both: bool) -> tuple[float, float, float]:
    """(mean a, mean b, relative change b/a - 1 in %), NaN where there is nothing."""
    table = comparison.metrics_both_passed if both else comparison.metrics
    m = table.get(metric)
    if m is None or not m.pairs or not m.a:
        return float("nan"), float("nan"), float("nan")
    return m.a, m.b, 100 * (m.b / m.a - 1)


def _logged(folder: Path) -> dict[str, Any] | None:
    """A seed's result: its ``result.json``, else what its two arms' logs hold so far (an
    unfinished measurement: the cases both arms ran are compared; learning figures unknown)."""
    if (folder / "result.json").exists():
        data: dict[str, Any] = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        return data
    arms = {}
    for arm, log in (("baseline", "baseline.jsonl"), ("with_playbook", "playbook.jsonl")):
        lines = (folder / log).read_text(encoding="utf-8").splitlines()[1:] if (
            folder / log).exists() else []
        arms[arm] = {"records": [json.loads(line) for line in lines if line.strip()]}
    if not arms["with_playbook"]["records"]:
        return None
    seed = int(folder.name.removeprefix("seed-"))
    return {**arms, "strategies": "?", "train_pass_rate": float("nan"),
            "suite": {"seed": seed, "domain": generate(seed).domain.key + " (unfinished)"}}


def _with_b_log(folder: Path, data: dict[str, Any], b_log: str) -> dict[str, Any] | None:
    """``data`` with its playbook arm read from ``b_log`` in ``folder`` (an ablation's log,
    ablate.py), None where the seed has none."""
    path = folder / b_log
    if not path.exists():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return {**data, "with_playbook": {"records": [json.loads(x) for x in lines if x.strip()]}}


def report(args: argparse.Namespace) -> str:
    folders = sorted((args.out / args.label / args.protocol).glob("seed-*"))
    results = [data for f in folders if (data := _logged(f)) is not None]
    if args.b_log:
        results = [d for f in folders if (data := _logged(f)) is not None
                   and (d := _with_b_log(f, data, args.b_log)) is not None]
    if not results:
        return f"no results under {args.out / args.label / args.protocol}"
    a = [r for data in results for r in _arm(data, "baseline")]
    b = [r for data in results for r in _arm(data, "with_playbook")]
    base = ExperimentReport.from_records("baseline", ["answer"], a)
    with_pb = ExperimentReport.from_records("playbook", ["answer"], b)
    per_seed = [compare(ExperimentReport.from_records("a", ["answer"], _arm(d, "baseline")),
                        ExperimentReport.from_records("b", ["answer"], _arm(d, "with_playbook")))
                for d in results]
    seeds = [d["suite"]["seed"] for d in results]
    lines = [f"{args.label} / {args.protocol}: seeds {seeds} "
             f"({', '.join(d['suite']['domain'] for d in results)}), "
             f"{len(a)} test runs per arm; strategies learned "
             f"{[d['strategies'] for d in results]}, train pass "
             f"{[round(d['train_pass_rate'], 2) for d in results]}",
             "| kind | success | iterations (all) | iterations (both passed) | tokens | worse |",
             "|---|---|---|---|---|---|"]
    kinds_a, kinds_b = base.kinds(), with_pb.kinds()
    rows = [("all", compare(base, with_pb))] + [
        (k, compare(kinds_a[k], kinds_b[k])) for k in kinds_a if k in kinds_b]
    for kind, c in rows:
        it_a, it_b, it_d = _change(c, "iterations", False)
        bp_a, bp_b, bp_d = _change(c, "iterations", True)
        tk_a, tk_b, tk_d = _change(c, "tokens", False)
        lines.append(
            f"| {kind} | {c.pass_rate_a:.0%} → {c.pass_rate_b:.0%} | {it_a:.2f} → {it_b:.2f}"
            f" ({it_d:+.0f} %, Δ {c.metrics['iterations'].difference}) | {bp_a:.2f} → "
            f"{bp_b:.2f} ({bp_d:+.0f} %) | {tk_a:.0f} → {tk_b:.0f} ({tk_d:+.0f} %) | "
            f"{len(c.worse)} of {len(c.cases)} |")
    over = {name: mean_interval([v for v in values if v == v]) for name, values in {
        "success points": [100 * (c.pass_rate_b - c.pass_rate_a) for c in per_seed],
        "iterations %": [_change(c, "iterations", False)[2] for c in per_seed],
        "iterations % (both passed)": [_change(c, "iterations", True)[2] for c in per_seed],
        "tokens %": [_change(c, "tokens", False)[2] for c in per_seed],
        "share worse %": [100 * c.share_worse for c in per_seed]}.items()}
    lines.append("over seeds (mean [95 % t interval], n seeds): " + "; ".join(
        f"{name} {estimate}" for name, estimate in over.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "report"))
    parser.add_argument("--seed", type=int)
    parser.add_argument("--protocol", choices=("json", "react"), default="json")
    parser.add_argument("--label", required=True, help="what is measured, e.g. main-1c0a2c8")
    parser.add_argument("--train", type=int, default=3, help="train tasks per kind")
    parser.add_argument("--test", type=int, default=2, help="test tasks per kind")
    parser.add_argument("--kinds", default="", help="comma-separated kinds (default: all)")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads")
    parser.add_argument("--read-only", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--guide", type=int, default=None,
                        help="Playbook(guide=N) in both playbook runs (default: its default)")
    parser.add_argument("--reflector", choices=("rules", "llm", "both"), default="rules",
                        help="who writes the lessons: the deterministic reflector (the "
                             "default), the model itself (LLMReflector, same model), or both")
    parser.add_argument("--b-log", default="",
                        help="report: the playbook arm from this log of each seed (ablate.py)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.seed is None:
            parser.error("run needs --seed")
        asyncio.run(run_seed(args))
    else:
        print(report(args))


if __name__ == "__main__":
    main()

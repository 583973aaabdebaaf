"""``toolcycle eval DATASET --agent SPEC --tools MODULE --model MODEL``: measure an agent.

Runs the bound spec over every case of a JSONL or YAML dataset (``--repeats`` times, with
``--concurrency``, here or on ``--ray``), scores each run (``--check``, default from the
dataset), prints the per-case table on stdout (a progress bar on stderr while it runs, on a
terminal) and writes ``--html`` / ``--json`` reports. ``--log`` makes it resumable: a rerun
after a kill runs only what the log does not have. ``--baseline LOG`` compares this run with
an earlier one, paired by case; ``--playbook-ab PLAYBOOK.db`` runs the playbook A/B instead
(learn on the train split, then no playbook vs the frozen playbook on the test split).

Exit status: 0; 1 when ``--min-pass-rate`` is not reached; 2 when the dataset, spec, tools or
log cannot be used (every bad dataset row listed).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..batch import BatchRecipe
from ..evals import Dataset, DatasetError, Experiment, ExperimentLogError, compare, read_records
from ..evals.named import default_evaluators, named_evaluators
from ..evals.report import ExperimentReport
from ._loading import CommandError, guarded, load_library, load_spec, resolve_model_argument


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("eval", help="measure an agent spec on a dataset of cases")
    parser.add_argument("dataset", help="cases: DATASET.jsonl or DATASET.yaml")
    parser.add_argument("--agent", required=True, metavar="SPEC",
                        help="the agent spec, AGENT.gram or AGENT.json")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE",
                        help="python module (or .py file) with the implementations; repeatable")
    parser.add_argument("--model", help="model string (default: the spec's model)")
    parser.add_argument("--check", action="append", default=[], metavar="EVALUATOR",
                        help="equals, contains, numeric[:TOL], regex:PATTERN, schema:FILE, "
                        "trajectory[:MODE[:names]], judge:MODEL; repeatable (default: "
                        "contains and/or trajectory, from what the cases expect)")
    parser.add_argument("--rubric", help="what the LLM judge (--check judge:MODEL) looks for")
    parser.add_argument("--repeats", type=int, default=1, metavar="N", help="runs per case")
    parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                        help="runs at once (per Ray task with --ray; default 4)")
    parser.add_argument("--max-iterations", type=int, help="override the spec's limit")
    parser.add_argument("--name", help="the experiment's name (default: the dataset's)")
    parser.add_argument("--price", type=_price, metavar="IN,OUT",
                        help="USD per million input and output tokens, for runs whose model "
                        "has no known price (the cost column)")
    parser.add_argument("--log", metavar="LOG.jsonl",
                        help="record each run as it finishes; a rerun resumes from it")
    parser.add_argument("--html", metavar="REPORT.html", help="write the HTML report")
    parser.add_argument("--json", metavar="REPORT.json", help="write the JSON report")
    parser.add_argument("--baseline", metavar="LOG.jsonl",
                        help="compare with an earlier experiment's log, paired by case")
    parser.add_argument("--min-pass-rate", type=float, metavar="RATE",
                        help="exit 1 when the pass rate is below RATE (for CI)")
    parser.add_argument("--playbook-ab", metavar="PLAYBOOK.db",
                        help="learn a playbook on the train split, then compare the test split "
                        "without it and with it frozen")
    parser.add_argument("--train", type=float, default=0.5, metavar="SHARE",
                        help="train share for --playbook-ab when cases have no 'split'")
    parser.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    parser.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                        help="run on Ray: alone, start a local Ray; with ADDRESS, join it")
    parser.add_argument("--workers", type=int, metavar="N", help="CPUs of a local --ray")
    parser.add_argument("--trace-db", metavar="PATH",
                        help="SQLite path or postgresql:// URL the traces go to")
    parser.add_argument("--no-trace", action="store_true", help="record no traces")
    parser.set_defaults(handler=_eval)


@guarded
def _eval(args: argparse.Namespace) -> int:
    try:
        dataset = Dataset.load(args.dataset)
    except DatasetError as exc:
        raise CommandError(str(exc)) from exc
    evaluators = (named_evaluators(args.check, rubric=args.rubric,
                                   resolve_model=resolve_model_argument) if args.check
                  else default_evaluators(dataset))
    store: str | bool = False if args.no_trace else (args.trace_db or True)
    name = args.name or dataset.name
    if args.playbook_ab:
        return _playbook_ab(args, dataset, evaluators, store, name)
    recipe = BatchRecipe.from_files(args.agent, args.tools, model=args.model,
                                    trace_store=False, max_iterations=args.max_iterations)
    if args.ray is None:
        load_spec(args.agent)  # a bad spec is one line on stderr, before anything runs
    experiment = Experiment(recipe, dataset, evaluators, name=name, repeats=args.repeats,
                            concurrency=args.concurrency, log=args.log, trace_store=store,
                            max_iterations=args.max_iterations, ray=args.ray,
                            workers=args.workers, identity=_identity(recipe),
                            price_per_million=args.price)
    try:
        report = experiment.run_sync()
    except ExperimentLogError as exc:
        raise CommandError(str(exc)) from exc
    print(report.render_table())
    _write(report, args)
    if args.baseline:
        print(compare(_baseline(args.baseline, report), report).render())
    if args.min_pass_rate is not None and report.passed.mean < args.min_pass_rate:
        print(f"pass rate {report.passed.mean:.3f} is below --min-pass-rate "
              f"{args.min_pass_rate}", file=sys.stderr)
        return 1
    return 0


def _price(text: str) -> tuple[float, float]:
    """``--price 0.15,0.60``: USD per million input and output tokens."""
    try:
        given, taken = (float(part) for part in text.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected IN,OUT (two numbers), got {text!r}") from exc
    return given, taken


def _identity(recipe: BatchRecipe) -> str:
    """What ran, as a short hash: the spec's text, the tool modules and the model string."""
    text = "\n".join([recipe.spec_text, *recipe.tools, recipe.model or ""])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _write(report: ExperimentReport, args: argparse.Namespace) -> None:
    for path in (args.html, args.json):
        if path:
            try:
                report.save(path)
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot write {path}: {exc}") from exc
            print(f"report written to {terminal_safe(path)}", file=sys.stderr)


def _baseline(path: str, report: ExperimentReport) -> ExperimentReport:
    try:
        header, records = read_records(path)
    except (OSError, ExperimentLogError) as exc:
        raise CommandError(f"--baseline: {exc}") from exc
    return ExperimentReport.from_records(str(header.get("experiment", Path(path).stem)),
                                         list(header.get("evaluators", [])), records)


def _playbook_ab(args: argparse.Namespace, dataset: Dataset, evaluators: list[Any],
                 store: str | bool, name: str) -> int:
    from ..evals import playbook_ab

    spec = load_spec(args.agent)
    library = load_library(args.tools)
    model = resolve_model_argument(args.model)

    def make_agent(playbook: Any) -> Any:
        return spec.bind(library, model=model, trace_store=store, playbook=playbook)

    log_dir = Path(args.log) if args.log else None
    result = asyncio.run(playbook_ab(
        make_agent, dataset, evaluators, playbook=args.playbook_ab, train=args.train,
        seed=args.seed, repeats=args.repeats, concurrency=args.concurrency, log_dir=log_dir,
        name=name))
    print(result.render())
    if args.json:
        Path(args.json).write_text(result.to_json(), encoding="utf-8")
    if args.html:  # one page per arm, beside each other
        target = Path(args.html)
        for arm, report in (("baseline", result.baseline), ("playbook", result.with_playbook)):
            report.save(target.with_name(f"{target.stem}.{arm}.html"))
    return 0

"""Does the playbook help? Test split without a playbook vs. with one learned on the train split.

    .venv/bin/python bench/learning.py --suite rail \
        --model "local:qwen2.5-coder-1.5b?protocol=react" --repeats 3 --threads 2 \
        --out rail-react.json                         # ~25 min on 2 cores
    .venv/bin/python bench/learning.py --suite path/to/your_suite ...   # a suite of your own
    .venv/bin/python bench/learning.py --retrieval          # retrieval latency at 10k strategies

Seven task suites, each with four kinds of question, train and test splits asking about
different entities in varied wording:

- ``chains`` (bench/learning_tasks/, the default): each kind is answered by chaining two
  specific tools out of nine; the tool descriptions already say how to chain them.
- ``sources`` (bench/learning_tasks/sources/): each kind is answered by one lookup in the
  right one of four look-alike record systems with opaque names; only experience says which.
- ``rail`` (bench/learning_tasks/rail/): a primary tool that always times out beside a working
  alternative, a database that is empty for some topics, a date format only the tool's error
  states, and an id to look up before the detail call.
- ``depot`` (bench/learning_tasks/depot/): the same four kinds of lesson in a wholesaler's
  tools, with every surface changed (a connection error, ``null``, a country code, an id
  inside a JSON record), written after the playbook was frozen at 9336225 and measured on it
  untuned first.
- ``clinic`` (bench/learning_tasks/clinic/): the four kinds once more in an outpatient
  clinic's tools (a quota error, an empty page, an ISO 8601 duration, an order id picked out
  of a list; the alternative names its parameter apart), written on 2026-12-01 and first
  run at cefe474, before any change made from its runs.
- ``helpdesk`` (bench/learning_tasks/helpdesk/): the four kinds in an IT helpdesk's tools
  (an expired TLS certificate, an "ok" envelope around nothing, a P-code priority, a device
  id picked out of a list by its type), written on 2026-12-01 after 4aec202, before any run.
- ``hotel`` (bench/learning_tasks/hotel/): the four kinds in a hotel front desk's tools (a
  revoked API token, a null page, a 24-hour clock time where the task says "7:30 pm", a folio
  id picked out of a list by its outlet), written on 2026-12-02 at 93d8851, before any run.

A suite is a folder with ``tools.py`` and the tasks (``train.json``, ``test.json``: lists of
``{"id", "kind", "prompt", "expected"}``; ``expected`` may be a list of answers, any one of
which counts). ``tools.py`` defines ``TOOLS`` (functions or
:class:`~toolcycle.tools.Tool` objects) and optionally ``INSTRUCTIONS``, ``AGENT_NAME``,
``FEWEST_ITERATIONS`` (per kind, for the report's floors) and ``READ_ONLY = True`` when every
tool is a lookup: only tools declared read-only may be called by the playbook for the model
(a routine standing in for its first tool, a fallback, a repair), as in any agent. Phase 1
learns a playbook offline from the train split (``learn``, judged against the expected
answers; after a failed train run the learner probes the other read-only tools with its
missed calls' arguments, ``--no-probe`` to turn that off: toolcycle.playbook.probe). Phase 2
runs the test split ``--repeats`` times with the same model and seeds, once without a playbook
and once with the learned one frozen (read-only, so both arms see the same playbook on every
repeat), with ``Playbook(routines=True)`` unless ``--no-routines``. Baseline
and playbook runs alternate per repeat so that load on the shared machine hits both alike.
Each arm's repeats are a ``toolcycle.evals`` experiment (the tool users get: the same scoring,
log and intervals), logged with their traces under ``OUT.runs/``, so a bench killed in phase 2
resumes there when rerun with the same ``--out`` and ``--playbook``.

Figures per arm: success rate, mean iterations, mean tokens and wall time per task, each as the
mean over repeats ± the standard deviation between repeats, then the paired differences with
95 % intervals, per kind, the floors each kind allows and the share of tasks made worse.

The suites here are hand-written, and every playbook rule was tuned on some of them; they are
for finding what fails, not for the figures the docs publish. Those come from suites
*generated* in many domains from seeds fixed before measuring (bench/learning_gen/, its
``measure.py``: toolcycle.evals' playbook A/B in the configuration docs/playbook.md tells a
user to use, the defaults), reported in docs/playbook.md, "Measured".
Results go to stdout and, with ``--out``, to a JSON file with every run (and the rendered trace
of every learning run). ``--learn-only`` stops after phase 1, to check on the train split that
a suite is well posed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcycle import Agent, Limits, Tool
from toolcycle.evals import Dataset, Experiment, Function
from toolcycle.models.base import ModelSettings
from toolcycle.playbook import Curator, LearningTask, LLMReflector, Playbook, Strategy, learn
from toolcycle.playbook.evidence import classify
from toolcycle.playbook.fallback import fell_back
from toolcycle.playbook.reshape import reshaped
from toolcycle.playbook.respell import respelled_call
from toolcycle.playbook.routine import repaired
from toolcycle.playbook.routine_result import steps_of
from toolcycle.tracing.store import TraceStore

TASK_DIR = Path(__file__).resolve().parent / "learning_tasks"
SUITES = {"chains": TASK_DIR, "sources": TASK_DIR / "sources", "rail": TASK_DIR / "rail",
          "depot": TASK_DIR / "depot", "clinic": TASK_DIR / "clinic",
          "helpdesk": TASK_DIR / "helpdesk", "hotel": TASK_DIR / "hotel"}
#: The instructions and agent name of a suite whose tools.py defines none (the chains suite).
INSTRUCTIONS = (
    "You are a company assistant with tools. Your first reply must be a tool call: the data "
    "you are asked about is private and changes daily, so you do not know it. Answer with the "
    "exact figure or status a tool returned."
)
AGENT_NAME = "lookup_assistant"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _load_report() -> Any:
    """bench/learning_report.py, loaded by path (bench/ is not a package)."""
    path = Path(__file__).resolve().parent / "learning_report.py"
    spec = importlib.util.spec_from_file_location("learning_report", path)
    if spec is None or spec.loader is None:
        raise ImportError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("learning_report", module)
    spec.loader.exec_module(module)
    return module


report = _load_report()


@dataclass(frozen=True)
class Suite:
    """A task suite: its tools, the instructions both arms get, and its task files."""

    name: str
    directory: Path
    tools: list[Any]
    instructions: str
    agent_name: str
    module: Any  # the suite's tools.py, for its data

    def tasks(self, split: str) -> list[LearningTask]:
        data = json.loads((self.directory / f"{split}.json").read_text())
        return [LearningTask.coerce(item, i) for i, item in enumerate(data)]


def load_suite(name: str) -> Suite:
    """Import a suite's tools.py by path (each suite has its own, so no shared module name).

    ``name``: one of :data:`SUITES`, or the path of a suite folder of your own (held-out
    tasks, say: see the module docstring for what it holds)."""
    directory = SUITES.get(name) or Path(name)
    if not all((directory / f).is_file() for f in ("tools.py", "train.json", "test.json")):
        raise SystemExit(f"no suite {name!r}: give one of {', '.join(sorted(SUITES))} or a "
                         "folder with tools.py, train.json and test.json")
    if name not in SUITES:
        name = re.sub(r"\W", "_", directory.resolve().name) or "suite"
    spec = importlib.util.spec_from_file_location(f"learning_suite_{name}",
                                                  directory / "tools.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no tools.py in {directory}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Suite(name, directory, list(module.TOOLS),
                 getattr(module, "INSTRUCTIONS", INSTRUCTIONS),
                 getattr(module, "AGENT_NAME", AGENT_NAME), module)


def evaluate(task: LearningTask, output: Any) -> bool:
    """Numbers must appear as numbers (so "5" does not match "15"); statuses as text. A list
    of expected answers (a suite's own: ``"expected": ["late", "delayed"]``) takes any one."""
    text = str(output or "")
    answers = task.expected if isinstance(task.expected, list) else [task.expected]
    return any(_found(str(expected), text) for expected in answers)


def _found(expected: str, text: str) -> bool:
    if _NUMBER.fullmatch(expected):
        return any(float(n) == float(expected) for n in _NUMBER.findall(text.replace(",", "")))
    return expected.lower() in text.lower()


def make_agent(suite: Suite, model: Any, seed: int, temperature: float, max_iterations: int,
               playbook: Playbook | None) -> Agent[Any, str]:
    read_only = getattr(suite.module, "READ_ONLY", False) is True  # lookups, declared so
    tools = [t if isinstance(t, Tool) else Tool.from_function(t, read_only=read_only)
             for t in suite.tools]
    return Agent(
        model, suite.instructions, tools, name=suite.agent_name,
        limits=Limits(max_iterations=max_iterations, on_limit="final_answer"),
        model_settings=ModelSettings(temperature=temperature, seed=seed, max_tokens=200),
        playbook=playbook,
    )


def call_outcomes(trace: Any) -> list[tuple[str, str, float]]:
    """The run's tool calls as ``(tool, status, duration ms)``; a call whose result reads back
    as a routine's steps (``steps_of``) counts as those steps instead, untimed. (The playbook's
    statistics read steps of routine and stand-in calls only, and keep a routine's own call
    beside them; here every call is read, and a routine's call is its steps alone.)"""
    names = (set(trace.tools_offered) | {c.name for c in trace.tool_calls}
             if trace.tools_offered else None)  # None: every tool was offered, any name goes
    made: list[tuple[str, str, float]] = []
    for c in classify(trace):
        steps = steps_of(c.call.result, names) if c.call.result else []
        made += ([(st.tool, "ok" if st.status == "ok" else "miss", -1.0) for st in steps]
                 or [(c.call.name, "ok" if c.ok else "miss", c.call.duration_ms)])
    return made


def describe(task: LearningTask, trace: Any, output: Any, error: str | None,
             seconds: float, label: str) -> dict[str, Any]:
    """A run's row, printed as one line (the same in both phases)."""
    row = {
        "task": task.id, "kind": task.kind, "success": evaluate(task, output),
        # whether a tool result of the run held the answer (SC-005: the alternative found,
        # however the model then wrote it)
        "found": any(c.result and evaluate(task, c.result) for c in trace.tool_calls)
        if trace else False,
        "iterations": trace.iterations if trace else 0,
        "tokens": trace.usage.total_tokens if trace else 0,
        "tool_calls": [c.name for c in trace.tool_calls] if trace else [],
        # what each call was given (a claim about a run's call needs no replay to check)
        "call_args": [c.args for c in trace.tool_calls] if trace else [],
        "misses": sum(not c.ok for c in classify(trace)) if trace else 0,
        # each tool call's (tool, status, ms), a routine's steps in place of its call (their
        # time unknown: -1): which tools answered for this kind (learning_report)
        "call_outcomes": call_outcomes(trace) if trace else [],
        "shown": list(trace.strategies_shown) if trace else [],
        # the requests that did not leave the model free: a first call required or named,
        # the answer asked for ("none")
        "tool_choices": [s.tool_choice for s in trace.steps if s.tool_choice] if trace else [],
        # the calls a playbook's stand-in answered for the model, and the replies the text
        # protocol asked the model again after (docs/playbook.md, docs/local-model.md)
        "stood_in": [f"{c.name}:{kind}" for c in (trace.tool_calls if trace else [])
                     for kind, hit in (("reshaped", reshaped(c.name, c.result)),
                                       ("fell back", fell_back(c.name, c.result)),
                                       ("repaired", repaired(c.name, c.result)),
                                       ("respelled", respelled_call(c.name, c.result)))
                     if hit],
        "asked_again": sum(len(s.asked_again) for s in trace.steps) if trace else 0,
        "seconds": round(seconds, 2), "output": str(output)[:200], "error": error,
    }
    mark = "ok " if row["success"] else "BAD"
    print(f"  [{label}] {mark} {task.id:<26} it={row['iterations']} "
          f"tok={row['tokens']:>5} {seconds:5.1f}s {' > '.join(row['tool_calls'])}",
          flush=True)
    return row


def test_dataset(tasks: list[LearningTask]) -> Dataset:
    """The test split as an eval dataset (a task's kind is the case's)."""
    return Dataset.of([{"name": t.id, "inputs": t.prompt, "expected_output": t.expected,
                        "metadata": {"kind": t.kind}} for t in tasks], name="test")


async def run_repeat(agent: Agent[Any, str], dataset: Dataset, tasks: list[LearningTask],
                     arm: str, repeat: int, folder: Path, identity: str
                     ) -> list[dict[str, Any]]:
    """Repeat ``repeat`` of one arm over the test split, as a ``toolcycle.evals`` experiment.

    The figures come from the tool users get: each run is scored by :func:`evaluate` as an
    eval ``Function``, recorded in the arm's experiment log (``folder/ARM.jsonl``; raising
    ``repeats`` by one per call runs only the new repeat, and a bench killed mid-way resumes
    from the log with ``--out``) and traced in ``folder/traces.db``, from which each run's row
    (its tool calls, what the playbook showed, ...) is read back."""
    by_id = {t.id: t for t in tasks}
    answer = Function(lambda case, run: evaluate(by_id[case.name], run.output), name="answer")
    store = TraceStore(folder / "traces.db")
    report = await Experiment(agent, dataset, [answer], name=arm, repeats=repeat,
                              concurrency=1, log=folder / f"{arm}.jsonl", trace_store=store,
                              progress=False, identity=identity).run()
    rows = [describe(by_id[record.case], store.get(record.run_id) if record.run_id else None,
                     record.output, record.error, record.latency_s, f"{arm} r{repeat}")
            for record in report.records if record.repeat == repeat]
    store.close()
    return rows


class LoggedLearner:
    """The learning agent as ``learn`` sees it: each run also printed and kept, with its trace.

    ``learn`` only calls ``run(prompt)``; the wrapped agent's playbook observes each run as
    usual, and a failed run is re-raised (with its partial result) as ``learn`` expects.
    """

    def __init__(self, agent: Agent[Any, str], tasks: list[LearningTask], label: str,
                 playbook: Playbook | None = None) -> None:
        self.agent = agent
        self.playbook = playbook
        self.label = label
        self.by_prompt = {t.prompt: t for t in tasks}
        self.rows: list[dict[str, Any]] = []
        self.traces: dict[str, str] = {}
        #: the active strategies after each run (for SC-003: when was each captured)
        self.strategy_log: list[list[dict[str, Any]]] = []

    async def run(self, prompt: str) -> Any:
        task = self.by_prompt[prompt]
        started = time.perf_counter()
        try:
            result = await self.agent.run(prompt)
        except Exception as exc:
            self._keep(task, getattr(exc, "result", None), f"{type(exc).__name__}: {exc}",
                       time.perf_counter() - started)
            raise
        self._keep(task, result, None, time.perf_counter() - started)
        return result

    def _keep(self, task: LearningTask, result: Any, error: str | None, seconds: float) -> None:
        trace = getattr(result, "trace", None)
        row = describe(task, trace, getattr(result, "output", None), error, seconds, self.label)
        self.rows.append(row)
        pb = self.playbook
        if pb is not None:
            pb.flush()
            self.strategy_log.append([{"id": s.id, "kind": s.kind, "tools": s.tools}
                                      for s in pb.strategies()])
        if trace is not None:
            self.traces[task.id] = trace.render(max_chars=300)
            for c in trace.tool_calls:  # what each lookup returned, to judge the suite by
                answer = (c.error or c.result or "").replace("\n", " ")[:90]
                print(f"      {c.name}({json.dumps(c.args, ensure_ascii=False)}) -> {answer}")
        print(f"      answer: {row['output'][:100]!r}  shown: {row['shown']}", flush=True)


def summarise(repeats: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-repeat means, then mean ± stdev across repeats."""
    def per_repeat(key: str, fn: Any = statistics.fmean) -> list[float]:
        return [float(fn([float(r[key]) for r in rows])) for rows in repeats]

    out: dict[str, Any] = {}
    for key in ("success", "iterations", "tokens", "seconds"):
        values = per_repeat(key)
        out[key] = {"mean": statistics.fmean(values),
                    "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
                    "per_repeat": values}
    return out


def fmt(stat: dict[str, Any], scale: float = 1.0, digits: int = 2) -> str:
    return f"{stat['mean'] * scale:.{digits}f} ± {stat['sd'] * scale:.{digits}f}"


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from toolcycle.models import resolve_model

    suite = load_suite(args.suite)
    if args.threads:  # several benchmarks sharing two cores: one llama.cpp thread each
        from toolcycle.models.local import llama

        llama.default_threads = lambda: int(args.threads)
    model = resolve_model(args.model)
    # a playbook is kept per domain, not per protocol: it may be learned by another model
    learn_model = resolve_model(args.learn_model) if args.learn_model else model
    train, test = suite.tasks("train"), suite.tasks("test")
    if args.limit:
        test = test[: args.limit]
    if args.train_limit:
        train = train[: args.train_limit]
    if args.learn_only:
        test = []
    db = Path(args.playbook or tempfile.mkdtemp(prefix="toolcycle-bench-") + "/playbook.db")
    learned_by = f" · learned by {args.learn_model}" if args.learn_model else ""
    print(f"suite {suite.name} · model {args.model}{learned_by} · train {len(train)} · "
          f"test {len(test)} · "
          f"repeats {args.repeats} · playbook {db}", flush=True)

    t0 = time.perf_counter()
    reflector = (LLMReflector(resolve_model(args.reflector_model) if args.reflector_model
                              else learn_model) if args.lessons in ("llm", "both") else None)
    learn_routines = args.routines if args.learn_routines is None else args.learn_routines
    learner = Playbook(db, curator=Curator(promote_after=args.promote_after),
                       llm_reflector=reflector, rule_lessons=args.lessons != "llm",
                       routines=learn_routines, guide=args.guide)
    outcomes: dict[str, Any] = {}
    learn_runs: list[dict[str, Any]] = []
    strategy_log: list[list[dict[str, Any]]] = []
    learn_traces: dict[str, str] = {}
    for epoch in range(args.epochs):
        # a new seed per epoch: a repeated task is a new run, not a replay of the same one
        agent = LoggedLearner(
            make_agent(suite, learn_model, args.seed + 100 + epoch, args.temperature,
                       args.max_iterations, learner),
            train, f"learn e{epoch + 1}", learner,
        )
        learned_report = await learn(train, agent, evaluate, playbook=learner,
                                     session=f"bench-epoch{epoch}", progress=False,
                                     probe=args.probe, tools=agent.agent.tools)
        outcomes.update({f"{epoch}:{k}": v for k, v in learned_report.outcomes.items()})
        learn_runs += agent.rows
        strategy_log += agent.strategy_log
        learn_traces.update({f"{epoch}:{k}": v for k, v in agent.traces.items()})
    learner.flush()
    # --epochs 0 with --playbook: the playbook as it was learned before, not learned further
    learn_success = statistics.fmean(o["success"] for o in outcomes.values()) if outcomes \
        else float("nan")
    learn_seconds = time.perf_counter() - t0
    strategies = learner.strategies(suite.agent_name)
    print(f"learned in {learn_seconds:.0f} s: train success {learn_success:.0%}, "
          f"{len(strategies)} strategies, {len(learner.store.candidates())} pending patterns, "
          f"{len(learner.errors)} runs whose reflection failed (lessons: {args.lessons})")
    for error in list(learner.errors)[:3]:
        print(f"  reflection failed: {str(error)[:200]}")
    for s in strategies:
        print(f"  {s.render()}  applies when {s.applies_when}")
    stats = learner.tool_stats(suite.agent_name)
    print("SC-003 (a strategy captured within 3 completions of the same pattern):")
    print("\n".join(report.sc003(learn_runs, strategy_log)))
    print("Faster and more reliable tools preferred (learned sequence strategies):")
    print("\n".join(report.tool_preference([s.to_dict() for s in strategies], stats)))
    print("The same, over the tool calls of each kind's train runs:")
    print("\n".join(report.tool_preference_by_kind(learn_runs, strategy_log)))
    learned = {
        "suite": suite.name, "model": args.model, "learn_model": args.learn_model or args.model,
        "temperature": args.temperature,
        "promote_after": args.promote_after, "epochs": args.epochs,
        "train_tasks": len(train), "learn_seconds": learn_seconds,
        "learn_success": learn_success, "learn_runs": outcomes, "learn_rows": learn_runs,
        "learn_traces": learn_traces, "strategies": [s.to_dict() for s in strategies],
        "strategy_log": strategy_log, "lessons": args.lessons, "routines": args.routines,
        "learn_routines": learn_routines, "probe": args.probe, "head_start": args.head_start,
        "reflection_errors": [str(e)[:500] for e in learner.errors],
    }
    if args.learn_only or args.repeats < 1:  # --repeats 0: no test split to run either
        return learned

    frozen = Playbook(db, learn=False, routines=args.routines, guide=args.guide,
                      head_start=args.head_start)
    offered = frozen.routine_tools(
        {t.name: t for t in make_agent(suite, model, 0, 0.0, 1, None).tools.values()},
        suite.agent_name)
    print(f"routines offered: {[t.name for t in offered] if args.routines else 'off'}")
    for routine in offered:
        print(f"  {routine.name}: {routine.spec.description}")
    baseline: list[list[dict[str, Any]]] = []
    with_pb: list[list[dict[str, Any]]] = []
    runs_dir = Path(f"{args.out}.runs" if args.out else tempfile.mkdtemp(prefix="toolcycle-runs-"))
    runs_dir.mkdir(parents=True, exist_ok=True)
    print(f"experiment logs and traces: {runs_dir} (rerun with the same --out to resume)")
    dataset = test_dataset(test)
    for repeat in range(args.repeats):
        seed = args.seed + repeat
        order = [("baseline", None), ("playbook", frozen)]
        if repeat % 2:
            order.reverse()
        for label, pb in order:
            rows = await run_repeat(
                make_agent(suite, model, seed, args.temperature, args.max_iterations, pb),
                dataset, test, label, repeat + 1, runs_dir,
                f"{args.model} t={args.temperature} seed={args.seed} it={args.max_iterations}")
            (baseline if pb is None else with_pb).append(rows)
            if args.out:  # keep what exists if the run is cut short
                Path(args.out).write_text(json.dumps(
                    {"partial": True, "baseline": baseline, "playbook": with_pb,
                     "strategies": [s.to_dict() for s in strategies]}, indent=1, default=str))

    result = {
        **learned, "repeats": args.repeats, "test_tasks": len(test),
        "baseline": summarise(baseline), "playbook": summarise(with_pb),
        "runs": {"baseline": baseline, "playbook": with_pb},
    }
    print_analysis(result, suite)
    return result


def print_analysis(result: dict[str, Any], suite: Suite | None) -> None:
    """The paired tables, per kind, and SC-005 on the kind whose primary tool is down."""
    runs = result["runs"]
    analysis = report.analyse_runs(runs["baseline"], runs["playbook"])
    result["analysis"] = analysis
    result["iteration_cut"] = -analysis["diff"]["iterations"][0] / (
        analysis["baseline"]["iterations"][0] or 1)
    floor = report.iteration_floor(
        report.pairs(runs["baseline"], runs["playbook"]), result.get("learn_rows", []),
        getattr(suite.module, "FEWEST_ITERATIONS", None) if suite is not None else None)
    result["iteration_floor"] = floor
    print()
    print(report.render(analysis))
    print(report.render_floor(floor))
    down = getattr(suite.module, "PRIMARY_DOWN", {}) if suite is not None else {}
    for kind, tool in down.items():
        for label in ("baseline", "playbook"):
            ok, found, n = report.sc005(runs[label], kind)
            print(f"SC-005 ({kind}: {tool} always fails) {label}: {ok}/{n} runs answered "
                  f"right ({100 * ok / max(n, 1):.0f} %; target >= 90 %), {found}/{n} had "
                  "the answer in a tool result")


def bench_retrieval(n: int = 10_000, queries: int = 2000) -> None:
    """Retrieval latency over ``n`` synthetic strategies in 20 domains (in-memory index)."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)]
    tools = [f"tool_{i}" for i in range(60)]
    with tempfile.TemporaryDirectory() as tmp:
        pb = Playbook(Path(tmp) / "p.db", token_budget=250, guide=4)
        pb.store.put(
            Strategy(id=f"s-{i}", domain=f"d{i % 20}",
                     advice=" ".join(rng.sample(vocab, 12)),
                     tools=rng.sample(tools, 2), applies_when=rng.sample(vocab, 6),
                     helpful=rng.randint(0, 9), harmful=rng.randint(0, 3), support=3)
            for i in range(n)
        )
        tasks = [" ".join(rng.sample(vocab, 15)) for _ in range(queries)]
        unheard = [" ".join(f"z{rng.randrange(10**6)}" for _ in range(15))
                   for _ in range(queries)]  # words no strategy applies to: the guide
        pb.store.search(tasks[0], "d0", tools)  # build the index once
        for label, fn, asked in (
            ("store.search", lambda t: pb.store.search(t, "d3", tools), tasks),
            ("instructions_for (search + budget + stats)",
             lambda t: pb.instructions_for(t, "d3", tools), tasks),
            ("instructions_for, a task no lesson names (guide)",
             lambda t: pb.instructions_for(t, "d3", tools), unheard),
        ):
            times = []
            for task in asked:
                start = time.perf_counter_ns()
                fn(task)
                times.append((time.perf_counter_ns() - start) / 1000)
            times.sort()
            print(f"{label} over {n} strategies: p50 {times[len(times) // 2]:.0f} µs, "
                  f"p95 {times[int(len(times) * 0.95)]:.0f} µs, "
                  f"mean {statistics.fmean(times):.0f} µs")
        start = time.perf_counter()
        pb.store.put([Strategy(id="s-new", domain="d3", advice="fresh", applies_when=["w1"])])
        pb.store.search(tasks[0], "d3", tools)
        print(f"index rebuild after a write: {(time.perf_counter() - start) * 1000:.0f} ms")
        start = time.perf_counter()
        pb.instructions_for(unheard[0], "d3", tools)
        print(f"guide after a write (ranks the domain's sequences once): "
              f"{(time.perf_counter() - start) * 1000:.1f} ms")


def report_files(paths: list[str], suite_name: str, playbook: str | None) -> int:
    """Re-analyse saved runs; several files (e.g. repeats run in parallel) are pooled."""
    pooled: dict[str, Any] = {"runs": {"baseline": [], "playbook": []}, "learn_rows": []}
    for path in paths:
        data = json.loads(Path(path).read_text())
        runs = data.get("runs") or {"baseline": data["baseline"], "playbook": data["playbook"]}
        count = min(len(runs["baseline"]), len(runs["playbook"]))  # complete repeats only
        pooled["runs"]["baseline"] += runs["baseline"][:count]
        pooled["runs"]["playbook"] += runs["playbook"][:count]
        print(f"{path}: {count} complete repeats")
        if "learn_rows" in data:
            pooled["learn_rows"] += data["learn_rows"]
            log = data.get("strategy_log") or (
                report.strategy_log_from_db(playbook, len(data["learn_rows"])) if playbook else [])
            print("SC-003 (a strategy captured within 3 completions of the same pattern):")
            print("\n".join(report.sc003(data["learn_rows"], log)))
    print_analysis(pooled, load_suite(suite_name))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="chains", metavar="NAME|FOLDER",
                        help=f"the task suite: {', '.join(sorted(SUITES))} (default: chains), "
                        "or the folder of one of your own (tools.py, train.json, test.json)")
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--learn-model", default="",
                        help="learn the playbook with this model instead (e.g. the same model "
                             "through ReAct, which explores, for a JSON agent)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.3)
    parser.add_argument("--max-iterations", type=int, default=6)
    parser.add_argument("--limit", type=int, default=0, help="only the first N test tasks")
    parser.add_argument("--promote-after", type=int, default=3,
                        help="successful runs of different tasks that make a strategy")
    parser.add_argument("--train-limit", type=int, default=0, help="only the first N train tasks")
    parser.add_argument("--playbook", help="playbook file (default: a fresh temporary one)")
    parser.add_argument("--out", help="write every run and the summary to this JSON file")
    parser.add_argument("--learn-only", action="store_true",
                        help="stop after learning on the train split (no test-split runs)")
    parser.add_argument("--retrieval", action="store_true", help="only time retrieval")
    parser.add_argument("--threads", type=int, default=0,
                        help="llama.cpp threads per local model (default: the library's)")
    parser.add_argument("--lessons", choices=("rules", "llm", "both"), default="rules",
                        help="who writes the lessons: the deterministic reflector (rules), "
                        "LLMReflector with the same model (llm), or both")
    parser.add_argument("--reflector-model", default="",
                        help="the model LLMReflector writes lessons with (default: --model; "
                        "a ReAct model is asked through the JSON protocol, LLMReflector.writer)")
    parser.add_argument("--guide", type=int, default=4,
                        help="Playbook(guide=N): show a task no lesson names the N best "
                             "sequences (4, the playbook's default; 0: off)")
    parser.add_argument("--routines", action=argparse.BooleanOptionalAction, default=True,
                        help="the playbook arm with Playbook(routines=True), as in the recent "
                        "rows of docs/benchmarks.md (default); --no-routines: advice only")
    parser.add_argument("--probe", action=argparse.BooleanOptionalAction, default=True,
                        help="after a failed train run, ask the other read-only tools what its "
                             "missed calls asked (toolcycle.playbook.probe; default on)")
    parser.add_argument("--head-start", action=argparse.BooleanOptionalAction, default=True,
                        help="the playbook arm with Playbook(head_start=True) (default); with "
                        "--playbook FILE --epochs 0 the same learned playbook is tested with "
                        "and without head starts")
    parser.add_argument("--learn-routines", action=argparse.BooleanOptionalAction, default=None,
                        help="learn with Playbook(routines=True), so that later train runs use "
                        "what earlier ones taught (default: as --routines)")
    parser.add_argument("--report", nargs="+", metavar="JSON",
                        help="print the analysis of saved --out files (pooled) and exit")
    args = parser.parse_args()
    if args.retrieval:
        bench_retrieval()
        return 0
    if args.report:
        return report_files(args.report, args.suite, args.playbook)
    result = asyncio.run(main_async(args))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())

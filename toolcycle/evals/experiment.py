"""``Experiment``: an agent over a dataset, with repeats and concurrency, scored and logged.

The agent is an :class:`~toolcycle.Agent` (runs here, on asyncio) or a
:class:`~toolcycle.batch.BatchRecipe` (a spec, tool modules and a model string as plain data:
runs here, or on Ray with ``ray=True`` / an address, through the batch machinery's binding).
Every (case, repeat) is run once: results go to the log (:mod:`.records`) as each finishes,
so a killed experiment resumed with the same log runs only what was not finished.

Runs are ordered repeat by repeat (every case once, then every case again), so an experiment
cut short still covers every case. Evaluators score each outcome on the driver, as it comes
back; a failed run is scored too (the evaluators see its partial output), and counts as a
failure in the ``success`` and ``pass`` columns whatever the evaluators say.

Traces: each run's trace is tagged with ``metadata["eval"]`` (experiment, case, repeat) and
saved to ``trace_store`` (a store, a path, ``True`` for the default path, or ``None``:
``$TOOLCYCLE_TRACE_DB`` when set), so ``toolcycle trace show RUN_ID`` opens any run a report
names.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..agent import Agent
from ..batch import BatchRecipe
from ..errors import ConfigurationError
from ..limits import Limits
from ..tracing.store import TraceStore, resolve_trace_store
from ..tracing.trace import Trace
from ..tracing.values import recorded_cost
from .dataset import Case, Dataset
from .evaluators import AnyEvaluator, Evaluator, Observed, Score, as_evaluators
from .figures import run_passes
from .records import ExperimentLog, RunRecord, fingerprint
from .report import ExperimentReport
from .runs import Outcome, run_case

OnRecord = Callable[[RunRecord], None]


class Experiment:
    """Run ``agent`` over ``dataset`` ``repeats`` times, score each run, report.

    ``name`` defaults to the dataset's. ``log``: a JSONL path the records are appended to
    and resumed from (``None``: kept in memory only). ``concurrency``: runs at once (per Ray
    task on Ray). ``max_iterations``: overrides the agent's limit. ``progress``: a progress
    bar on stderr (default: when stderr is a terminal). ``on_record``: called with each
    record as it is written. ``identity``: any text naming what runs (a model and prompt
    version, say); a log written under another identity is refused, so a changed agent never
    resumes from the old one's records. ``price_per_million``: (input, output) USD per million
    tokens, for the cost column of runs whose cost is unknown (a model of unknown price; every
    other run reports its own ``usage.cost``).
    """

    def __init__(
        self,
        agent: Agent[Any, Any] | BatchRecipe,
        dataset: Dataset,
        evaluators: Sequence[AnyEvaluator] = (),
        *,
        name: str | None = None,
        repeats: int = 1,
        concurrency: int = 4,
        log: str | os.PathLike[str] | None = None,
        trace_store: TraceStore | str | os.PathLike[str] | bool | None = None,
        max_iterations: int | None = None,
        ray: str | bool | None = None,
        workers: int | None = None,
        chunk_size: int = 4,
        progress: bool | None = None,
        on_record: OnRecord | None = None,
        identity: str = "",
        price_per_million: tuple[float, float] | None = None,
    ) -> None:
        problems: list[str] = []
        if not isinstance(agent, Agent | BatchRecipe):
            problems.append(f"agent must be an Agent or a BatchRecipe, got {type(agent).__name__}")
        if not isinstance(dataset, Dataset) or not len(dataset):
            problems.append("dataset must be a Dataset with at least one case")
        for label, value in (("repeats", repeats), ("concurrency", concurrency),
                             ("chunk_size", chunk_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{label} must be an integer >= 1, got {value!r}")
        if price_per_million is not None and not (
                isinstance(price_per_million, tuple) and len(price_per_million) == 2
                and all(isinstance(p, int | float) and 0 <= p < float("inf")
                        for p in price_per_million)):
            problems.append("price_per_million must be (input USD, output USD) per million "
                            f"tokens, two numbers >= 0, got {price_per_million!r}")
        if max_iterations is not None and (not isinstance(max_iterations, int)
                                           or max_iterations < 1):
            problems.append(f"max_iterations must be an integer >= 1, got {max_iterations!r}")
        on_ray = not (ray is None or ray is False)
        if on_ray and not isinstance(agent, BatchRecipe):
            problems.append("ray= needs the agent as a BatchRecipe (plain data a worker can "
                            "rebuild the agent from), not an Agent object")
        try:
            self.evaluators: list[Evaluator] = as_evaluators(evaluators)
        except ConfigurationError as exc:
            problems += exc.problems
        if problems:
            raise ConfigurationError(problems, subject=f"experiment {name or ''!r}")
        self.agent = agent
        self.dataset = dataset
        self.name = name or dataset.name
        self.repeats = repeats
        self.concurrency = concurrency
        self.log_path = Path(log) if log is not None else None
        self.trace_store = resolve_trace_store(trace_store)
        self.max_iterations = max_iterations
        self.ray = ray if on_ray else None
        self.workers = workers
        self.chunk_size = chunk_size
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.on_record = on_record
        self.identity = identity
        self.price_per_million = price_per_million

    def todo(self, done: set[tuple[str, int]]) -> list[tuple[Case, int]]:
        """The (case, repeat) pairs not yet recorded, repeat by repeat."""
        return [(case, repeat) for repeat in range(1, self.repeats + 1)
                for case in self.dataset if (case.name, repeat) not in done]

    async def run(self) -> ExperimentReport:
        """Run what the log does not have yet, then report over every recorded run."""
        names = [e.name for e in self.evaluators]
        log = (ExperimentLog.open(self.log_path, self.name, names, self.dataset, self.identity)
               if self.log_path is not None else ExperimentLog(None, self.name, names))
        try:
            todo = self.todo(set(log.records))
            total = self.repeats * len(self.dataset)
            with _progress_bar(self.name, total, total - len(todo), self.progress) as advance:
                async def accept(outcome: Outcome) -> None:
                    record = await self._record(outcome)
                    log.add(record)
                    advance(record)
                    if self.on_record is not None:
                        self.on_record(record)

                if todo and self.ray is None:
                    await self._run_here(todo, accept)
                elif todo:
                    from .on_ray import run_on_ray

                    assert isinstance(self.agent, BatchRecipe)
                    await run_on_ray(self.agent, todo, accept, address=self.ray,
                                     workers=self.workers, chunk_size=self.chunk_size,
                                     concurrency=self.concurrency,
                                     max_iterations=self.max_iterations)
        finally:
            log.close()
        wanted = {(case.name, repeat) for case, repeat in self.todo(set())}
        return ExperimentReport.from_records(
            self.name, names, [r for r in log.records.values() if r.key in wanted],
            order=[case.name for case in self.dataset])

    def run_sync(self) -> ExperimentReport:
        """:meth:`run` from synchronous code (not from inside a running event loop)."""
        return asyncio.run(self.run())

    async def _run_here(self, todo: list[tuple[Case, int]],
                        accept: Callable[[Outcome], Any]) -> None:
        if isinstance(self.agent, BatchRecipe):
            from ..batch.worker import agent_for

            agent, _ = agent_for(self.agent)
        else:
            agent = self.agent
        limits = Limits(max_iterations=self.max_iterations) if self.max_iterations else None
        queue = iter(todo)

        async def runner() -> None:
            for case, repeat in queue:
                await accept(await run_case(agent, case, repeat, limits))

        await asyncio.gather(*(runner() for _ in range(min(self.concurrency, len(todo)))))

    async def _record(self, outcome: Outcome) -> RunRecord:
        case = self.dataset[outcome.case]
        observed = outcome.observed()
        scores = [score for evaluator in self.evaluators
                  if (score := await _score(evaluator, case, observed)) is not None]
        trace = outcome.trace
        if trace is not None and self.trace_store is not None:
            trace.metadata["eval"] = {"experiment": self.name, "case": case.name,
                                      "repeat": outcome.repeat}
            self.trace_store.save(trace)
        cost = _cost_of(trace, self.price_per_million)
        return RunRecord(
            case=case.name, repeat=outcome.repeat, succeeded=outcome.succeeded,
            status=outcome.status, scores=tuple(scores), output=outcome.output,
            error=outcome.error, iterations=trace.iterations if trace else 0,
            input_tokens=trace.usage.input_tokens if trace else 0,
            output_tokens=trace.usage.output_tokens if trace else 0,
            cost_usd=cost,
            latency_s=round(outcome.latency_s, 4), run_id=outcome.run_id,
            tools=tuple(c.name for c in trace.tool_calls if c.kind == "tool") if trace else (),
            kind=case.kind, fingerprint=fingerprint(case))


async def _score(evaluator: Evaluator, case: Case, observed: Observed) -> Score | None:
    """An evaluator that raises fails that run's score, saying why; the experiment goes on
    (a bug in one evaluator must not throw away hours of runs)."""
    try:
        return await evaluator.evaluate(case, observed)
    except Exception as exc:
        return Score(evaluator.name, 0.0, False,
                     f"the evaluator raised {type(exc).__name__}: {exc}")


def _cost_of(trace: Trace | None, price: tuple[float, float] | None) -> float | None:
    """The run's cost in USD: the run's own (``usage.cost``, each reply priced by its model,
    a team's agents included; or a ``metadata["cost_usd"]`` the user set), else its tokens at
    ``price`` (for models of unknown price), else unknown."""
    if trace is None:
        return None
    recorded = recorded_cost(trace.usage.cost, trace.metadata)
    if recorded is not None:
        return float(recorded)
    if price is None:
        return None
    return (trace.usage.input_tokens * price[0] + trace.usage.output_tokens * price[1]) / 1e6


@contextmanager
def _progress_bar(name: str, total: int, already: int,
                  enabled: bool) -> Iterator[Callable[[RunRecord], None]]:
    """A rich progress bar on stderr with the pass count so far; a no-op when not wanted."""
    if not enabled:
        yield lambda record: None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress

    passed = 0
    done = 0
    label = escape(name)
    with Progress(console=Console(stderr=True)) as bar:  # stdout stays the caller's
        task = bar.add_task(label, total=total, completed=already)

        def advance(record: RunRecord) -> None:
            nonlocal passed, done
            done += 1
            passed += run_passes(record)
            bar.update(task, advance=1, description=f"{label}: {passed}/{done} passed")

        yield advance

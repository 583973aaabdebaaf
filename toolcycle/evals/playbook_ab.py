"""Does what the playbook learned help? No playbook vs learn-on-train, frozen-on-test, in one call.

The protocol (the one bench/learning.py has measured the playbook with):

1. Split the dataset into train and test (``metadata["split"]`` where every case has one,
   else a seeded split within each kind, :meth:`Dataset.split`).
2. Learn: run the agent with a learning playbook over the train cases
   (:func:`toolcycle.playbook.learn`), each run graded by the eval's own evaluators, so that
   the playbook learns from right and wrong answers, not from "it finished".
3. Test: run the test cases ``repeats`` times without a playbook (arm A) and with the learned
   playbook *frozen* (``learn=False``: both arms see the same playbook on every repeat, and the
   test split never teaches it anything), then compare the arms paired by case
   (:mod:`.compare`), over all runs and over the pairs where both arms passed, per kind.

Every phase resumes: learning by its session in the playbook store, each arm by its log.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..agent import Agent
from ..errors import ConfigurationError
from ..playbook import LearningTask, Playbook, learn
from .compare import Comparison, compare
from .dataset import Case, Dataset
from .evaluators import AnyEvaluator, Evaluator, Observed, as_evaluators
from .experiment import Experiment
from .figures import json_ready
from .report import ExperimentReport

#: ``make_agent(playbook)``: the agent under test, with that playbook (``None``: without).
AgentFactory = Callable[[Playbook | None], Agent[Any, Any]]


@dataclass(frozen=True, slots=True)
class PlaybookAB:
    """The two arms, their comparison overall and per kind, and what learning produced."""

    baseline: ExperimentReport
    with_playbook: ExperimentReport
    comparison: Comparison
    by_kind: dict[str, Comparison]
    train_cases: int
    train_pass_rate: float
    strategies: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"train_cases": self.train_cases, "train_pass_rate": self.train_pass_rate,
                "strategies": self.strategies, "comparison": self.comparison.to_dict(),
                "by_kind": {k: c.to_dict() for k, c in self.by_kind.items()},
                "baseline": self.baseline.to_dict(),
                "with_playbook": self.with_playbook.to_dict(), "notes": self.notes}

    def to_json(self) -> str:
        return json.dumps(json_ready(self.to_dict()), indent=1, default=str)

    def render(self) -> str:
        lines = [f"learned on {self.train_cases} train cases (pass {self.train_pass_rate:.0%}):"
                 f" {self.strategies} strategies", self.comparison.render()]
        for kind, comparison in self.by_kind.items():
            lines.append(f"kind {terminal_safe(kind) or '(none)'}:")
            lines += ["  " + line for line in comparison.render().splitlines()]
        return "\n".join(lines + self.notes)


def learning_grader(case_of: dict[str, Case],
                    evaluators: Sequence[Evaluator]) -> Callable[[LearningTask, Any], bool]:
    """``learn``'s evaluator from the eval's synchronous, output-only evaluators: a learning
    run passes when each of them passes its output."""
    usable = [e for e in evaluators if e.synchronous and e.reads_output_only]

    def grade(task: LearningTask, output: Any) -> bool:
        case = case_of[task.id]
        run = Observed(output)
        return all(score.passed for e in usable if (score := e.check(case, run)) is not None)

    return grade


async def playbook_ab(
    make_agent: AgentFactory,
    dataset: Dataset,
    evaluators: Sequence[AnyEvaluator],
    *,
    playbook: str | os.PathLike[str],
    train: float = 0.5,
    seed: int = 0,
    repeats: int = 1,
    concurrency: int = 1,
    log_dir: str | os.PathLike[str] | None = None,
    epochs: int = 1,
    name: str = "playbook-ab",
    playbook_options: dict[str, Any] | None = None,
    progress: bool | None = None,
) -> PlaybookAB:
    """Learn a playbook on the train split into ``playbook`` (a SQLite path), then compare
    the test split without it and with it frozen. ``playbook_options``: keyword arguments for
    both :class:`~toolcycle.playbook.Playbook` objects (``routines=True``, say)."""
    chosen = as_evaluators(evaluators)
    train_set, test_set = dataset.split(train, seed=seed)
    problems = []
    if not len(train_set) or not len(test_set):
        problems.append(f"the split gave {len(train_set)} train and {len(test_set)} test "
                        "cases; both need at least one")
    problems += [f"case {c.name!r}: learning needs a text message as inputs"
                 for c in train_set if not isinstance(c.inputs, str)]
    if problems:
        raise ConfigurationError(problems, subject=f"playbook A/B {name!r}")
    options = dict(playbook_options or {})
    learner = Playbook(Path(playbook), **options)
    tasks = [LearningTask(c.name, str(c.inputs), c.expected_output, c.kind) for c in train_set]
    learned = await learn(tasks, make_agent(learner),
                          learning_grader({c.name: c for c in train_set}, chosen),
                          playbook=learner, session=f"{name}-train", epochs=epochs,
                          progress=bool(progress))
    learner.flush()
    frozen = Playbook(Path(playbook), **{**options, "learn": False})
    logs = Path(log_dir) if log_dir is not None else None
    arms: list[ExperimentReport] = []
    for arm, pb in (("baseline", None), ("playbook", frozen)):
        experiment = Experiment(make_agent(pb), test_set, chosen, name=f"{name}:{arm}",
                                repeats=repeats, concurrency=concurrency,
                                log=logs / f"{arm}.jsonl" if logs else None, progress=progress)
        arms.append(await experiment.run())
    baseline, with_playbook = arms
    kinds_a, kinds_b = baseline.kinds(), with_playbook.kinds()
    notes = [] if any(e.synchronous and e.reads_output_only for e in chosen) else [
        "no output-only evaluator: learning runs were graded as passing whenever they ended"]
    notes += learned.notes  # what learning could not do (no read-only tool: no probes)
    return PlaybookAB(
        baseline, with_playbook, compare(baseline, with_playbook),
        {kind: compare(kinds_a[kind], kinds_b[kind]) for kind in kinds_a if kind in kinds_b},
        len(train_set), learned.success_rate, len(learner.strategies()), notes)

"""Offline learning: run an agent over a task set and let its playbook learn from every run.

Each run is judged by the caller's evaluator against the task's expected answer (not merely
"it finished"), and each finished task is saved in the store, so an interrupted session
resumes where it stopped. A progress bar (rich, when installed) shows the way.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..tools import Tool
from ..tracing.trace import Trace
from .outcome import passes
from .playbook import Playbook, current_grader
from .probe import Probe, current_probe
from .read_only import missing_read_only, tell_once

#: ``evaluator(task, output) -> bool | float``.
Evaluator = Callable[["LearningTask", Any], bool | float]


@dataclass(slots=True)
class LearningTask:
    """One task of a learning set: its prompt and, optionally, the expected answer."""

    id: str
    prompt: str
    expected: Any = None
    kind: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, item: LearningTask | Mapping[str, Any], index: int) -> LearningTask:
        if isinstance(item, LearningTask):
            return item
        data = dict(item)
        known = {k: data.pop(k) for k in ("id", "prompt", "expected", "kind") if k in data}
        known.setdefault("id", f"task-{index}")
        return cls(**known, metadata=data)


@dataclass(slots=True)
class LearningReport:
    """What a learning session did: per-task outcomes (resumed ones included)."""

    session: str
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: int = 0
    #: what the session could not do and why (no read-only tool: no probes; read_only.py)
    notes: list[str] = field(default_factory=list)

    @property
    def success_rate(self) -> float:
        values = [o["success"] for o in self.outcomes.values()]
        return sum(values) / len(values) if values else 0.0


def contains_expected(task: LearningTask, output: Any) -> bool:
    """The default evaluator: the expected answer appears in the output (case-insensitive);
    of a list of expected answers, any one."""
    if task.expected is None:
        return output is not None
    answers = task.expected if isinstance(task.expected, list) else [task.expected]
    return any(str(answer).lower() in str(output).lower() for answer in answers)


async def learn(
    tasks: Iterable[LearningTask | Mapping[str, Any]],
    agent: Any,
    evaluator: Evaluator = contains_expected,
    *,
    playbook: Playbook | None = None,
    session: str = "default",
    epochs: int = 1,
    progress: bool = True,
    probe: bool = True,
    tools: Mapping[str, Tool[Any]] | None = None,
) -> LearningReport:
    """Run ``agent`` on every task (``epochs`` times) and learn from each run.

    ``playbook`` defaults to the agent's own (``agent.playbook``); the agent should carry it so
    later runs in the session already benefit from what earlier ones taught. Tasks already
    finished in ``session`` are skipped, which makes an interrupted session resumable.
    ``probe``: after a failed run, ask the agent's other read-only tools what each missed call
    asked, and learn the one whose result holds the expected answer as its repair
    (:mod:`~toolcycle.playbook.probe`); ``tools``: the tools to probe with (default: the
    agent's own, ``agent.tools``).
    """
    pb = playbook if playbook is not None else getattr(agent, "playbook", None)
    if pb is None:
        raise ValueError("learn() needs a playbook: pass playbook= or give the agent one")
    items = [LearningTask.coerce(t, i) for i, t in enumerate(tasks)]
    report = LearningReport(session=session)
    done = pb.store.progress(session)
    plan = [(epoch, t) for epoch in range(epochs) for t in items]
    bar = _Progress(len(plan), enabled=progress)
    probing = _probe_tools(agent, tools) if probe else {}
    name = str(getattr(agent, "name", "") or pb.domain or "agent")
    missing = missing_read_only(name, _probe_tools(agent, tools))
    if missing is not None:
        report.notes.append(missing)
        tell_once(name, _probe_tools(agent, tools))
    for epoch, task in plan:
        key = f"{epoch}:{task.id}"
        if key in done:
            report.outcomes[key] = done[key]
            report.skipped += 1
            bar.advance(f"{task.id} (done earlier)")
            continue
        outcome = await _run_one(agent, pb, task, evaluator, probing)
        pb.flush()
        pb.store.save_progress(session, key, outcome)
        report.outcomes[key] = outcome
        bar.advance(f"{task.id}: {'ok' if outcome['success'] else 'failed'}")
    bar.close()
    return report


def _probe_tools(agent: Any, tools: Mapping[str, Tool[Any]] | None) -> dict[str, Tool[Any]]:
    """The tools a learning run's misses are probed with: ``tools``, else the agent's own."""
    found = tools if tools is not None else getattr(agent, "tools", None)
    if not isinstance(found, Mapping):
        return {}
    return {name: t for name, t in found.items() if isinstance(t, Tool)}


async def _run_one(
    agent: Any, pb: Playbook, task: LearningTask, evaluator: Evaluator,
    tools: Mapping[str, Tool[Any]],
) -> dict[str, Any]:
    verdicts: list[bool] = []
    answers = task.expected if isinstance(task.expected, list) else [task.expected]
    probe = Probe(tools, lambda text: passes(evaluator(task, text)),
                  expected=" ".join(str(a) for a in answers if a is not None)) if tools else None

    def grade(trace: Trace, outcome: Any) -> bool:
        output = getattr(outcome, "output", None)
        if output is None:
            output = trace.output
        ok = passes(evaluator(task, output))
        verdicts.append(ok)
        return ok

    token = current_grader.set(grade)
    probing = current_probe.set(probe)
    started = time.perf_counter()
    result: Any = None
    error: BaseException | None = None
    try:
        result = await agent.run(task.prompt)
    except Exception as exc:  # a failed run is a lesson too
        error = exc
        result = getattr(exc, "result", None)
    finally:
        current_grader.reset(token)
        current_probe.reset(probing)
    trace: Trace | None = getattr(result, "trace", None)
    if trace is not None:
        # when the agent carries this playbook the loop has observed the run already and the
        # store ignores this second observation of the same run id; otherwise it counts
        token = current_grader.set(grade)
        probing = current_probe.set(probe)
        try:
            pb.observe(trace, error or result)
        finally:
            current_grader.reset(token)
            current_probe.reset(probing)
    pb.flush()
    success = verdicts[-1] if verdicts else False
    return {
        "success": success,
        "iterations": trace.iterations if trace is not None else 0,
        "tokens": trace.usage.total_tokens if trace is not None else 0,
        "seconds": round(time.perf_counter() - started, 3),
        "error": str(error) if error is not None else None,
    }


class _Progress:
    """A rich progress bar when rich is installed and wanted, else one line per task."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self.count = 0
        self._rich: Any = None
        self._task: Any = None
        if not enabled:
            return
        try:
            from rich.progress import Progress
        except ImportError:
            return
        self._rich = Progress(transient=False)
        self._rich.start()
        self._task = self._rich.add_task("learning", total=total)

    def advance(self, label: str) -> None:
        self.count += 1
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.update(self._task, advance=1, description=label)
        else:
            print(f"[{self.count}/{self.total}] {label}", file=sys.stderr)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()

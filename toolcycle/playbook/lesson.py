"""The playbook's core vocabulary: the evidence of one run, and the protocol every type of
lesson implements.

A lesson type (a learned tool sequence, a pitfall and its repair, a dead end, the no-call
lesson) is one module with one class implementing :class:`LessonType`: what it proposes from
the evidence of a finished run (:meth:`LessonType.propose`), and how a run shown one of its
strategies bears on it (:meth:`LessonType.judge`). :mod:`.lessons` registers them, in the
order their insights are curated; the reflector asks each in turn and knows none of them.
How a lesson is shown (its advice line) and acted on (a run's :class:`~toolcycle.run.plan.
RunPlan`) is read from the strategies it made (:mod:`.advice`, :mod:`.offer`).

Why: seven lesson types were added by growth, each reaching into the reflector, the curator,
the outcome and the offer (2 to 14 files per lesson, architecture review 2026-12). A new one
is now its module and one line in :mod:`.lessons`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..tracing.trace import ToolCallRecord, Trace
from .evidence import CallEvidence
from .strategy import Insight, Repair, Strategy, StrategyKind, UseVerdict, pitfall_detail


@dataclass(slots=True)
class WastedCall:
    """A call that did not move the run forward, and why: ``error``, ``repeat`` or ``empty``."""

    call: ToolCallRecord
    reason: str


@dataclass(slots=True)
class TraceAnalysis:
    """What the deterministic pass saw in one trace.

    ``sequence`` is the tools of the answering chain (see :mod:`.evidence`), ``wasted`` the
    calls that missed, ``repairs`` what worked after each missed call that the run recovered
    from (keyed by the index of the missed call). ``keywords`` and ``task`` are the prompt's
    (:func:`~toolcycle.words.task_words`, so no names; :func:`task_fingerprint`),
    worked out once for the insights and the run's outcome.
    """

    run_id: str
    success: bool
    iterations: int
    tool_latency_ms: float
    keywords: list[str] = field(default_factory=list)
    task: str = ""
    sequence: list[str] = field(default_factory=list)
    arg_names: dict[str, list[str]] = field(default_factory=dict)
    wasted: list[WastedCall] = field(default_factory=list)
    calls: list[CallEvidence] = field(default_factory=list)
    chain: list[CallEvidence] = field(default_factory=list)
    repairs: dict[int, Repair] = field(default_factory=dict)

    @property
    def failures(self) -> list[WastedCall]:
        return [w for w in self.wasted if w.reason == "error"]


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """Everything a lesson type may read of one finished run: its trace, its analysis
    (:func:`~toolcycle.playbook.reflector.analyse`), whether it succeeded, the domain, and
    what the playbook knows of the agent's tools: their description words and parameter
    schemas by name, and the tools its dead ends name (:meth:`~toolcycle.playbook.store.
    PlaybookStore.pitfall_tools`)."""

    trace: Trace
    analysis: TraceAnalysis
    success: bool
    domain: str
    descriptions: Mapping[str, frozenset[str]] | None = None
    schemas: Mapping[str, Any] | None = None
    dead_ends: Collection[str] = ()

    @property
    def prompt(self) -> str:
        return self.trace.user_prompt or ""

    def insight(self, kind: StrategyKind, advice: str, tools: list[str],
                detail: str = "") -> Insight:
        """An insight of this run (its task, words, outcome and cost filled in)."""
        analysis = self.analysis
        return Insight(
            kind=kind, domain=self.domain, advice=advice, tools=tools,
            keywords=list(analysis.keywords), task=analysis.task,
            run_id=self.trace.run_id, success=self.success, iterations=analysis.iterations,
            tool_latency_ms=analysis.tool_latency_ms, detail=detail,
        )

    def pitfall(self, advice: str, tools: list[str], error_class: str,
                repair: Repair | None = None) -> Insight:
        """A pitfall insight of this run: ``advice`` for the model, and what the code acts on
        typed beside it (its error class and repair; its detail made of both,
        :func:`~toolcycle.playbook.strategy.pitfall_detail`)."""
        found = self.insight("pitfall", advice, tools, pitfall_detail(error_class, repair))
        found.error_class, found.repair = error_class, repair
        return found


class LessonType(Protocol):
    """One type of lesson: what it learns from a run and how it is judged."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        """The insights this type reads in one finished run (none is fine)."""
        ...

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        """How a run shown ``strategy`` (one of this type's, :meth:`owns`) bears on it, from
        its calls as ``(tool, status)``; ``None``: the common rule
        (:func:`~toolcycle.playbook.outcome.use_verdict`)."""
        ...

    def owns(self, strategy: Strategy) -> bool:
        """Whether ``strategy`` is one this type made."""
        ...

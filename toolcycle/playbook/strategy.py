"""Strategies: the scored bullets of a playbook, and the insights they are made from.

A :class:`Strategy` is one piece of advice about which tools to use and in what order, kept
with the evidence for and against it (counts, success rate, iterations and tool latency of the
runs that were shown it, provenance). An :class:`Insight` is what the reflector draws from one
trace; the curator turns insights into strategies. Both are plain data that round-trip through
JSON, so the store can keep them in any database.

What the code acts on of a lesson is typed beside the advice the model reads, and never read
back out of its text (:mod:`~toolcycle.playbook.parts`: a pitfall's error class and
:class:`Repair`, a sequence's first call and the tools it says to skip).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .._id_shape import the_id_as
from ..datetimes import the_day_as
from ..words import TEMPLATE_WORDS as TEMPLATE_WORDS  # (defined there; imported from here)
from ..words import keywords
from .parts import Argument as Argument  # (defined there; imported from here)
from .parts import LessonParts, plain
from .parts import Repair as Repair
from .parts import RepairKind as RepairKind
from .parts import pitfall_detail as pitfall_detail
from .parts import typed_parts as typed_parts

StrategyStatus = Literal["active", "retired"]
#: ``sequence``: a tool sequence that worked; ``pitfall``: a failure mode to avoid;
#: ``advice``: free advice (from the LLM reflector or written by hand).
StrategyKind = Literal["sequence", "pitfall", "advice"]
#: How a run that was shown a strategy bears on it (see :func:`toolcycle.playbook.outcome.
#: use_verdict`): ``helpful`` (followed, succeeded), ``harmful`` (followed, its tools answered,
#: the run still failed), ``misfit`` (followed, but its tools had nothing for this task: it
#: was retrieved for the wrong task, which is no evidence against the advice) and ``ignored``.
UseVerdict = Literal["helpful", "harmful", "misfit", "ignored"]

#: How many run ids a strategy keeps as provenance (the oldest drop out first).
MAX_PROVENANCE = 20
#: How many runs' feed examples a sequence strategy keeps (for routines).
MAX_FEED_RUNS = 6
#: The runs a sequence's :attr:`Strategy.heads` count (the latest weigh most).
MAX_HEAD_RUNS = 12

def index_terms(strategy: Strategy) -> list[str]:
    """What retrieval matches a task against besides ``applies_when``.

    The words of the tool names (``weather_primary`` -> weather, primary: a task about the
    weather is likely to use it) and, for free advice only, its content words. Generated
    advice is template plus tool and argument names, so its words would match every task
    that says "call" or "error".
    """
    words = keywords(" ".join(t.replace("_", " ").replace("-", " ") for t in strategy.tools))
    if strategy.kind == "advice":
        words += keywords(strategy.advice)
    return [w for w in dict.fromkeys(words) if w not in TEMPLATE_WORDS]


def estimate_tokens(text: str) -> int:
    """A cheap, tokenizer-free token estimate (about four characters per token)."""
    return max(1, (len(text) + 3) // 4)


#: The end of the run id of an insight a probe made (not a run): :attr:`Strategy.probed`.
PROBED = "#probe"


def run_of(evidence: str) -> str:
    """The run an insight's id (a provenance entry) came from: a probe's insight is the run
    it probed, with :data:`PROBED` after its id."""
    return evidence.removesuffix(PROBED)


@dataclass(slots=True)
class Insight(LessonParts):
    """One lesson drawn from one trace, before it is merged into the playbook.

    ``kind`` mirrors :data:`StrategyKind`. ``tools`` is the recommended tool sequence (for a
    pitfall: the tool that failed). ``keywords`` are the task's content words; ``success`` says
    whether the run that produced it succeeded.
    """

    kind: StrategyKind
    domain: str
    advice: str
    tools: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    run_id: str = ""
    success: bool = True
    iterations: int = 0
    tool_latency_ms: float = 0.0
    detail: str = ""
    #: For a sequence whose every step after the first was fed by the one before: per step,
    #: the argument fed and where its value stood in the previous result (see
    #: :func:`toolcycle.playbook.routine.feed_example`); empty otherwise.
    feeds: list[dict[str, Any]] = field(default_factory=list)
    #: Which task the run was about (:func:`task_fingerprint` of its prompt), so that evidence
    #: is counted once per task. Empty in insights stored before it (then the keywords serve).
    task: str = ""
    #: For a sequence: the task's words that the descriptions of its tools contain (what the
    #: task asked that these tools provide, :func:`described_words`), then those naming the
    #: field its answer came from (:func:`answer_labels`), then the words of the column its
    #: run picked a row by, said or not (:func:`picked_words`). For an error's pitfall: the
    #: task's words the failing tool's description contains. Empty in insights stored before.
    tool_words: list[str] = field(default_factory=list)
    #: For a sequence: the argument of its first call that took the task's one named value
    #: (:func:`toolcycle.playbook.sequence.head_param`), ``""`` where none did; ``None``
    #: where the run is no evidence (its task names no one value, its first call was made
    #: for it, or it was stored before).
    head: str | None = None
    #: For a pitfall: whether its lesson is about its tool, shown with the tool in any task
    #: (:mod:`~toolcycle.playbook.tool_lessons`), or about the kind of task it was learned
    #: from (``False``: another tool answered what this one was wrongly asked); ``None``
    #: where nobody said.
    about_tool: bool | None = None
    #: For a pitfall: whether the call timed out (the trace's typed ``error_type``:
    #: :func:`~toolcycle.playbook.stats.timed_out`); ``None`` where nobody said.
    timed_out: bool | None = None
    @property
    def pattern_key(self) -> str:
        """What makes two insights "the same pattern": kind, domain, tools and, for advice,
        its text. A pitfall's pattern is its tool and error class, whatever repair each run
        showed (the curator promotes it with the repair its evidence shows most)."""
        tools, detail = self.tools, self.detail
        if self.kind == "pitfall":
            tools, detail = self.tools[:1], self.error_class
        basis = "|".join([self.kind, self.domain, ">".join(tools), detail])
        return hashlib.sha1(basis.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Insight:
        return cls(**data)


@dataclass(slots=True)
class Strategy(LessonParts):
    """A playbook bullet with its evidence.

    ``helpful``/``harmful`` count the runs that were shown this strategy, followed it and then
    succeeded or failed; runs that ignored it or to which it did not fit are counted apart
    (``ignored``, ``misfit``) and are no evidence either way; ``uses`` is helpful + harmful,
    and ``sum_iterations``/``sum_tool_latency_ms`` over those runs give the means.
    ``support`` counts the successful runs whose traces produced the pattern (what promoted
    it). ``applies_when`` are the keywords of the tasks it came from.
    """

    id: str
    domain: str
    advice: str
    kind: StrategyKind = "sequence"
    section: str = ""
    tools: list[str] = field(default_factory=list)
    applies_when: list[str] = field(default_factory=list)
    helpful: int = 0
    harmful: int = 0
    sum_iterations: int = 0
    sum_tool_latency_ms: float = 0.0
    support: int = 0
    provenance: list[str] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    status: StrategyStatus = "active"
    note: str = ""
    ignored: int = 0
    misfit: int = 0
    #: The feed examples of the runs behind a sequence strategy (one list per run, one entry
    #: per fed step), from which :func:`toolcycle.playbook.routine.induce` learns a routine.
    feeds: list[list[dict[str, Any]]] = field(default_factory=list)
    #: The pattern's detail (see :attr:`Insight.detail`): for a pitfall its error class, then
    #: ``|`` and its repair's signature when it has one (:func:`pitfall_detail`; part of its
    #: id, compared and never read apart). Empty in playbooks written before it.
    detail: str = ""
    #: For a sequence: how many of the tasks behind it said each word (by root, as first
    #: written; the most said kept): a word two of them said stays in ``applies_when`` when
    #: a confirmation's task does not say it (:func:`~toolcycle.playbook.applicability.
    #: confirmed_by`). Empty in playbooks written before it.
    word_support: dict[str, int] = field(default_factory=dict)
    #: How much of ``support`` came from probes of failed learning runs, not from runs that
    #: made the calls (:mod:`~toolcycle.playbook.probe`; their insights' run ids end in
    #: :data:`PROBED`).
    probed: int = 0
    #: For a sequence: per run behind it (the latest :data:`MAX_HEAD_RUNS`), the argument of
    #: its first call that took the task's one named value (``""``: none did); what a head
    #: start is learned from (:mod:`~toolcycle.playbook.sequence`).
    heads: list[str] = field(default_factory=list)
    #: For a pitfall, as :attr:`Insight.about_tool`; ``None`` in playbooks written before
    #: it (then every pitfall of an error is its tool's).
    about_tool: bool | None = None
    #: For a pitfall, as :attr:`Insight.timed_out`: a fallback learned from a timeout falls
    #: back on a timeout (:mod:`~toolcycle.playbook.fallback`). ``None`` in playbooks written
    #: before it (then the words of the stored error class say, as they did).
    timed_out: bool | None = None
    @property
    def uses(self) -> int:
        return self.helpful + self.harmful

    @property
    def success_rate(self) -> float | None:
        """Share of the runs shown this strategy that succeeded (None before any use)."""
        return self.helpful / self.uses if self.uses else None

    @property
    def mean_iterations(self) -> float | None:
        return self.sum_iterations / self.uses if self.uses else None

    @property
    def mean_tool_latency_ms(self) -> float | None:
        return self.sum_tool_latency_ms / self.uses if self.uses else None

    def score(self) -> float:
        """Rank for retrieval and eviction: evidence that it helps, discounted by harm.

        Laplace-smoothed success rate times a small bonus for support, so a fresh strategy
        promoted from three runs ranks near 0.5+ and one that keeps failing sinks.
        """
        rate = (self.helpful + 1) / (self.uses + 2)
        return rate * (1.0 + min(self.support, 10) / 10)

    def record_use(
        self, run_id: str, success: bool, iterations: int, latency_ms: float,
        verdict: UseVerdict | None = None,
    ) -> None:
        """Count one run that was shown this strategy (by default its success is the verdict).

        Only a run that followed it joins its provenance: the runs a lesson came from or was
        borne out by are the tasks it applies to (:mod:`~toolcycle.playbook.neighbours`), and
        a run that ignored it, or found its tools had nothing, was of another kind."""
        verdict = verdict or ("helpful" if success else "harmful")
        self.updated_at = time.time()
        if verdict in ("helpful", "harmful"):
            self.add_provenance(run_id)
        if verdict == "ignored":
            self.ignored += 1
            return
        if verdict == "misfit":
            self.misfit += 1
            return
        if verdict == "helpful":
            self.helpful += 1
        else:
            self.harmful += 1
        self.sum_iterations += iterations
        self.sum_tool_latency_ms += latency_ms

    def add_provenance(self, *run_ids: str) -> None:
        for run_id in run_ids:
            if run_id and run_id not in self.provenance:
                self.provenance.append(run_id)
        del self.provenance[:-MAX_PROVENANCE]

    def render(self, *, with_id: bool = True) -> str:
        """The one-line form: with its id for people (``toolcycle playbook show``); without it
        in the instructions, where the id is noise the model pays for on every request (13
        tokens a line with Qwen2.5's tokenizer, a quarter of a sequence line)."""
        evidence = f"worked in {self.helpful}/{self.uses} runs" if self.uses else (
            # failed runs count too: a pitfall, or model-written advice about a failed run
            f"seen in {self.support} runs" if self.kind in ("pitfall", "advice")
            else f"seen in {self._seen_in()}"
        )
        return f"- {f'[{self.id}] ' if with_id else ''}{self.advice} ({evidence})"

    def for_task(self, task: str) -> Strategy:
        """This strategy as a run of ``task`` is shown it: each example of a date format in
        its advice (a repair's, a first call's argument) written as the one day the task
        names, where it names one (:func:`~toolcycle.datetimes.the_day_as`), and each id's
        example as the one number the task gives of its length, in the example's shape
        ("CX-31146" for "contract number 77160": "CX-77160", :func:`~toolcycle._id_shape.
        the_id_as`); else itself.

        Why: an example is a value an earlier task passed, and a small model copies it as
        the value (a train task's day passed for another task's). What the code acts on
        (the stored strategy's examples, :mod:`~toolcycle.playbook.reshape`) is unchanged:
        only what this run reads."""
        changed = {(a.name, a.example): mine for a in self._examples()
                   if (mine := the_day_as(a.example, task, self.error_class)
                       or the_id_as(a.example, task)) is not None and mine != a.example}
        if not changed:
            return self
        advice = self.advice
        for (name, example), mine in changed.items():
            advice = advice.replace(str(Argument(name, example)), str(Argument(name, mine)))
        repair = self.repair
        if repair is not None and (own := changed.get((repair.argument, repair.example))):
            repair = replace(repair, example=own)
        first_args = [Argument(a.name, changed.get((a.name, a.example), a.example))
                      for a in self.first_args]
        return replace(self, advice=advice, repair=repair, first_args=first_args)

    def _examples(self) -> list[Argument]:
        """The arguments its advice shows with an example value."""
        repaired = ([Argument(self.repair.argument, self.repair.example)]
                    if self.repair is not None and self.repair.kind in ("argument", "alternative")
                    else [])
        return [a for a in [*self.first_args, *repaired] if a.example]

    def _seen_in(self) -> str:
        """What a sequence's support is: successful runs, and probes of failed ones."""
        ran = self.support - self.probed
        parts = ([f"{ran} successful runs"] if ran or not self.probed else []) + (
            [f"{self.probed} probes of failed runs"] if self.probed else [])
        return " and ".join(parts)

    def add_feeds(self, feeds: list[dict[str, Any]]) -> None:
        """Keep one more run's feed examples (the latest :data:`MAX_FEED_RUNS`)."""
        if feeds:
            self.feeds.append(feeds)
            del self.feeds[:-MAX_FEED_RUNS]

    def add_run(self, feeds: list[dict[str, Any]], head: str | None) -> None:
        """Keep one more run's feed examples and count its head (:attr:`Insight.head`)."""
        self.add_feeds(feeds)
        self.add_head(head)

    def add_head(self, head: str | None, heads: Iterable[str] = ()) -> None:
        """Keep one more run's :attr:`Insight.head` (None: no evidence), or another
        strategy's ``heads``: the latest :data:`MAX_HEAD_RUNS`."""
        self.heads.extend(heads)
        if head is not None:
            self.heads.append(head)
        del self.heads[:-MAX_HEAD_RUNS]

    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Strategy:
        return cls(**data)


def covers(sequence: Strategy, pitfall: Strategy) -> bool:
    """Whether ``sequence`` already carries ``pitfall``'s lesson.

    A pitfall learned with a repair names two tools, the failing one and the one that helped
    (``[t, via]``): a sequence that calls ``via`` and never ``t`` (the alternative: "Call
    service_history ... Do not use delay_feed") says it already. A prerequisite pitfall
    (``t`` needs a value from ``via``) is not covered by a sequence that calls ``via`` before
    ``t``: the sequence gives the order, the pitfall the way back when the model calls ``t``
    first anyway and reads the error: held back, a small model that called ``t`` first
    loops between the two tools (``t > via > t``) instead of recovering. Nor when the
    sequence is offered as a routine: held back there, a small model was seen to call the
    two tools by hand more often than the routine, and to need more turns. A pitfall
    without a repair (an argument format, an error nothing fixed) is never covered.
    """
    if sequence.kind != "sequence" or pitfall.kind != "pitfall" or len(pitfall.tools) != 2:
        return False
    tool, via = pitfall.tools
    return via in sequence.tools and tool not in sequence.tools


def shows_how_to_call(strategy: Strategy) -> bool:
    """Whether ``strategy`` is a pitfall whose repair is its own tool called another way: an
    argument shaped like the one that worked, or the arguments the tool's schema takes
    (:func:`~toolcycle.playbook.reflector.pitfall_advice`)."""
    return (strategy.kind == "pitfall" and bool(strategy.tools) and strategy.repair is not None
            and strategy.repair.kind in ("argument", "schema"))


#: How a sequence's advice names the tools its runs did without (:func:`skip_clause`).
SKIP = " Do not use "


def skip_clause(tools: Sequence[str]) -> str:
    """The clause of a sequence's advice naming the ``tools`` to skip (" Do not use
    web_search for this kind of task."), or "" where it names none: written by
    :func:`~toolcycle.playbook.sequence.sequence_advice`, and again from a strategy's
    :attr:`Strategy.skips` wherever a line shows the sequence another way."""
    return f"{SKIP}{', '.join(tools)} for this kind of task." if tools else ""


def skipped(strategy: Strategy) -> str:
    """A sequence's clause naming the tools to skip (:func:`skip_clause`), or "" where it
    names none."""
    return skip_clause(strategy.skips) if strategy.kind == "sequence" else ""


def strategy_id(kind: str, domain: str, tools: list[str], detail: str = "") -> str:
    """A stable id, so that the same pattern found in two processes gets the same strategy."""
    basis = "|".join([kind, domain, ">".join(tools), detail])
    return "s-" + hashlib.sha1(basis.encode()).hexdigest()[:10]

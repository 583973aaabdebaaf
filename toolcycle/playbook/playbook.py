"""The :class:`Playbook` an agent accepts: relevant strategies in, lessons from every run out.

``Agent(..., playbook=pb)`` calls :meth:`Playbook.instructions_for` before a run (the text is
appended to the instructions and the ids shown go to ``trace.strategies_shown``) and
:meth:`Playbook.observe` after it. Observing only enqueues the trace: reflection and curation
run on a background thread with its own database connection, so the caller's run ends as fast
as without a playbook. :meth:`Playbook.flush` waits for the queue to drain.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..run.plan import RunPlan
from ..run.state import ToolSelector
from ..tools import Tool
from ..tracing.trace import Trace
from ..words import roots
from . import dead_end
from .advice import HEADER as HEADER  # (defined there; imported from here before)
from .advice import choose
from .agent_tools import AgentTools
from .applicability import description_words
from .checks import check_playbook
from .curator import Curator, Delta
from .dead_end import FOUND_NOTHING
from .evidence import shaped_values
from .location import open_store
from .no_call import NO_CALL
from .offer import RoutineOffer
from .outcome import Grader, RunOutcome, judge
from .probe import current_probe
from .probe_chain import FailedRunProbe
from .read_only import tell_once
from .reflector import LLMReflector, Prober, StandIns, analyse, reflect
from .stats import (
    ToolStats,
    compute_stats,
    render_stats,
    step_observations,
    tool_observations,
)
from .store import PlaybookStore
from .strategy import Strategy, estimate_tokens, strategy_id
from .tool_lessons import in_play

log = logging.getLogger("toolcycle.playbook")

#: Set by :func:`toolcycle.playbook.learning.learn` around each run, so the run's observation
#: is judged against the task's ground truth instead of "it finished".
current_grader: contextvars.ContextVar[Grader | None] = contextvars.ContextVar(
    "toolcycle_playbook_grader", default=None
)



@dataclass(slots=True)
class _Job:
    trace: Trace
    outcome: Any
    grader: Grader | None
    prober: Prober | None = None


class Playbook:
    """Strategies for an agent's tasks, learned from its own traces.

    ``store``: a path to the SQLite file (created if missing), ``":memory:"``, a
    ``postgresql://`` URL (a playbook shared by many processes, docs/postgres.md) or a store.
    ``domain``: the section of the playbook to use (default: the agent's name).
    ``token_budget``: the most tokens (estimated) the injected text may take.
    ``learn``: learn from observed runs (online learning); False makes the playbook read-only.
    ``evaluator``: judges observed runs (default: a run succeeded if it completed).
    ``llm_reflector``: an :class:`LLMReflector` adding model-written advice (optional; slow).
    ``rule_lessons``: learn the deterministic reflector's lessons (sequences, pitfalls and
    their repairs); False leaves the lessons to ``llm_reflector`` alone, to compare the two.
    Tool statistics are kept either way.
    ``routines``: offer each learned tool chain whose data flow was seen in enough runs as one
    tool (:mod:`toolcycle.playbook.routine`); an agent built with this playbook gets the
    routines known when it is built, and each one learned later from its next run on; and
    have a run shown a sequence begin with its first call (:meth:`RoutineOffer.first_call`).
    ``"read_only"``, the default: only over tools declared ``read_only`` (lookups), since a
    routine calls tools on the model's behalf with values a learned rule took out of a
    result, and calling a lookup changes nothing; ``True``: over any tool that needs no
    approval; ``False``: advice only (and asking for the answer once a shown sequence is
    done). Why on by default: advice cannot make a run shorter than the calls it must
    make and the turns it takes to make them; a routine (a chain in one call) and a head
    start (the first call before the first turn) can, so they are where a learned
    playbook cuts turns for runs that already succeed (measured: docs/playbook.md, "Sixth
    measurement"). ``head_start``
    (with ``routines``): make a learned sequence's first call before the model's first
    turn where it takes the one value the task names (:mod:`toolcycle.playbook.sequence`).
    ``guide``: the most sequences shown to a task whose words meet no lesson, with the words
    they apply to, for the model to match by meaning (:mod:`toolcycle.playbook.advice`).
    0, the default, shows such a task nothing: a task no lesson names is, in a domain of
    several kinds of task, most often of a kind no lesson is about, and shown another kind's
    sequence "for tasks asked in other words" a small model follows it all the same, told
    to judge or not (the measurements: docs/playbook.md "Choosing the guide").
    """

    def __init__(
        self,
        store: str | Path | PlaybookStore = "playbook.db",
        *,
        domain: str | None = None,
        token_budget: int = 250,
        max_strategies: int = 4,
        include_tool_stats: bool = True,
        learn: bool = True,
        evaluator: Grader | None = None,
        curator: Curator | None = None,
        llm_reflector: LLMReflector | None = None,
        rule_lessons: bool = True,
        routines: bool | Literal["read_only"] = "read_only",
        head_start: bool = True,
        guide: int = 0,
    ) -> None:
        check_playbook(dict(locals()))  # every bad argument, before the store is opened
        self.store = open_store(store)
        self.domain = domain
        self.token_budget = token_budget
        self.max_strategies = max_strategies
        self.include_tool_stats = include_tool_stats
        self.learning = learn
        self.evaluator = evaluator
        self.curator = curator or Curator()
        self.llm_reflector = llm_reflector
        self.rule_lessons = rule_lessons
        self.routines = routines
        self.head_start = head_start
        self.guide = guide
        #: The routines this playbook made into tools (in this process): a run that called one
        #: followed the sequence it runs; it is not a new one-tool sequence to learn.
        self._routine_names: set[str] = set()
        #: Per agent: the tools it listed, its routines and their stand-ins (.agent_tools).
        self._agents: dict[str, AgentTools] = {}
        #: Per agent: its tools' parameter schemas (what a refused call should have passed).
        self._schemas: dict[str, dict[str, Any]] = {}
        #: Per agent: what plans its runs (:meth:`planner`).
        self._offers: dict[str, RoutineOffer] = {}
        #: Per agent: the words of its tools' descriptions, by tool (:meth:`describe_tools`).
        self._descriptions: dict[str, dict[str, frozenset[str]]] = {}
        self.errors: deque[BaseException] = deque(maxlen=100)
        self.deltas: deque[Delta] = deque(maxlen=1000)
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition()
        self._worker: threading.Thread | None = None
        self._stats_cache: tuple[tuple[str | None, int], dict[str, ToolStats]] | None = None

    # -- before a run ------------------------------------------------------------------------

    def instructions_for(
        self, task: str, agent_name: str, tool_names: Sequence[str]
    ) -> tuple[str, list[str]]:
        """The text to append to the instructions, and the ids of the strategies in it:
        strategies best first within the token budget, then the tool statistics if they fit;
        ``("", [])`` when nothing relevant is known (an empty playbook costs no tokens)."""
        text, chosen = self._advice(task, agent_name, tool_names)
        return text, [s.id for s in chosen]

    def _advice(self, task: str, agent_name: str, tool_names: Sequence[str]
                ) -> tuple[str, list[Strategy]]:
        """:meth:`instructions_for`, with the strategies shown themselves."""
        lines, used, chosen = self._choose(task, agent_name, tool_names)
        if self.include_tool_stats and chosen:
            # only the tools this task is likely to use: those of the strategies shown for it
            # (a dead end's tool is not likely: the line said it found nothing)
            relevant = {t for s in chosen if not dead_end.is_dead_end(s) for t in s.tools}
            # nor a tool a shown pitfall already warns of: said twice, it costs tokens on
            # every request, and a warning names the tool to a model that copies names
            relevant -= {s.tools[0] for s in chosen if s.kind == "pitfall" and s.tools}
            recommended = {t for s in chosen if s.kind == "sequence" for t in s.tools}
            advice = render_stats(self.tool_stats(self.domain or agent_name), tool_names,
                                  relevant=relevant, recommended=recommended)
            if advice and used + estimate_tokens(advice) + 1 <= self.token_budget:
                lines.append(advice)
        return "\n".join(lines), chosen

    def _choose(self, task: str, agent_name: str, tool_names: Sequence[str]
                ) -> tuple[list[str], int, list[Strategy]]:
        """What to show a run of ``task`` (:func:`~toolcycle.playbook.advice.choose`)."""
        return choose(self.store, task, self.domain or agent_name, tool_names,
                      limit=self.max_strategies, budget=self.token_budget, guide=self.guide,
                      routines=self._routine_names,
                      descriptions=self._descriptions.get(agent_name))

    def describe_tools(self, agent_name: str, descriptions: Mapping[str, str]) -> None:
        """What ``agent_name``'s tools are for, by name: the agent calls this once, when built.
        A sequence learned from its runs then also applies to the words of a task that its
        tools' descriptions contain (:func:`~toolcycle.playbook.applicability.described_words`)."""
        self._descriptions[agent_name] = description_words(descriptions)

    # -- the engine's interface (toolcycle.run.plan.PlaybookHook) ---------------------------

    def attach(self, agent_name: str, tools: Mapping[str, Tool[Any]],
               reserved: frozenset[str] = frozenset(), *, new_agent: bool = False
               ) -> list[Tool[Any]]:
        """``agent_name``'s tools, as the agent was built (``new_agent``) or as a run lists
        them (a toolset's, an MCP server's): described (:meth:`describe_tools`) and, with
        ``routines=True``, given the stand-ins their lessons make; returns the routines made
        over them that neither ``tools`` nor ``reserved`` names, offered from now on.
        ``new_agent``: the agent built last of a name wins (an earlier one's routines, made
        over its own tool objects, are not this one's)."""
        self.describe_tools(agent_name, {n: t.spec.description for n, t in tools.items()})
        tell_once(agent_name, tools)  # read_only.py: what a playbook cannot do without one
        self._schemas.setdefault(agent_name, {}).update(
            (n, t.spec.parameters) for n, t in tools.items())
        if not self.routines:
            return []
        if new_agent:
            self._agents[agent_name] = self._new_agent_tools()
        routines = [r for r in self._made_over(agent_name, tools)
                    if r.name not in tools and r.name not in reserved]
        self._agent(agent_name).offered.update(r.name for r in routines)
        return routines

    def plan(self, task: str, agent_name: str, offered: frozenset[str], *,
             gated: bool) -> RunPlan:
        """The plan of one run (:class:`~toolcycle.run.plan.RunPlan`): :meth:`RoutineOffer.plan`'s
        for the lessons it is shown (without ``routines=True`` only when the answer is due: no
        call made, no tool changed) and those about its tools (:mod:`.tool_lessons`).

        Why at the defaults too: a correct lesson can make a kind *worse*: shown "Call Y(a),
        then answer", a small model calls Y, has the answer, calls other tools and loses it.
        Asking for the answer once the shown sequence is done calls nothing itself, so it
        needs no opt-in as routines do."""
        lessons = in_play(self.store, self.domain or agent_name, offered)
        return self.planner(agent_name).plan(task, offered, gated=gated,
                                             calls=bool(self.routines),
                                             tool_lessons=lessons)

    def planner(self, agent_name: str) -> RoutineOffer:
        """The one :class:`RoutineOffer` answering :meth:`plan` for ``agent_name``'s runs
        (made again when the agent is, since it holds the agent's stand-ins by reference)."""
        made = self._agent(agent_name)
        offer = self._offers.get(agent_name)
        if offer is None or offer.made is not made:
            offer = RoutineOffer(self, agent_name, made.offered, None, made.stand_ins,
                                 made.fallbacks, made.repairs, made.reshapes, made.listed)
            offer.made = made
            self._offers[agent_name] = offer
        # the settings as they are now (changed after the agent was built: its next run's)
        offer.head_start_enabled = self.head_start
        offer.first_call_read_only = self.routines == "read_only"
        made.read_only_steps = self.routines == "read_only"
        return offer

    # -- what the interface is made of (public before it existed) -----------------------------

    def routine_tools(self, tools: Mapping[str, Tool[Any]], agent_name: str) -> list[Tool[Any]]:
        """The routines learned for this domain that ``tools`` can run, as tools (none with
        ``routines=False``; only over ``read_only`` tools at the default). The agent calls
        this once, when built; it also prepares the stand-ins :meth:`routine_selection`
        offers (routines for their first tool, fallbacks for a failing tool, reshaped calls
        for a tool rejecting an argument's format).
        """
        tell_once(agent_name, tools)  # read_only.py: what a playbook cannot do without one
        if not self.routines:
            return []
        # the agent built last of a name wins: an earlier one's routines, made over its own
        # tool objects, are not this one's (it keeps them; lessons now remake this one's)
        self._agents[agent_name] = self._new_agent_tools()
        return self._made_over(agent_name, tools)

    def tools_listed(self, agent_name: str, tools: Mapping[str, Tool[Any]]) -> list[Tool[Any]]:
        """``agent_name``'s tools as a run lists them (a toolset's, an MCP server's, are
        known only then, beside the agent's own and its routines): described
        (:meth:`describe_tools`) and, with ``routines=True``, given the fallbacks and
        reshaped calls their pitfalls make (:func:`~toolcycle.playbook.offer.
        pitfall_stand_ins`); returns the routines they make that ``tools`` lacks, which the
        run adds to its tools and offers as the agent's own are offered (:meth:`attach`)."""
        return self.attach(agent_name, tools)

    def _made_over(self, agent_name: str, tools: Mapping[str, Tool[Any]]) -> list[Tool[Any]]:
        """The stand-ins the domain's lessons make over ``tools`` (kept for the agent), and
        the routines they make that ``tools`` lacks."""
        strategies = self.store.strategies(self.domain or agent_name)
        made = self._agent(agent_name)
        made.remake_stand_ins(tools, strategies)
        routines = made.make_routines(tools, strategies)
        self._routine_names.update(r.name for r in routines)
        return routines

    def routines_learned(self, agent_name: str) -> tuple[Tool[Any], ...]:
        """The routines learned after ``agent_name`` was built, which each of its runs adds to
        its tools (the same tuple while none is added: a run compares it by identity)."""
        made = self._agents.get(agent_name)
        return () if made is None else made.learned

    def _agent(self, agent_name: str) -> AgentTools:
        made = self._agents.get(agent_name)
        if made is None:
            made = self._agents[agent_name] = self._new_agent_tools()
        return made

    def _new_agent_tools(self) -> AgentTools:
        return AgentTools(read_only_steps=self.routines == "read_only")

    def routine_selection(self, agent_name: str, routines: Sequence[str],
                          inner: ToolSelector | None) -> ToolSelector | None:
        """The tool selection of an agent offered ``routines``: each run is offered only the
        routines whose strategy the playbook shows that run, then ``inner`` (the agent's own
        selection, if any) applies. Why: a small model calls a routine it is offered for
        tasks the routine does not answer (a currency routine for a weather question).
        ``inner`` itself without ``routines=True``."""
        warnings.warn("Playbook.routine_selection is deprecated: an agent asks the playbook "
                      "for each run's plan (Playbook.plan, toolcycle.run.plan)",
                      DeprecationWarning, stacklevel=2)
        if not self.routines:
            return inner
        made = self._agent(agent_name)
        made.offered.update(routines)
        # by reference: a toolset's tools, and lessons as they change, add to them in place
        offer = RoutineOffer(self, agent_name, made.offered, inner, made.stand_ins,
                             made.fallbacks, made.repairs, made.reshapes, made.listed)
        offer.head_start_enabled = self.head_start
        return offer

    def answers_need_a_call(self, agent_name: str) -> bool:
        """Whether this agent's answers given without a tool call were learned to be wrong (the
        ``pitfall`` of :data:`~toolcycle.playbook.reflector.NO_CALL`): a routines playbook then
        has each run begin with a call (:meth:`RoutineOffer.first_call`); one lookup by id."""
        lesson = self.store.get(strategy_id("pitfall", self.domain or agent_name, [], NO_CALL))
        return lesson is not None and lesson.status == "active"

    def feeds_another(self, agent_name: str, tool: str) -> bool:
        """Whether a learned sequence of this agent's domain calls ``tool`` before another
        tool (its result feeds the next step), so that its answer is not the run's. Reads the
        domain's strategies: asked only for a run shown a pitfall and no sequence
        (:meth:`RoutineOffer.answer_when`)."""
        return any(s.kind == "sequence" and tool in s.tools[:-1]
                   for s in self.store.strategies(self.domain or agent_name))

    def strategies_shown_for(self, task: str, agent_name: str, tool_names: Sequence[str]
                             ) -> list[Strategy]:
        """The strategies :meth:`instructions_for` would show a run of ``task`` (without
        rendering the tool statistics that follow them)."""
        return self._choose(task, agent_name, tool_names)[2]

    def tool_stats(self, domain: str | None = None) -> dict[str, ToolStats]:
        """Per-tool statistics, recomputed only when new tool calls were recorded."""
        mark = (domain, self.store.tool_observation_mark())
        cached = self._stats_cache
        if cached is None or cached[0] != mark:
            cached = (mark, compute_stats(self.store.tool_observations(domain)))
            self._stats_cache = cached
        return cached[1]

    def strategies(
        self, domain: str | None = None, status: str | None = "active"
    ) -> list[Strategy]:
        return self.store.strategies(domain, status)

    # -- after a run -------------------------------------------------------------------------

    def observe(self, trace: Trace, outcome: Any = None) -> None:
        """Queue a finished run for learning and return at once.

        ``outcome`` is the run's result, its termination or the exception it raised; it is
        used to judge success when no grader or evaluator is set.
        """
        if not self.learning:
            return
        probe = current_probe.get()  # offline learning: a failed run's misses are probed
        job = _Job(trace, outcome, current_grader.get() or self.evaluator,
                   None if probe is None else FailedRunProbe(probe))
        with self._idle:
            self._pending += 1
        self._ensure_worker()
        self._queue.put(job)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every observed run has been learned from; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Finish the queue, stop the worker and close the store."""
        self.flush()
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join()
            self._worker = None
        self.store.close()

    def learn_from(self, trace: Trace, success: bool, prober: Prober | None = None
                   ) -> list[Delta]:
        """Reflect on one run and curate its insights now (the worker calls this).

        The trace is read once, into its analysis (:func:`~toolcycle.playbook.reflector.
        analyse`); ``prober``: in offline learning, a failed run's misses are then asked of
        the other tools (one step, behind :class:`~toolcycle.playbook.reflector.Prober`), and
        what holds the expected answer repairs them; each lesson type proposes from that
        evidence; the store is written once, at the end."""
        domain = self.domain or trace.agent_name
        analysis = analyse(trace, success)
        descriptions = self._descriptions.get(trace.agent_name)
        probed = prober.findings(trace, analysis, domain=domain, descriptions=descriptions) if (
            prober is not None and not success and self.rule_lessons) else None
        if probed is not None:
            analysis.repairs.update(probed.repairs)
        # a success that found nothing somewhere may show where a known dead end's answer is
        dead_ends = self.store.pitfall_tools(domain, FOUND_NOTHING) if (
            self.rule_lessons and success and any(c.status == "empty" for c in analysis.calls)
        ) else ()
        insights = (reflect(trace, success=success, domain=domain, analysis=analysis,
                            descriptions=descriptions,
                            schemas=self._schemas.get(trace.agent_name), dead_ends=dead_ends)
                    if self.rule_lessons else [])
        if probed is not None and probed.sequence is not None:
            insights.append(probed.sequence)
        stand_ins = self._stand_ins(trace.agent_name)  # (what each did: its call's record)
        stood_in = stand_ins.stood_in(trace.tools_offered, analysis.calls)
        if self._routine_names or stood_in:  # a routine's or stand-in's call: no new sequence
            insights = [i for i in insights if i.kind != "sequence" or not (
                self._routine_names.intersection(i.tools) or stood_in.intersection(i.tools))]
        if self.llm_reflector is not None:
            try:
                insights += asyncio.run(
                    self.llm_reflector.reflect(trace, success=success, domain=domain)
                )
            except Exception as exc:  # a small model failing its output: keep the rest
                # The model-written pass is an extra; its failure (invalid output after every
                # retry, a model error) must not cost the run its deterministic lessons and
                # tool statistics, which need no model.
                log.warning("playbook: the LLM reflector failed on run %s: %s",
                            trace.run_id, exc)
                self.errors.append(exc)
        outcome = RunOutcome(
            run_id=trace.run_id, success=success, iterations=analysis.iterations,
            tool_latency_ms=analysis.tool_latency_ms, shown=list(trace.strategies_shown),
            calls=stand_ins.as_judged(analysis.calls, stood_in),
            shaped=shaped_values(trace, analysis.calls, [
                c for c in analysis.calls if c.ok and c.call.name not in stood_in]),
            domain=domain,
            task=analysis.task, keywords=list(analysis.keywords),
            answered=(trace.termination or {}).get("action") == "answered",
        )
        with self.store.transaction():
            # the task's words, for the neighbours a later task is shown lessons by (the
            # roots of analysis.keywords, which are :func:`~.neighbours.words_of` the prompt)
            if not self.store.mark_observed(trace.run_id, domain,
                                            sorted(roots(analysis.keywords))):
                return []
            calls = [c for c in analysis.calls if c.call.name not in stood_in]
            made_for = [c for c in analysis.calls  # calls a routine made: its steps count too
                        if c.call.name in stood_in or c.call.name in self._routine_names]
            self.store.add_tool_observations(  # (a step of a tool the agent lacks is text)
                tool_observations(calls, analysis.repairs, domain)
                + step_observations(made_for, domain))
            deltas = self.curator.apply(self.store, insights, outcome)
        if self.routines and trace.agent_name in self._agents and any(
                d.op != "candidate" for d in deltas):
            learned = self._agents[trace.agent_name].relearn(self.store.strategies(domain))
            self._routine_names.update(r.name for r in learned)
        return deltas

    def _stand_ins(self, agent_name: str) -> StandIns:
        """Which stand-ins ``agent_name``'s runs are given, by the tool each answers for."""
        agent = self._agents.get(agent_name, AgentTools())
        return StandIns(
            {name: tool.name for name, tool in list(agent.stand_ins.items())},
            {tool.name: name for name, tool in list(agent.repairs.items())},
            {f.tool.name: f.pitfall.tools[1] for f in list(agent.fallbacks.values())})

    # -- the background worker ---------------------------------------------------------------

    def _ensure_worker(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(
                target=self._work, name="toolcycle-playbook", daemon=True
            )
            self._worker.start()

    def _work(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                success = judge(job.trace, job.outcome, job.grader)
                self.deltas.extend(self.learn_from(job.trace, success, job.prober))
            except Exception as exc:  # learning must never break the caller's runs
                log.warning("playbook: learning from run %s failed: %s", job.trace.run_id, exc)
                self.errors.append(exc)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()


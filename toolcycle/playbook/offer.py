"""What the playbook offers a run beyond advice: its routines, and the tools that answer for
others in it (stand-ins, fallbacks, repairs), and whether it must begin with a call.

Apart from :mod:`toolcycle.playbook.playbook` because it is asked per run by the engine
(:meth:`RoutineOffer.plan` answers :meth:`~toolcycle.run.plan.PlaybookHook.plan` with one
frozen :class:`~toolcycle.run.plan.RunPlan`), while the playbook itself learns and renders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any, Protocol

from ..models.base import ToolDefinition
from ..run.plan import RunPlan
from ..run.state import ToolSelector
from ..tools import Tool
from ..tracing.trace import Trace
from . import dead_end
from .applicability import contested
from .evidence import classify
from .fallback import Fallback, alternative_of, fallback_for
from .reshape import argument_lesson, reshaping_tool, shown_formats
from .routine import induce, repair, routine_name, routine_tool, stand_in
from .sequence import head_call
from .strategy import Strategy, covers, shows_how_to_call, skipped
from .tool_lessons import with_tool_lessons


class ShowsStrategies(Protocol):
    """What an offer asks of the playbook (:class:`~toolcycle.playbook.Playbook` is one)."""

    def strategies_shown_for(self, task: str, agent_name: str, tool_names: Sequence[str]
                             ) -> list[Strategy]: ...

    def answers_need_a_call(self, agent_name: str) -> bool: ...

    def feeds_another(self, agent_name: str, tool: str) -> bool: ...


def pitfall_stand_ins(strategies: Iterable[Strategy], tools: Mapping[str, Tool[Any]]
                      ) -> tuple[dict[str, Fallback], dict[str, Tool[Any]]]:
    """What the pitfalls among ``strategies`` make of ``tools``: each fallback by its pitfall's
    id (:func:`~toolcycle.playbook.fallback.fallback_for`), each reshaping call by its tool's
    name (:func:`~toolcycle.playbook.reshape.reshaping_tool`; the first lesson per tool, a
    pitfall's before a sequence's shown format, :func:`~toolcycle.playbook.reshape.
    shown_formats`, which mends only errors naming its argument)."""
    strategies = list(strategies)
    fallbacks: dict[str, Fallback] = {}
    reshapes: dict[str, Tool[Any]] = {}
    lessons = [lesson for s in strategies if (lesson := argument_lesson(s)) is not None]
    lessons += [lesson for s in strategies for lesson in shown_formats(s)]
    for lesson in lessons:
        if lesson.tool in tools and lesson.tool not in reshapes:
            reshaping = reshaping_tool(tools[lesson.tool], lesson)
            if reshaping is not None:
                reshapes[lesson.tool] = reshaping
    for strategy in strategies:
        fallback = fallback_for(strategy, tools)
        if fallback is not None:
            fallbacks[strategy.id] = fallback
    return fallbacks, reshapes


@dataclass(frozen=True, slots=True)
class OfferedRoutine:
    """A routine as a tool, what stands in for its first tool's calls and what repairs its
    last tool's (None where it cannot; :func:`~toolcycle.playbook.routine.stand_in`,
    :func:`~toolcycle.playbook.routine.repair`)."""

    tool: Tool[Any]
    stand_in: Tool[Any] | None
    repair: Tool[Any] | None


def routines_of(strategies: Iterable[Strategy], tools: Mapping[str, Tool[Any]]
                ) -> list[OfferedRoutine]:
    """The routines of ``strategies`` that ``tools`` can run and does not have, once each."""
    made: dict[str, OfferedRoutine] = {}
    for strategy in strategies:
        routine = induce(strategy)
        if routine is None or routine.name in tools or routine.name in made:
            continue
        built = routine_tool(routine, tools)
        if built is not None:
            made[routine.name] = OfferedRoutine(built, stand_in(routine, built, tools),
                                                repair(routine, built, tools))
    return list(made.values())


class RoutineOffer:
    """A :class:`~toolcycle.run.state.ToolSelector` that offers a run a routine only when the
    playbook shows the run the routine's strategy (see :meth:`Playbook.routine_selection`).

    It asks the playbook what it would show, at the cost of one more retrieval per run (about
    0.2 ms at 10,000 strategies). As a :class:`~toolcycle.run.state.ToolStandIns` it also has
    each offered routine answer the run's calls of its first tool, where the routine allows
    it (:func:`~toolcycle.playbook.routine.stand_in`), and each fallback its failing tool's in
    the runs shown its pitfall (:func:`~toolcycle.playbook.fallback.fallback_tool`), and each
    offered routine its last tool's failed calls (:func:`~toolcycle.playbook.routine.repair`).
    As a :class:`~toolcycle.run.state.FirstCallRequired` it has a run shown a sequence begin
    with a call of its first tool, and every other run a call where answers without one were
    learned to be wrong. As a :class:`~toolcycle.run.state.AnswerWhenDone` it has a run
    shown a sequence answer once the sequence's calls succeeded. As a
    :class:`~toolcycle.run.state.HeadStart` it makes that sequence's first call before the
    model's first turn, where the call takes the one value the task names. Stand-ins, the
    first call, the head start and the answer share one more retrieval per run; the no-call
    lesson costs one lookup by id.
    """

    def __init__(self, playbook: ShowsStrategies, agent_name: str, routines: AbstractSet[str],
                 inner: ToolSelector | None,
                 stand_ins: Mapping[str, Tool[Any]] | None = None,
                 fallbacks: Mapping[str, Fallback] | None = None,
                 repairs: Mapping[str, Tool[Any]] | None = None,
                 reshapes: Mapping[str, Tool[Any]] | None = None,
                 listed: Mapping[str, Tool[Any]] | None = None) -> None:
        self.playbook = playbook
        self.agent_name = agent_name
        #: These, the stand-ins, repairs, fallbacks and reshaped calls are kept by reference:
        #: the playbook adds a toolset's when a run lists its tools (read as copies here).
        self.routines = routines
        self.inner = inner
        self._stand_ins = stand_ins if stand_ins is not None else {}
        self._repairs = repairs if repairs is not None else {}
        self._fallbacks = fallbacks if fallbacks is not None else {}
        self._reshapes = reshapes if reshapes is not None else {}
        self._listed = listed if listed is not None else {}  # the agent's tools, by name
        #: The playbook's record of the agent's tools this offer reads (its identity tells
        #: the playbook when the agent was built again: :meth:`Playbook.planner`).
        self.made: object = None
        #: Whether a run may be made to begin with a tool call (see :meth:`first_call`).
        self.first_call_enabled = True
        #: Whether a run may be made to begin only with a call of a ``read_only`` tool (the
        #: playbook's ``routines="read_only"``): see :meth:`first_call`.
        self.first_call_read_only = False
        #: Whether a run may be asked for its answer once its sequence is done (see
        #: :meth:`answer_when`).
        self.answer_when_enabled = True
        #: Whether a run's first call may be made before its first model request (see
        #: :meth:`head_start`).
        self.head_start_enabled = True
        #: This run's (task, offered tools) and the strategies shown it: its stand-ins and
        #: its first call ask the same question, one retrieval answers both (reset by
        #: :meth:`select`, which the engine calls first for every run).
        self._last: tuple[str, frozenset[str], list[Strategy]] | None = None

    def select(self, task: str, tools: Sequence[ToolDefinition],
               keep: frozenset[str] = frozenset()) -> tuple[ToolDefinition, ...]:
        self._last = None  # a new run: what the playbook shows may have changed since
        chosen = tuple(tools)
        if self.routines:  # an agent with fallbacks only has no routine to hold back
            names = [d.name for d in tools]
            shown = self.playbook.strategies_shown_for(task, self.agent_name, names)
            wanted = {routine_name(s.tools) for s in shown if s.kind == "sequence"}
            chosen = tuple(d for d in tools if d.name not in self.routines or d.name in wanted)
        return chosen if self.inner is None else self.inner.select(task, chosen, keep)

    def plan(self, task: str, offered: frozenset[str], *, gated: bool,
             calls: bool = True, tool_lessons: Sequence[Strategy] = ()) -> RunPlan:
        """The plan of one run of ``task`` offered ``offered`` (the engine's
        :class:`~toolcycle.run.plan.RunPlan`): the routines whose strategy the run is not
        shown are withheld, and the rest is asked of what is left offered; ``gated`` (a call
        can need approval): no stand-in and no head start. Without ``calls`` (the playbook's
        ``routines=False``) only :meth:`answer_when`: nothing that calls a tool or forces
        one. ``tool_lessons``: the lessons about the offered tools (shown with them,
        :mod:`~toolcycle.playbook.tool_lessons`), whose fallbacks stand in wherever their
        tool is offered."""
        self._last = None  # a new run: what the playbook shows may have changed since
        tool_lessons = self._not_skipped(task, offered, tool_lessons)
        if not calls:
            return with_tool_lessons(RunPlan(
                answer_when=self.answer_when(task, offered, frozenset()),
                call_while=self.call_while(task, offered)), tool_lessons, task)
        withheld: frozenset[str] = frozenset()
        routines = frozenset(self.routines)  # (a toolset's listing may add to it meanwhile)
        if routines & offered:  # an agent with fallbacks only has no routine to hold back
            shown = self.playbook.strategies_shown_for(task, self.agent_name, sorted(offered))
            wanted = {routine_name(s.tools) for s in shown if s.kind == "sequence"}
            withheld = frozenset(n for n in offered if n in routines and n not in wanted)
        names = offered - withheld
        swaps = {} if gated else self.stand_ins(task, names)
        return with_tool_lessons(RunPlan(
            withheld=withheld, stand_ins=MappingProxyType(swaps),
            first_call=self.first_call(task, names),
            answer_when=self.answer_when(task, names, frozenset(swaps)),
            call_while=self.call_while(task, names),
            head_start=None if gated else self.head_start(task, names)), tool_lessons, task)

    def stand_ins(self, task: str, offered: frozenset[str]) -> dict[str, Tool[Any]]:
        """For a run of ``task`` offered ``offered``: tool name -> what answers its calls. An
        offered routine answers its first tool's (:func:`~toolcycle.playbook.routine.
        stand_in`); a pitfall shown the run, with a fallback, its failing tool's
        (:func:`~toolcycle.playbook.fallback.fallback_tool`), and one not shown the same
        for the failure it was learned from alone; an offered routine, its last
        tool's failed calls (:func:`~toolcycle.playbook.routine.repair`); a tool whose
        argument format a pitfall learned, its calls rejected for it (:func:`~toolcycle.
        playbook.reshape.reshaping_tool`: the error proves the lesson applies, so it needs
        no showing). Stand-ins win over fallbacks, fallbacks over repairs, repairs over
        reshaped calls, and those over fallbacks for a pitfall not shown."""
        # copies (list(): one step under the GIL): a run on another thread may be listing a
        # toolset's tools into these maps
        swaps = {name: tool for name, tool in list(self._reshapes.items()) if name in offered}
        swaps.update((tool.name, tool) for name, tool in list(self._repairs.items())
                     if name in offered and name in self.routines and tool.name in offered)
        if self._fallbacks:  # one more retrieval, only for an agent with fallbacks
            shown = self._shown(task, offered)
            ids = {s.id for s in shown}
            fallbacks = [f for f in list(self._fallbacks.values()) if f.tool.name in offered]
            for fallback in fallbacks:
                # shown, or held back beside a shown sequence that carries its lesson
                if fallback.pitfall.id in ids or any(
                        covers(s, fallback.pitfall) for s in shown if s.kind == "sequence"):
                    swaps[fallback.tool.name] = fallback.tool
            for fallback in fallbacks:  # not shown: for the failure it was learned from
                if fallback.proven is not None and fallback.tool.name not in swaps:
                    swaps[fallback.tool.name] = fallback.proven
        swaps.update((tool.name, tool) for name, tool in list(self._stand_ins.items())
                     if name in offered and name in self.routines and tool.name in offered)
        return swaps

    def first_call(self, task: str, offered: frozenset[str]) -> str | None:
        """How a run of ``task`` must begin: with a call of the first tool of the sequence it
        is shown (this kind of task is answered by looking things up, starting there), or with
        some call (``"required"``) where the playbook learned that this agent's answers
        without a call are wrong (:meth:`Playbook.answers_need_a_call`); ``None``: free.

        Why: shown ``Call order_lookup(order_id), then track_parcel(...)`` (or its routine),
        a small model may still answer from memory in its first turn, with a made-up status
        or price: advice is read, not obeyed. Why the tool by name: made to call *some* tool
        (``"required"``, which the text protocols say as "Call one of the tools now."), a
        small model reaches for the most tempting one (a web search, a look-alike record
        system) rather than the one the lesson named. Shown no sequence but dead ends (tools
        that found nothing for tasks like this, :mod:`~toolcycle.playbook.dead_end`) that
        leave one offered tool untried, it begins with that tool; else, shown a pitfall that
        says how to call its own tool (the tool the runs of this kind reached for: an
        ``argument`` repair, "Pass date like "01.05.2026"", or a ``schema`` one, the
        arguments the loop's refusal quoted), with that tool. Why: made to call *some* tool,
        a small model calls a look-alike that finds nothing for the task and answers that
        there is nothing to find; and a task worded apart from a sequence's tasks may meet
        only the pitfall of its tool, which then is the only pointer to where the answer is.
        A pitfall whose repair is another tool (an alternative, a prerequisite) names no
        first call here: its failing tool is the one not to start with. The choice holds
        only until the run's first tool call.
        """
        if not self.first_call_enabled:
            return None
        choice = self._first_call(task, offered)
        if choice is None or not self.first_call_read_only:
            return choice
        # a forced call is one the model would not have made: only of a lookup, and "some
        # call" only where every tool the run may reach for is one
        names = offered if choice == "required" else {choice}
        listed = [self._listed.get(name) for name in names if name not in self.routines]
        return choice if all(t is not None and t.policy.read_only for t in listed) else None

    def _first_call(self, task: str, offered: frozenset[str]) -> str | None:
        """:meth:`first_call`, whatever the tools' policies."""
        shown = self._shown(task, offered)
        sequences = [s for s in shown if s.kind == "sequence" and s.tools]
        if len(contested(task, sequences)) == len(sequences):
            sequences = []  # which of them fits is not known (applicability.contested)
        first = next((s.tools[0] for s in sequences), None)
        if first is not None:
            return first if first in offered else "required"
        left = dead_end.untried(shown, offered, skip=self.routines)
        if len(left) == 1:
            return left[0]
        fixed = next((s.tools[0] for s in shown if shows_how_to_call(s)
                      and s.tools[0] in offered), None)
        if fixed is not None:
            return fixed
        return "required" if self.playbook.answers_need_a_call(self.agent_name) else None

    def answer_when(self, task: str, offered: frozenset[str], answered_for: frozenset[str]
                    ) -> Callable[[Trace], bool] | None:
        """When a run of ``task`` has done what it was shown: the first sequence shown it
        (the one :meth:`first_call` starts) succeeded, call by call in order, or in one call
        of its routine that ran every step (offered, or standing in for its first tool:
        ``answered_for``). Shown sequences none of which is known to fit (all
        :func:`~toolcycle.playbook.applicability.contested`: :meth:`first_call` names none),
        whichever the run did: the model's choice settles it. Why: a task met by several
        sequences through a word they all apply to ("What room is the guest in?" meeting a
        stay, a housekeeping and a bill sequence through "room") would be held to whichever
        ranked first, and a run that had its answer from another would go on calling tools
        it does not need.

        Shown no sequence but a pitfall that says how to call its own tool, that tool is the
        sequence (:meth:`_own_tool_done`). Shown no sequence but a pitfall's alternative
        ("delay_feed times out. Call service_history(service) instead."), the alternative is
        the sequence: such a repair is learned only from runs the alternative's result
        answered (reflector.analyse). Its fallback, where it answers the failing tool's
        call, runs it whole.

        Why: a sequence is learned from the calls that fed successful runs' answers, and
        ends "then answer"; shown "Call lookup(name), then answer", a small model may call
        it, have the figure, and go on calling other tools (and the same one again) for
        turns, losing the answer it had. A call
        whose result is an error, empty or a repeat does not count: a sequence that found
        nothing leaves the model free to look further.
        """
        if not self.answer_when_enabled:
            return None
        shown = self._shown(task, offered)
        sequences = [s for s in shown if s.kind == "sequence" and s.tools]
        if sequences and len(contested(task, sequences)) == len(sequences):
            # which fits is not known (first_call named none): the one the run did is it
            return partial(any_done, tuple(self._done(tuple(s.tools), offered, answered_for)
                                           for s in sequences))
        sequence = tuple(sequences[0].tools) if sequences else None
        if sequence is None:
            pair = next((p for s in shown if (p := alternative_of(s)) is not None
                         and p[1] in offered), None)
            if pair is None:
                return self._own_tool_done(shown, offered)
            failing, alternative = pair
            whole = {failing} if failing in answered_for else set()
            return partial(sequence_done, (alternative,), frozenset(whole))
        return self._done(sequence, offered, answered_for)

    def _not_skipped(self, task: str, offered: frozenset[str],
                     lessons: Sequence[Strategy]) -> list[Strategy]:
        """The tool lessons a run of ``task`` is shown beside its sequence: not those about a
        tool the shown sequence says not to use for this kind of task.

        Why: the sequence says where this kind's answer is; a note on a tool it excludes
        ("house_entries fails with: ... Pass folio_no like ...") only names that tool again,
        and a small model calls what it reads named: told "Do not use house_entries", with
        the note on house_entries in its tool list, the 1.5B called house_entries first and
        wandered for ten turns (the same principle as a pitfall a shown sequence covers,
        :func:`~toolcycle.playbook.strategy.covers`)."""
        if not lessons:
            return list(lessons)
        skipped = {t for s in self._shown(task, offered) if s.kind == "sequence"
                   for t in s.skips}
        return [lesson for lesson in lessons if lesson.tools[0] not in skipped]

    def call_while(self, task: str, offered: frozenset[str]) -> Callable[[Trace], bool] | None:
        """While a run of ``task`` has begun the sequence it was shown and not finished it
        (:func:`stopped_short`), its next request requires a call: the sequence
        :meth:`answer_when` waits for, where it has several tools, all offered, and is known
        to fit (not contested).

        Why: a sequence is learned because its later calls hold the answer; shown "Call
        find(name), then detail(ref), then answer", a small model calls find, has an id, and
        answers from it, inventing the figure detail would have given. Asked only to go on
        calling, never which call, it is left to make the next step itself; it calls nothing
        for the model, as :meth:`answer_when` does not."""
        if not self.answer_when_enabled:
            return None
        sequences = [s for s in self._shown(task, offered) if s.kind == "sequence" and s.tools]
        if not sequences or contested(task, sequences):
            return None
        sequence = tuple(sequences[0].tools)
        if len(sequence) < 2 or not set(sequence) <= offered:
            return None
        return partial(stopped_short, sequence)

    def head_start(self, task: str, offered: frozenset[str]) -> tuple[str, dict[str, Any]] | None:
        """The call a run of ``task`` begins with before the model's first turn
        (:mod:`~toolcycle.playbook.sequence`): the first call of the sequence the run is
        made to begin with (:meth:`first_call`), with the one value the task names, where
        the sequence learned that its first call takes it. A sequence of several tools is
        made whole by its routine's stand-in for its first tool, or not at all (its first
        call alone would leave the model a call to make: no turn saved)."""
        if not self.head_start_enabled:
            return None
        first = self.first_call(task, offered)
        if first is None or first not in offered:
            return None
        sequence = next((s for s in self._shown(task, offered) if s.kind == "sequence"
                         and s.tools and s.tools[0] == first), None)
        if sequence is None:
            return None
        routine = routine_name(sequence.tools)
        standing = self._stand_ins.get(routine) if routine in offered else None
        if len(sequence.tools) > 1 and (standing is None or standing.name != first):
            return None
        arguments = head_call(sequence, standing or self._listed.get(first), task)
        return None if arguments is None else (first, arguments)

    def _done(self, sequence: tuple[str, ...], offered: frozenset[str],
              answered_for: frozenset[str]) -> Callable[[Trace], bool]:
        """Whether a run did ``sequence``: call by call, or in one call of its routine (or
        of its first tool, where the routine's stand-in answered for it)."""
        routine = routine_name(sequence)
        whole = {routine}
        standing = self._stand_ins.get(routine)
        if (routine in offered and standing is not None and standing.name == sequence[0]
                and sequence[0] in answered_for):
            whole.add(sequence[0])
        return partial(sequence_done, sequence, frozenset(whole))

    def _own_tool_done(self, shown: Sequence[Strategy], offered: frozenset[str]
                       ) -> Callable[[Trace], bool] | None:
        """Shown a pitfall that says how to call its own tool (the first call
        :meth:`first_call` names), done once that tool answered, unless a learned sequence
        of the domain feeds its result into another tool (then it is a first step, and the
        answer lies further on).

        Why: made to begin with the right tool, called right, a run may have the answer in
        its result ("parking_spaces": 260) and still go on to other tools and answer that
        there is no information; once the tool the pitfall taught answered, the run is asked
        for its answer."""
        own = next((s.tools[0] for s in shown if shows_how_to_call(s)
                    and s.tools[0] in offered), None)
        if own is None or self.playbook.feeds_another(self.agent_name, own):
            return None
        return partial(sequence_done, (own,), frozenset())

    def _shown(self, task: str, offered: frozenset[str]) -> list[Strategy]:
        last = self._last  # read once: runs of other tasks may replace it meanwhile
        if last is not None and last[0] == task and last[1] == offered:
            return last[2]
        shown = self.playbook.strategies_shown_for(task, self.agent_name, sorted(offered))
        self._last = (task, offered, shown)
        return shown


def any_done(checks: Sequence[Callable[[Trace], bool]], trace: Trace) -> bool:
    """Whether ``trace`` did what any of ``checks`` asks (:func:`sequence_done` each)."""
    return any(check(trace) for check in checks)


def sequence_done(sequence: Sequence[str], whole: frozenset[str], trace: Trace) -> bool:
    """Whether ``trace``'s calls did ``sequence``: a successful call (not an error, an empty
    result or a repeat: :func:`~toolcycle.playbook.evidence.classify`) of each of its tools
    in order, or one of a tool in ``whole`` (that runs the sequence: its routine) that ran
    every step (as it noted: :class:`~toolcycle.playbook.routine_result.StandIn`)."""
    position = 0
    for evidence in classify(trace):
        if not evidence.ok:
            continue
        name = evidence.call.name
        if name in whole and (act := evidence.call.stand_in) is not None and act.ran:
            return True
        if name == sequence[position]:
            position += 1
            if position == len(sequence):
                return True
    return False


def stopped_short(sequence: Sequence[str], trace: Trace) -> bool:
    """Whether ``trace`` has begun ``sequence`` and not finished it, its last call a step of
    it: a successful call of each of its first tools in order, at least one, not all, and no
    call after the latest of them. A run whose last call left the sequence (another tool, a
    failed or empty call) is off it: nothing is asked of it."""
    position = 0
    last_step = False
    for evidence in classify(trace):
        last_step = False
        if evidence.ok and position < len(sequence) and evidence.call.name == sequence[position]:
            position += 1
            last_step = True
    return last_step and 0 < position < len(sequence)


def render_line(strategy: Strategy, tool_names: Sequence[str]) -> str:
    """A strategy's line; a sequence whose routine the agent offers points at the routine.

    The routine line keeps the shape of the sequence advice (a call with its arguments, then
    "answer") and its "Do not use" list, and says the answer is still to be looked up:
    "Call country_info_then_exchange_rate (it runs country_info, then exchange_rate for you),
    then answer." makes a small model answer at once with made-up figures, as if the routine
    had run. The wording was chosen by measurement (docs/benchmarks.md).
    """
    if strategy.kind == "sequence" and len(strategy.tools) > 1:
        name = routine_name(strategy.tools)
        if name in tool_names:
            args = ", ".join(map(str, strategy.first_args))
            return (f"- Call {name}({args}) to look the answer up, then "
                    f"answer with what it returns.{skipped(strategy)}"
                    + f" (seen in {strategy.support} successful runs)")
    return strategy.render(with_id=False)


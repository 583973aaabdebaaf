"""Dead ends: the tools that found nothing for a kind of task, and the one left to try.

Every other lesson of the playbook is learned from a call that worked somewhere (the chain
that held a successful run's answer, the repair after an error). A kind of task that no run
has answered yet teaches none of them, however often it fails. What its failed runs do show
is where the answer is *not*: each call they made came back empty. The reflector records one
``pitfall`` per such tool (``detail`` :data:`FOUND_NOTHING`, one tool each, so that runs which
tried different subsets still add up per tool); the curator promotes each as it promotes any
failure pattern (three failed runs of different tasks, applicability from the words those
tasks share); a run shown them is told, in one line, which tools found nothing for tasks like
it, and a routines playbook has it begin with the one offered tool nobody tried
(:meth:`~toolcycle.playbook.offer.RoutineOffer.first_call`) when exactly one is left.

Why: a small model tends to try the same tools in the same order, so a kind of task whose
answer is in the one tool it never tries fails run after run, and no lesson learned from a
call that worked ever comes; what those runs do teach is which tools to stop trying.

Only runs that found nothing at all count (a run with a good call may have failed after
finding the right source), and only the tools whose every call there was empty (a tool that
failed with an error may hold the answer when called right; its error is a pitfall of its
own). The first call is named, not the answer asked for after it: the untried tool
may be the first step of a chain (an id lookup before a detail call), and a run that gets its
answer there teaches the sequence itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from .evidence import CallEvidence, Repair
from .lesson import RunEvidence
from .strategy import Insight, Strategy, UseVerdict

#: The ``detail`` of a dead-end pitfall (its one tool found nothing for this kind of task).
FOUND_NOTHING = "found nothing"
#: At most this many untried tools are named in the advice line ("Try atlas or helix.").
NAMED_UNTRIED = 3


def found_nothing(calls: Sequence[CallEvidence]) -> list[str]:
    """The tools whose calls all came back empty in a failed run that found nothing, in the
    order first tried; ``[]`` if any call of the run was good. A tool that also failed with
    an error in the run is not among them: called right, it may have had the answer (its
    error is a pitfall of its own, with the arguments it takes)."""
    if any(c.ok for c in calls):
        return []
    failed = {c.call.name for c in calls if c.status == "error"}
    return list(dict.fromkeys(c.call.name for c in calls
                              if c.status == "empty" and c.call.name not in failed))


def repaired(calls: Sequence[CallEvidence], repairs: Mapping[int, Repair]) -> dict[str, Repair]:
    """In a failed run, the tools whose empty calls have an ``alternative`` repair (a probe's:
    :mod:`~toolcycle.playbook.probe`), each with its first such repair; a tool that also
    failed with an error in the run is not among them (its error is its lesson)."""
    failed = {c.call.name for c in calls if c.status == "error"}
    out: dict[str, Repair] = {}
    for c in calls:
        repair = repairs.get(c.index)
        if (c.status == "empty" and repair is not None and repair.kind == "alternative"
                and c.call.name not in failed):
            out.setdefault(c.call.name, repair)
    return out


def found_elsewhere(calls: Sequence[CallEvidence], repairs: Mapping[int, Repair],
                    dead: Collection[str]) -> dict[str, Repair]:
    """In a run that got its answer, the known dead ends (``dead``:
    :meth:`~.store.PlaybookStore.pitfall_tools`) whose
    every call came back empty while another tool's result held the answer (the
    ``alternative`` repair :func:`~toolcycle.playbook.reflector.analyse` found: the tool
    whose result the answer's figures and words came from), each with its first such repair.
    An empty call of a tool no failed run found empty is a detour, which the run's sequence
    already says to skip.

    Why: the probes that ask the other tools where a failed run's answer was run only where
    a tool is ``read_only``; without them an empty first-choice source taught nothing but
    its dead end, though every run that did get the answer showed where it is. The trace
    says it, whatever the tools declare (issue 69)."""
    good = {c.call.name for c in calls if c.ok}
    return {tool: repair for tool, repair in repaired(calls, repairs).items()
            if tool not in good and tool in dead}


def advice(tool: str, repair: Repair | None = None) -> str:
    """The lesson of one tool, as stored (shown combined, see :func:`render`); with the
    ``alternative`` that held the answer, a pitfall of its own ("... Call Y(a) instead.",
    which a routines playbook falls back to: :mod:`~toolcycle.playbook.fallback`)."""
    line = f"{tool} found nothing for this kind of task."
    if repair is None:
        return line
    return f"{line} Call {repair.via}({', '.join(repair.via_args)}) instead."


def is_dead_end(strategy: Strategy) -> bool:
    return strategy.kind == "pitfall" and strategy.detail == FOUND_NOTHING and bool(
        strategy.tools)


def says_found_nothing(strategy: Strategy) -> bool:
    """A dead end, or one a probe repaired ("X found nothing ... Call Y(a) instead.")."""
    return strategy.kind == "pitfall" and bool(strategy.tools) and (
        strategy.error_class == FOUND_NOTHING)


def dead_tools(shown: Iterable[Strategy]) -> set[str]:
    """The tools that the dead ends among ``shown`` (repaired ones too) say found nothing."""
    return {s.tools[0] for s in shown if says_found_nothing(s)}


def untried(shown: Iterable[Strategy], offered: Iterable[str], skip: Iterable[str] = ()
            ) -> list[str]:
    """The offered tools (but ``skip``: routines, which run known tools) that no dead end
    among ``shown`` names; ``[]`` when no dead end is shown."""
    dead = dead_tools(shown)
    if not dead:
        return []
    left = set(offered) - dead - set(skip)
    return sorted(left)


def render(dead_ends: Sequence[Strategy], left: Sequence[str]) -> str:
    """One line for all the dead ends shown a run, and what is left to try.

    "- For tasks like this, helix, nimbus and vertex found nothing (seen in 3-5 failed
    runs). Try atlas."
    """
    tools = sorted(dict.fromkeys(s.tools[0] for s in dead_ends))
    names = tools[0] if len(tools) == 1 else ", ".join(tools[:-1]) + f" and {tools[-1]}"
    support = sorted({s.support for s in dead_ends})
    seen = str(support[0]) if len(support) == 1 else f"{support[0]}-{support[-1]}"
    line = f"- For tasks like this, {names} found nothing (seen in {seen} failed runs)."
    if 0 < len(left) <= NAMED_UNTRIED:
        line += " Try " + (left[0] if len(left) == 1
                           else ", ".join(left[:-1]) + f" or {left[-1]}") + "."
    elif left:
        line += " Try another tool."
    return line


def verdict(strategy: Strategy, calls: Sequence[tuple[str, str]], success: bool) -> UseVerdict:
    """How a run shown a dead end bears on it. Followed: the run did not call its tool; a
    run that called it and found nothing again ignored it (and, failing, confirms it as an
    insight); one whose call of it answered shows the lesson wrong for that task (harmful,
    so that a dead end retrieved for tasks the tool does serve retires). A run that followed
    it and failed says nothing about the tool (misfit): the rest of its calls failed it."""
    tool = strategy.tools[0]
    statuses = {status for name, status in calls if name == tool}
    if "ok" in statuses:
        return "harmful"
    if statuses:
        return "ignored"
    return "helpful" if success else "misfit"


class DeadEnds:
    """The dead-end lesson: where a kind of task is not (the tools a failed run found empty)
    and where it is instead (a probe's find in a failed run, or, in a successful run, the
    tool whose result its answer came from after a known dead end found nothing)."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        calls, repairs = run.analysis.calls, run.analysis.repairs
        found = (found_elsewhere(calls, repairs, run.dead_ends) if run.success
                 else repaired(calls, repairs))
        empty = [] if run.success else found_nothing(calls)
        lessons: list[Insight] = []
        for tool in dict.fromkeys([*empty, *found]):
            repair = found.get(tool)
            if repair is None:
                lessons.append(run.pitfall(advice(tool), [tool], FOUND_NOTHING))
                continue
            # the advice names the one call (no chain after it): so does the stored repair
            taught = replace(repair, then=())
            lessons.append(run.pitfall(advice(tool, taught), [tool, repair.via], FOUND_NOTHING,
                                       taught))
        return lessons

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return verdict(strategy, calls, success) if is_dead_end(strategy) else None

    def owns(self, strategy: Strategy) -> bool:
        return says_found_nothing(strategy)

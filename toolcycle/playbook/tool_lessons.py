"""Lessons about a tool live with that tool: shown in its description whenever it is offered.

A playbook learns two sorts of lesson. A lesson about a *task* (the calls that answer a kind
of question, the tools that found nothing for it) holds for tasks like the ones it was
learned from, so it is retrieved by the words of the request
(:func:`~toolcycle.playbook.advice.choose`). A lesson about a *tool* (the argument format it
takes, that it times out or is down, that it needs a value another tool gives) holds
wherever that tool is called, whatever the task says, and says nothing to a task that does
not call it. Such a lesson is therefore chosen by the tools a run is offered, never by its
words, and shown where the model reads about the tool: appended to that tool's description
for the run (:attr:`~toolcycle.run.plan.RunPlan.notes`), not to the run's instructions.

Why: the words of the tasks a tool's lesson was learned from are the words of a kind of task,
not of the tool: a date-format lesson of a daily-figures tool learned from attendance questions
reaches a task of another kind that says "course" too (answered by another tool), which is told
to follow it and fails; and a task about the same tool worded without those words is never told
the format. Chosen by the tool, the first run sees the lesson only beside a tool it does not
need, the second beside the tool it calls.

Which lessons are about a tool: the pitfalls learned from a call's error (an error says
what the tool did with what it was given, in any task): its argument format, the schema it
takes, the value it needs from another tool first, that it times out, is down or refuses
calls (then the tool that answered instead). Two stay with the tasks they were learned
from: a dead end ("found nothing for this kind of task": a tool that holds nothing for one
kind of question may answer another, :mod:`~toolcycle.playbook.dead_end`), and an error
that blamed the task's input which another tool then answered ("find_ticker fails with:
unknown company …. Call staff_directory(name), then weather(city) instead.", learned from
a weather question: where such questions are answered, not how find_ticker behaves;
:attr:`~toolcycle.playbook.strategy.Insight.about_tool`, set by the pitfall lesson).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from ..run.plan import RunPlan
from .dead_end import says_found_nothing
from .store import PlaybookStore
from .strategy import Strategy

#: The most lessons one tool's description carries (the best evidence first): each is read
#: on every request of every run the tool is offered to.
PER_TOOL = 2
#: How many of a domain's pitfalls are read to find them (best evidence first).
_READ = 256
#: What introduces a tool's lessons in its description.
NOTE_HEADER = "Learned from earlier runs:"


def is_tool_lesson(strategy: Strategy) -> bool:
    """Whether ``strategy`` is a lesson about its first tool (shown with that tool) rather
    than about a kind of task (retrieved by the task's words): a pitfall of an error, unless
    learned as the task's (:attr:`~toolcycle.playbook.strategy.Strategy.about_tool`)."""
    return (strategy.kind == "pitfall" and bool(strategy.tools)
            and not says_found_nothing(strategy) and strategy.about_tool is not False)


def in_play(store: PlaybookStore, domain: str, offered: Iterable[str]) -> list[Strategy]:
    """The tool lessons of ``domain`` for the tools ``offered``: those whose every tool is
    offered (a repair that calls another tool is no lesson where that tool is not), at most
    :data:`PER_TOOL` per tool, best evidence first."""
    names = sorted(set(offered))
    per_tool: dict[str, int] = {}
    chosen: list[Strategy] = []
    for strategy in store.leading(domain, "pitfall", names, _READ):
        if not is_tool_lesson(strategy):
            continue
        tool = strategy.tools[0]
        if per_tool.get(tool, 0) >= PER_TOOL:
            continue
        per_tool[tool] = per_tool.get(tool, 0) + 1
        chosen.append(strategy)
    return chosen


def notes(lessons: Sequence[Strategy], task: str = "") -> Mapping[str, str]:
    """Each tool's note: the advice of its lessons (:func:`in_play`) as a run of ``task`` is
    shown it (:meth:`~toolcycle.playbook.strategy.Strategy.for_task`), after
    :data:`NOTE_HEADER`, to append to its description."""
    by_tool: dict[str, list[str]] = {}
    for strategy in lessons:
        by_tool.setdefault(strategy.tools[0], []).append(strategy.for_task(task).advice)
    return {tool: " ".join([NOTE_HEADER, *advice]) for tool, advice in by_tool.items()}


def with_tool_lessons(plan: RunPlan, lessons: Sequence[Strategy], task: str = "") -> RunPlan:
    """``plan`` with the notes of ``lessons`` (:func:`in_play`) on their tools' descriptions,
    as a run of ``task`` is shown them, and their ids among what the run is shown."""
    if not lessons:
        return plan
    return replace(plan, notes=MappingProxyType(dict(notes(lessons, task))),
                   noted=tuple(s.id for s in lessons))

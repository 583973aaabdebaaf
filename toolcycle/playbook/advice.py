"""What a run is shown: the strategies chosen for its task within the token budget.

Apart from :mod:`toolcycle.playbook.playbook` (which owns the store, the worker and the
engine's interface) because choosing is one concept with rules of its own: which lesson
waits for another that says it better, which gives way to one met by its own words, and
how dead ends share one line.

A task whose words meet no lesson is shown the guide instead of nothing (below, "the guide").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from ..words import root
from . import dead_end
from .applicability import (
    asks_what_a_skipped_tool_gives,
    asks_what_it_answered,
    contested,
    given_words,
)
from .neighbours import TaskMemory
from .offer import render_line
from .store import PlaybookStore
from .strategy import Strategy, covers, estimate_tokens, skipped
from .tool_lessons import is_tool_lesson

#: How many more strategies retrieval reads, so that the tool lessons it also finds (left
#: out here: :mod:`.tool_lessons`) do not crowd out the task lessons within ``limit``.
_TOOL_LESSON_ROOM = 8

#: The first line of every playbook's advice.
HEADER = ("Playbook (learned from earlier runs of similar tasks; follow it unless this task "
          "clearly differs):")


def choose(store: PlaybookStore, task: str, domain: str, tool_names: Sequence[str], *,
           limit: int, budget: int, guide: int, routines: AbstractSet[str],
           descriptions: Mapping[str, frozenset[str]] | None = None
           ) -> tuple[list[str], int, list[Strategy]]:
    """What to show a run of ``task``: lines (header first), their tokens, the strategies.
    ``limit``: the most strategies retrieved; ``budget``: the most tokens; ``guide``: the
    most sequences shown a task no lesson's words meet (the guide, below); ``routines``: the
    names of the routines offered (never a dead end's untried alternative); ``descriptions``:
    the agent's tools' description words (:func:`~.applicability.description_words`)."""
    # a lesson about a tool is no task's: it goes with its tool (.tool_lessons), never here
    found = [(s, score) for s, score in store.search(task, domain, list(tool_names),
                                                     limit=limit + _TOOL_LESSON_ROOM)
             if not is_tool_lesson(s)][:limit]
    # a sequence met only through what it is given (a student, a course) is another kind's
    found = [(s, score) for s, score in found
             if s.kind != "sequence" or asks_what_it_answered(task, s)]
    # ... and one telling to skip the tool described to give what this task asks, another's
    found = [(s, score) for s, score in found
             if not asks_what_a_skipped_tool_gives(task, s, descriptions or {})]
    # a lesson learned from tasks this one is not like, though it shares a word with them
    if found:  # (an empty playbook costs no read of the tasks either)
        near = TaskMemory(store.observed_tasks(domain)).shown([s for s, _ in found], task)
        found = [(s, score) for s, score in found if s.id in near]
    if not found:  # (its strategies are no run's shown ones: see .guide)
        if guide <= 0:
            return [], 0, []
        lines, used = render_guide([s.for_task(task) for s in store.leading(
            domain, "sequence", list(tool_names), guide)], budget)
        return lines, used, []
    lines = [HEADER]
    used = estimate_tokens(HEADER)
    shown: list[str] = []
    pitfalls = [p for p, _ in found if p.kind == "pitfall"]
    sequences = [s for s, _ in found if s.kind == "sequence"]
    # sequences met only through words others' kinds share give way to one met by its own
    if (lost := contested(task, sequences)) and len(lost) < len(sequences):
        found = [(s, score) for s, score in found if s.id not in lost]
        sequences = [s for s in sequences if s.id not in lost]
    # Dead ends share one line, after the rest (:mod:`.dead_end`); beside a sequence
    # that calls none of their tools they only repeat its "Do not use" in other words.
    dead_ends = [s for s, _ in found if dead_end.is_dead_end(s)]
    found = [(s, score) for s, score in found if not dead_end.is_dead_end(s)]
    if any(not set(q.tools) & dead_end.dead_tools(dead_ends) for q in sequences):
        dead_ends = []
    # A pitfall that a sequence found for the same task already carries (its repair, or
    # the tool it avoids, is in the sequence) waits: shown beside the sequence it repeats
    # the lesson in other words and costs tokens on every request of the run.
    waiting = [s for s, _ in found if any(covers(q, s) for q in sequences)]
    waiting_ids = {s.id for s in waiting}
    ordered = [s for s, _ in found if s.id not in waiting_ids]
    for strategy in [*ordered, *waiting]:
        if strategy.id in waiting_ids and any(q.id in shown for q in sequences
                                              if covers(q, strategy)):
            continue
        line = render_line(strategy.for_task(task), tool_names)
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            continue
        lines.append(line)
        used += cost
        shown.append(strategy.id)
    if dead_ends:
        # every tool found empty for it is out, a probe's repaired dead ends' too
        left = dead_end.untried(pitfalls, tool_names, skip=routines)
        line = dead_end.render(dead_ends, left)
        if used + estimate_tokens(line) + 1 <= budget:
            lines.append(line)
            used += estimate_tokens(line) + 1
            shown += [s.id for s in dead_ends]
            found += [(s, 0.0) for s in dead_ends]
    if not shown:
        lines = []
        used = 0
    return lines, used, [s for s, _ in found if s.id in shown]


# -- the guide ----------------------------------------------------------------------------------
# The guide: what a task whose words meet no lesson is shown instead of nothing.
#
# Retrieval matches a task's words (:mod:`toolcycle.playbook.index`), and a task of a known kind
# asked in words no earlier task used meets no lesson, though it asks what a lesson answers: one
# learned from "supplier" and "vendor" questions is not met by "From which company do we source
# the chisels?", and a small model that meets nothing answers from nothing. The model reads
# meaning where the index reads words, so such a task is shown the domain's best sequences
# (:meth:`~toolcycle.playbook.store.PlaybookStore.leading`), each with the words its tasks were
# asked in, and told to follow one only where it asks what this task asks.
#
# A guide's strategies are not among the run's ``strategies_shown``: no routine is offered for
# them and no verdict is given them (a task of another kind that rightly ignored them says
# nothing against them). A run that follows one is reflected on like any other, so its wording
# joins the lesson's words and the next task asked so is shown the lesson itself.

GUIDE_HEADER = ("Playbook (no lesson learned from earlier runs names this task's words; these "
                "were learned from tasks asked in the words shown: follow one only if this task "
                "asks for the same thing in other words):")

#: The most of a lesson's words a guide line names.
WORDS_SHOWN = 5


def guide_line(strategy: Strategy) -> str:
    """``strategy``'s line in the guide: the words its tasks said, then its advice without
    the tools it skips (which tools to skip is its kind's lesson, and this task may be of
    none of them). Not the words naming what it is given (:func:`~.applicability.
    given_words`: "student" in "Asked about average, grade, student"), which tasks of
    other kinds about the same things say too (all of them where it has no other)."""
    advice = strategy.advice.removesuffix(skipped(strategy))  # the clause it ends with
    given = given_words(strategy)
    words = [w for w in strategy.applies_when if root(w) not in given] or strategy.applies_when
    return f"- Asked about {', '.join(words[:WORDS_SHOWN])}: {advice}"


def render_guide(sequences: Sequence[Strategy], token_budget: int) -> tuple[list[str], int]:
    """The guide's lines (header first) for ``sequences``, best first, within
    ``token_budget``, and the tokens they take; nothing when no line fits or no sequence has
    words to name (a lesson "for other tasks" tells the model nothing)."""
    lines = [GUIDE_HEADER]
    used = estimate_tokens(GUIDE_HEADER)
    for strategy in sequences:
        if not strategy.applies_when:
            continue
        line = guide_line(strategy)
        cost = estimate_tokens(line) + 1
        if used + cost > token_budget:
            continue
        lines.append(line)
        used += cost
    return (lines, used) if len(lines) > 1 else ([], 0)

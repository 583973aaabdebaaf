"""A pitfall's repair: the one it is promoted with, and one it takes later.

A pitfall's id includes its repair (what fixes the failure), so the same failure seen with and
without one must be told apart from a new lesson; and a pitfall learned without a repair takes
one from a later run that shows it: a retry that worked, or a run that followed the pitfall
and got past it (:class:`~toolcycle.playbook.curator.Curator`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..words import root, roots
from .applicability import applicability
from .dead_end import FOUND_NOTHING
from .outcome import RunOutcome
from .pitfall import pitfall_advice
from .stats import is_timeout
from .strategy import Insight, Repair, Strategy, pitfall_detail


def best_repaired(evidence: Sequence[Insight]) -> Insight:
    """The pitfall insight to promote: one with the repair the evidence shows most often
    (the latest such), or the latest one when no run showed a repair."""
    counts: dict[str, int] = {}  # by detail: one error class, so one per repair
    for i in evidence:
        if i.repair is not None:
            counts[i.detail] = counts.get(i.detail, 0) + 1
    if not counts:
        return evidence[-1]
    best = max(counts, key=lambda r: counts[r])
    return [i for i in evidence if i.repair is not None and i.detail == best][-1]


def same_failure(pitfalls: Sequence[Strategy], insight: Insight,
                  touched: dict[str, Strategy]) -> Strategy | None:
    """The active pitfall of the same tool and error class as ``insight``, where one of the
    two has no repair: the same failure mode, one run having shown what fixes it.
    ``pitfalls`` are the domain's active pitfalls as stored (read once per run), ``touched``
    the versions this run has changed.

    A pitfall's id includes its repair, so without this a failure seen again with a repair
    (or without one) would start a new candidate beside the strategy it repeats.
    """
    for strategy in pitfalls:
        strategy = touched.get(strategy.id, strategy)
        if (strategy.tools[:1] == insight.tools[:1]
                and strategy.error_class == insight.error_class
                and (strategy.repair is None or insight.repair is None)):
            return strategy
    return None


def take_repair(strategy: Strategy, insight: Insight) -> bool:
    """Give a pitfall learned without a repair the repair ``insight``'s run showed, and with
    it the words of that run's task unless the two share the kind's words (the repair applies
    where it was seen; see :meth:`Curator._count_candidate`)."""
    if strategy.repair is not None or insight.repair is None:
        return False
    strategy.advice, strategy.tools = insight.advice, list(insight.tools)
    strategy.detail, strategy.repair = insight.detail, insight.repair
    said = roots(insight.keywords)
    shared = [w for w in strategy.applies_when if root(w) in said]
    strategy.applies_when = (shared if len(shared) >= 2 else applicability([insight]))
    return True


def repair_from_use(strategy: Strategy, outcome: RunOutcome) -> str:
    """An argument repair for a pitfall without one, from a run that followed it and succeeded.

    The run called the pitfall's tool without the error and got the task right; the value it
    shaped itself (a date it reformatted, a code it built) for the argument the error names
    (or its only shaped argument) is the format the tool accepts. A small model copies an
    example better than it follows a description: "expected DD.MM.YYYY" alone may leave it
    writing 30/09/2026, where an example value shows it the format. Returns what was
    learned, or "".
    """
    error_class = strategy.error_class
    if (strategy.kind != "pitfall" or len(strategy.tools) != 1 or not error_class
            or strategy.repair is not None or is_timeout(error_class)
            or error_class == FOUND_NOTHING):
        return ""
    tool = strategy.tools[0]
    shaped = outcome.shaped.get(tool, {})
    named = [k for k in shaped if re.search(rf"\b{re.escape(k)}\b", error_class, re.I)]
    keys = named or list(shaped)
    if len(keys) != 1:
        return ""
    repair = Repair("argument", tool, argument=keys[0], example=shaped[keys[0]])
    strategy.advice = pitfall_advice(tool, error_class, repair, timeout=False)
    strategy.detail, strategy.repair = pitfall_detail(error_class, repair), repair
    return f'{keys[0]} like "{shaped[keys[0]]}"'

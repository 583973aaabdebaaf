"""The guide: what a task whose words meet no lesson is shown instead of nothing.

Retrieval matches a task's words (:mod:`toolcycle.playbook.index`), and a task of a known kind
asked in words no train task used meets no lesson: on the held-out `depot` suite (JSON,
a86805f) "From which company do we source the Lindqvist chisel set?" met none of the supplier
lessons, learned from "supplier", "vendor", "lead time", and the 1.5B answered from nothing in
3 of 3 runs; on `clinic`, "Who insures Sana Qureshi?" met no lesson of the billing sequence
learned from "pay" and "copay". The model reads meaning where the index reads words, so such a
task is shown the domain's best sequences (:meth:`~toolcycle.playbook.store.PlaybookStore.
leading`), each with the words its tasks were asked in, and told to follow one only where it
asks what this task asks.

A guide's strategies are not among the run's ``strategies_shown``: no routine is offered for
them and no verdict is given them (a task of another kind that rightly ignored them says
nothing against them). A run that follows one is reflected on like any other, so its wording
joins the lesson's words and the next task asked so is shown the lesson itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from .strategy import SKIP, Strategy, estimate_tokens

GUIDE_HEADER = ("Playbook (no lesson learned from earlier runs names this task's words; these "
                "were learned from tasks asked in the words shown: follow one only if this task "
                "asks for the same thing in other words):")

#: The most of a lesson's words a guide line names.
WORDS_SHOWN = 5


def guide_line(strategy: Strategy) -> str:
    """``strategy``'s line in the guide: the words its tasks said, then its advice without
    the tools it skips (which tools to skip is its kind's lesson, and this task may be of
    none of them)."""
    advice = strategy.advice.split(SKIP, 1)[0]
    return f"- Asked about {', '.join(strategy.applies_when[:WORDS_SHOWN])}: {advice}"


def render(sequences: Sequence[Strategy], token_budget: int) -> tuple[list[str], int]:
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

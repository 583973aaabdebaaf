"""Which earlier tasks a new task is like, and so which lessons it may be shown.

Retrieval (:mod:`.index`) finds a lesson by the words a task shares with it, each weighted by
how rare it is among the *lessons*. A playbook that has learned a few lessons cannot tell a
telling word from one every task of the agent says: in a hotel agent's playbook holding one
lesson, learned from "What is the nightly rate of room ST3223?", every task saying "room"
(how many rooms a property has, who stayed in room 12) found it, was shown "Call
guest_archive(room), then answer", and a small model followed it to the wrong tool.

What tells tasks apart is known only from the tasks themselves. So the playbook remembers the
words of every task it learned from (:meth:`~.store.PlaybookStore.mark_observed`), lessons or
not, and before a task is shown a lesson, compares the task with them, weighting each word by
how rare it is among those *tasks* (a word every task says weighs nearly nothing). The task's
nearest earlier tasks are those within :data:`NEAR` of the closest; a lesson is shown only
when one of the runs it came from or was confirmed by (its provenance) is among them. A task
nearest to tasks that taught nothing is shown nothing rather than another kind's lesson that
shares a common word with it; a task of a lesson's own kind, however worded, is near the
tasks that taught it. A lesson none of whose runs left their words (one written before this
module, or imported) is judged by retrieval alone, as before.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..words import roots, task_words
from .strategy import Strategy, run_of

#: An earlier task is one of a task's nearest when its similarity is at least this share of
#: the closest one's. Below 1 so that a task close to several tasks of a lesson's kind, worded
#: apart, is near all of them, not only the one that happens to share one more word.
NEAR = 0.7

#: Fewer earlier tasks than this tell no word from another: every lesson passes.
FEWEST_TASKS = 2


def words_of(task: str) -> frozenset[str]:
    """The roots of what ``task`` is about (:func:`~toolcycle.words.task_words`: names left out)."""
    return frozenset(roots(task_words(task)))


@dataclass(frozen=True)
class TaskMemory:
    """The words of the tasks a domain's playbook learned from, by run id."""

    tasks: Mapping[str, frozenset[str]]

    def weights(self, vocabulary: frozenset[str] | None = None) -> dict[str, float]:
        """Each word's inverse document frequency over the remembered tasks (BM25's form:
        a word every task says weighs close to nothing, never below zero); only the words of
        ``vocabulary`` when given."""
        n = len(self.tasks)
        counts: dict[str, int] = {}
        for words in self.tasks.values():
            for word in (words if vocabulary is None else words & vocabulary):
                counts[word] = counts.get(word, 0) + 1
        return {w: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for w, df in counts.items()}

    def nearest(self, task: str, vocabulary: frozenset[str] | None = None) -> frozenset[str]:
        """The run ids of the remembered tasks nearest to ``task`` (cosine similarity of
        the weighted words, only those in ``vocabulary`` when given); none when it shares no
        weighed word with any."""
        asked = words_of(task) if vocabulary is None else words_of(task) & vocabulary
        weight = self.weights(vocabulary)
        asked_norm = math.sqrt(sum(weight.get(w, 0.0) ** 2 for w in asked))
        if not asked_norm:
            return frozenset()
        similarity: dict[str, float] = {}
        for run_id, words in self.tasks.items():
            shared = asked & words
            if shared:
                said = words if vocabulary is None else words & vocabulary
                norm = math.sqrt(sum(weight[w] ** 2 for w in said))
                similarity[run_id] = sum(weight[w] ** 2 for w in shared) / (asked_norm * norm)
        if not similarity:
            return frozenset()
        best = max(similarity.values())
        return frozenset(r for r, s in similarity.items() if s >= NEAR * best)

    def shown(self, strategies: Collection[Strategy], task: str) -> set[str]:
        """The ids of the ``strategies`` a run of ``task`` may be shown (module docstring).

        Tasks are compared in the words the ``strategies``' tasks said of what they asked:
        those they apply to (``applies_when``) and those only one of their tasks said
        (``word_support``), not in all their words: how a task is worded ("how large is",
        "and nothing else") says nothing about its kind, and a rare such word would make the
        one earlier task worded alike its only neighbour. A word one lesson task said alone
        counts: without "turnaround" a lesson task asking a lab order's turnaround looked
        exactly like another kind's asking what a lab order costs, which was then shown it."""
        vocabulary = frozenset(roots(w for s in strategies
                                     for w in (*s.applies_when, *s.word_support)))
        if len(self.tasks) < FEWEST_TASKS or not vocabulary:
            return {s.id for s in strategies}
        near = self.nearest(task, vocabulary)
        shown = set()
        for strategy in strategies:
            # a probe's finding is the probed run's: its task is the one remembered
            runs = {run_of(evidence) for evidence in strategy.provenance}
            if not self.tasks.keys() & runs or near & runs:
                shown.add(strategy.id)
        return shown

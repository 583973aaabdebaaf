"""The in-memory index retrieval reads: the active strategies by the words they apply to.

The SQLite store (:mod:`toolcycle.playbook.store`) patches it with the rows written since it
was last read, so a lookup costs a scan of the posting lists of the task's words, not a query.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from ..words import keywords, root, roots
from .strategy import Strategy, index_terms


class StrategyIndex:
    """An inverted index over the active strategies, patched incrementally as rows change.

    A strategy's terms are its applicability keywords (weight 1) and the words of its tool
    names, plus for free advice its content words (weight 0.5): never the words of the
    reflector's templates ("call", "error"), which every strategy shares. Postings are kept
    per domain (the usual filter) and in total (for the inverse document frequency). A task
    scores the sum of ``idf × weight`` of its words found in a strategy, times the strategy's
    evidence score; a strategy needing a tool the agent lacks is never returned. Words are
    indexed and looked up by their :func:`~toolcycle.words.root`, so "supplies"
    finds a strategy learned from "supplier" (and strategies stored before roots still match).
    """

    __slots__ = ("_leading", "df", "postings", "strategies", "terms", "version")

    def __init__(self) -> None:
        self.version = 0
        self.strategies: dict[str, Strategy] = {}
        self.terms: dict[str, dict[str, float]] = {}
        self.postings: dict[tuple[str | None, str], dict[str, float]] = {}
        self.df: dict[str, int] = {}
        #: :meth:`leading`'s answers since the last change: asked for every run a task's
        #: words meet no strategy of, it would otherwise rank a domain's strategies each time.
        self._leading: dict[tuple[str | None, str, tuple[str, ...] | None, int],
                            list[Strategy]] = {}

    def update(self, changed: list[Strategy], version: int) -> None:
        if changed:
            self._leading.clear()
        for strategy in changed:
            self._remove(strategy.id)
            if strategy.status == "active":
                self._add(strategy)
        self.version = version

    def _add(self, s: Strategy) -> None:
        terms: dict[str, float] = dict.fromkeys(roots(index_terms(s)), 0.5)
        terms.update(dict.fromkeys(roots(s.applies_when), 1.0))
        self.strategies[s.id] = s
        self.terms[s.id] = terms
        for word, weight in terms.items():
            self.postings.setdefault((s.domain, word), {})[s.id] = weight
            self.postings.setdefault((None, word), {})[s.id] = weight
            self.df[word] = self.df.get(word, 0) + 1

    def _remove(self, strategy_id: str) -> None:
        old = self.strategies.pop(strategy_id, None)
        if old is None:
            return
        for word in self.terms.pop(strategy_id):
            for key in ((old.domain, word), (None, word)):
                self.postings[key].pop(strategy_id, None)
            self.df[word] -= 1

    def search(
        self, task: str, domain: str | None, tool_names: Sequence[str] | None, limit: int
    ) -> list[tuple[Strategy, float]]:
        n = max(1, len(self.strategies))
        scores: dict[str, float] = {}
        for word in dict.fromkeys(root(w) for w in keywords(task)):
            hits = self.postings.get((domain, word))
            if not hits:
                continue
            df = self.df[word]
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for sid, weight in hits.items():
                scores[sid] = scores.get(sid, 0.0) + weight * idf
        available = set(tool_names) if tool_names is not None else None
        ranked: list[tuple[float, str]] = []
        for sid, relevance in scores.items():
            s = self.strategies[sid]
            if available is not None and not available.issuperset(s.tools):
                continue
            ranked.append((relevance * s.score(), sid))
        best = heapq.nlargest(limit, ranked)
        return [(self.strategies[sid], score) for score, sid in best]

    def leading(self, domain: str | None, kind: str, tool_names: Sequence[str] | None,
                limit: int) -> list[Strategy]:
        """The ``limit`` active strategies of ``kind`` in ``domain`` with the best evidence
        (:meth:`Strategy.score`), among those whose tools are all in ``tool_names``."""
        key = (domain, kind, None if tool_names is None else tuple(sorted(set(tool_names))),
               limit)
        cached = self._leading.get(key)
        if cached is None:
            available = None if key[2] is None else set(key[2])
            ranked = [(s.score(), s.id) for s in self.strategies.values()
                      if s.kind == kind and (domain is None or s.domain == domain)
                      and (available is None or available.issuperset(s.tools))]
            cached = [self.strategies[sid] for _, sid in heapq.nlargest(limit, ranked)]
            self._leading[key] = cached
        return list(cached)

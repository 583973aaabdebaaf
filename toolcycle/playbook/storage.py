"""What a playbook store must do, and the tables every backend shares.

:class:`PlaybookStore` is the interface the rest of the package uses (strategies, pending
patterns, tool observations, the runs and tasks learned from, learning progress, retrieval);
:mod:`.store` implements it on SQLite and :mod:`.postgres` on PostgreSQL, both creating the
tables of :func:`shared_schema`. Apart from the SQLite implementation so that a reader of the
interface does not read a connection pool, and a new backend has one page to implement.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from .strategy import Strategy

#: How many tasks' words a domain keeps for :mod:`.neighbours` (the newest).
TASKS_KEPT = 2000


@dataclass(slots=True, frozen=True)
class ToolObservation:
    """One tool call as the statistics see it."""

    tool: str
    duration_ms: float  # stats.UNTIMED (-1) for a call a routine made: the trace times its own
    error: bool
    timeout: bool
    domain: str = ""
    at: float = 0.0
    #: the call returned nothing (``[]``, ``{}``, "No results."): a miss, though not an error
    empty: bool = False
    #: the other tool that answered after this call missed, if the run shows one
    alternative: str = ""


class PlaybookStore(abc.ABC):
    """The storage interface of a playbook (SQLite today, a server database later)."""

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """A context manager making the enclosed reads and writes atomic across processes."""

    @abc.abstractmethod
    def get(self, strategy_id: str) -> Strategy | None: ...

    @abc.abstractmethod
    def strategies(
        self, domain: str | None = None, status: str | None = "active"
    ) -> list[Strategy]:
        """Strategies, newest first; ``status=None`` returns every status."""

    @abc.abstractmethod
    def put(self, strategies: Iterable[Strategy]) -> None: ...

    @abc.abstractmethod
    def delete(self, strategy_ids: Iterable[str]) -> None: ...

    @abc.abstractmethod
    def get_candidate(self, key: str) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    def put_candidate(self, key: str, domain: str, data: dict[str, Any]) -> None: ...

    @abc.abstractmethod
    def delete_candidate(self, key: str) -> None: ...

    @abc.abstractmethod
    def candidates(self, domain: str | None = None) -> list[dict[str, Any]]: ...

    def prune_candidates(self, domain: str, keep: int) -> int:
        """Drop all but the ``keep`` most recently updated candidates of ``domain``; returns
        how many went. Why: a pattern seen once and never again stays a candidate, and the
        curator reads a domain's candidates after every failed run (a run that stopped short
        of a sequence), so an unbounded table would make learning slower with every task."""
        found = self.candidates(domain)
        if len(found) <= keep:
            return 0
        found.sort(key=_recency, reverse=True)
        for data in found[keep:]:
            self.delete_candidate(str(data["key"]))
        return len(found) - keep

    @abc.abstractmethod
    def add_tool_observations(self, rows: Sequence[ToolObservation]) -> None: ...

    @abc.abstractmethod
    def tool_observations(self, domain: str | None = None) -> list[ToolObservation]: ...

    @abc.abstractmethod
    def tool_observation_mark(self) -> int:
        """A number that changes whenever tool observations are added (for caching)."""

    @abc.abstractmethod
    def mark_observed(self, run_id: str, domain: str = "", words: Sequence[str] = ()) -> bool:
        """Remember a run as learned from, with its task's ``words`` (its :func:`~toolcycle.words.
        task_words`, for :mod:`.neighbours`); False when it already was (never learn twice)."""

    @abc.abstractmethod
    def observed_tasks(self, domain: str) -> dict[str, frozenset[str]]:
        """The words of the newest tasks learned from in ``domain`` (at most
        :data:`TASKS_KEPT`), by run id."""

    @abc.abstractmethod
    def progress(self, session: str) -> dict[str, dict[str, Any]]:
        """Task id -> saved outcome, for resuming an offline learning session."""

    @abc.abstractmethod
    def save_progress(self, session: str, task_id: str, data: dict[str, Any]) -> None: ...

    @abc.abstractmethod
    def search(
        self, task: str, domain: str | None, tool_names: Sequence[str] | None, limit: int = 8
    ) -> list[tuple[Strategy, float]]:
        """Active strategies relevant to ``task``, best first, with their relevance."""

    def leading(self, domain: str | None, kind: str, tool_names: Sequence[str] | None,
                limit: int = 4) -> list[Strategy]:
        """The ``limit`` active strategies of ``kind`` with the best evidence
        (:meth:`Strategy.score`), whatever a task says, among those whose tools are all in
        ``tool_names``. This default reads every strategy; the SQLite store keeps them."""
        available = None if tool_names is None else set(tool_names)
        fits = [s for s in self.strategies(domain) if s.kind == kind
                and (available is None or available.issuperset(s.tools))]
        return sorted(fits, key=lambda s: -s.score())[:limit]

    def pitfall_tools(self, domain: str, error_class: str) -> set[str]:
        """The tools whose pitfalls of ``domain`` were learned from ``error_class`` (a
        pitfall's typed ``error_class``), learned (strategies) or on their way (candidates).
        Read by the learner before a run's lessons are proposed: the tools the domain's dead
        ends name, whose repair a successful run may show."""
        tools = {s.tools[0] for s in self.strategies(domain) if s.kind == "pitfall"
                 and s.tools and s.error_class == error_class}
        for candidate in self.candidates(domain):
            first = (candidate.get("insights") or [{}])[0]
            named = first.get("tools") if isinstance(first, dict) else None
            if (isinstance(named, list) and named and isinstance(named[0], str)
                    and first.get("kind") == "pitfall"
                    and first.get("error_class") == error_class):
                tools.add(named[0])
        return tools

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections."""


def shared_schema(real: str, big: str) -> str:
    """The tables both backends create alike, in a dialect's names for a float (``real``) and
    a 64-bit integer (``big``); each adds its own tool-call and meta tables
    (:data:`_SCHEMA`, :data:`toolcycle.playbook.postgres.SCHEMA`)."""
    return f"""
CREATE TABLE IF NOT EXISTS strategies (
    id TEXT PRIMARY KEY, domain TEXT NOT NULL, status TEXT NOT NULL,
    updated_at {real} NOT NULL, version {big} NOT NULL DEFAULT 0, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS strategies_domain ON strategies(domain, status);
CREATE INDEX IF NOT EXISTS strategies_version ON strategies(version);
CREATE TABLE IF NOT EXISTS candidates (
    key TEXT PRIMARY KEY, domain TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS candidates_domain ON candidates(domain);
CREATE TABLE IF NOT EXISTS observed_runs (run_id TEXT PRIMARY KEY, at {real} NOT NULL);
CREATE TABLE IF NOT EXISTS task_words (
    run_id TEXT PRIMARY KEY, domain TEXT NOT NULL, at {real} NOT NULL, words TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS task_words_domain ON task_words(domain, at);
CREATE TABLE IF NOT EXISTS learn_progress (
    session TEXT NOT NULL, task_id TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session, task_id));
"""


def _recency(candidate: dict[str, Any]) -> float:
    """When a candidate last gained evidence (older rows: when it was made)."""
    when = candidate.get("updated_at") or candidate.get("created_at") or 0.0
    return float(when) if isinstance(when, int | float) else 0.0

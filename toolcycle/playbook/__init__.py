"""The playbook: tool-calling strategies learned from traces and injected into later runs.

Reflector (``reflector.py``) turns a trace into insights; the curator (``curator.py``) merges
them into scored strategies (``strategy.py``) kept in a store (``store.py``); the
:class:`Playbook` (``playbook.py``) retrieves the relevant ones for a task and learns from every
run in the background. ``learning.py`` runs an offline learning session over a task set.
"""

from __future__ import annotations

from ..words import keywords
from .curator import Curator, Delta
from .learning import LearningReport, LearningTask, contains_expected, learn
from .lesson import LessonType, RunEvidence
from .location import open_store
from .outcome import RunOutcome, judge
from .playbook import Playbook
from .postgres import PostgresPlaybookStore
from .reflector import LLMReflector, TraceAnalysis, analyse, reflect
from .stats import ToolStats, compute_stats, render_stats
from .store import PlaybookStore, SQLitePlaybookStore, ToolObservation
from .strategy import Argument, Insight, Repair, Strategy, UseVerdict, estimate_tokens

__all__ = [
    "Argument",
    "Curator",
    "Delta",
    "Insight",
    "LLMReflector",
    "LearningReport",
    "LearningTask",
    "LessonType",
    "Playbook",
    "PlaybookStore",
    "PostgresPlaybookStore",
    "Repair",
    "RunEvidence",
    "RunOutcome",
    "SQLitePlaybookStore",
    "Strategy",
    "ToolObservation",
    "ToolStats",
    "TraceAnalysis",
    "UseVerdict",
    "analyse",
    "compute_stats",
    "contains_expected",
    "estimate_tokens",
    "judge",
    "keywords",
    "learn",
    "open_store",
    "reflect",
    "render_stats",
]

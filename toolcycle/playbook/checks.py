"""Validation of a playbook's and a curator's settings, at construction.

A playbook is long-lived and learns in the background: a bad setting found only when the first
run ends (a negative token budget, a promote threshold of 0 that promotes every pattern seen
once) would already have shaped what it stored. So every setting is checked when the object is
made, and one :class:`~toolcycle.errors.ConfigurationError` lists every problem at once.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigurationError
from .store import PlaybookStore

#: The thresholds :func:`curator_problems` checks (the fields of :class:`.curator.Curator`).
THRESHOLDS = ("promote_after", "promote_on_flow", "promote_on_answers", "max_per_domain",
              "max_candidates_per_domain", "retire_min_uses", "retire_below_success",
              "stale_after_s", "merge_similarity")


class CuratorSettings(Protocol):
    """What this module reads of a curator (a Protocol, so that it need not import one)."""

    promote_after: int
    promote_on_flow: bool
    promote_on_answers: bool
    max_per_domain: int
    max_candidates_per_domain: int
    retire_min_uses: int
    retire_below_success: float
    stale_after_s: float
    merge_similarity: float


def _count(name: str, value: Any, least: int, found: list[str]) -> None:
    """``value`` must be an int (not a bool) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        found.append(f"{name} must be an integer, got {value!r}")
    elif value < least:
        found.append(f"{name} must be >= {least}, got {value}")


def _fraction(name: str, value: Any, found: list[str], *, open_low: bool) -> None:
    """``value`` must be a number in [0, 1] (in (0, 1] when ``open_low``)."""
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value)):
        found.append(f"{name} must be a number between 0 and 1, got {value!r}")
    elif value > 1 or value < 0 or (open_low and value == 0):
        low = "0 <" if open_low else "0 <="
        found.append(f"{name} must be {low} {name} <= 1, got {value}")


def curator_problems(curator: CuratorSettings) -> list[str]:
    """Every invalid threshold of a curator."""
    found: list[str] = []
    _count("promote_after", curator.promote_after, 1, found)
    _count("max_per_domain", curator.max_per_domain, 1, found)
    _count("max_candidates_per_domain", curator.max_candidates_per_domain, 1, found)
    _count("retire_min_uses", curator.retire_min_uses, 1, found)
    _fraction("retire_below_success", curator.retire_below_success, found, open_low=False)
    _fraction("merge_similarity", curator.merge_similarity, found, open_low=True)
    stale = curator.stale_after_s
    if (isinstance(stale, bool) or not isinstance(stale, int | float)
            or math.isnan(stale) or stale <= 0):
        found.append(f"stale_after_s must be a number of seconds > 0, got {stale!r}")
    for name, flag in (("promote_on_flow", curator.promote_on_flow),
                       ("promote_on_answers", curator.promote_on_answers)):
        if not isinstance(flag, bool):
            found.append(f"{name} must be a bool, got {flag!r}")
    return found


def check_curator(curator: CuratorSettings) -> None:
    """Raise :class:`ConfigurationError` listing every invalid threshold of ``curator``."""
    problems = curator_problems(curator)
    if problems:
        raise ConfigurationError(problems, subject="curator")


def playbook_problems(settings: dict[str, Any]) -> list[str]:
    """Every invalid argument of :class:`~toolcycle.playbook.Playbook` (by its keyword)."""
    from .reflector import LLMReflector

    found: list[str] = []
    store = settings["store"]
    if not isinstance(store, str | Path | PlaybookStore):
        found.append(f"store must be a path, a URL or a PlaybookStore, got {store!r}")
    elif isinstance(store, str) and not store.strip():
        found.append("store must not be an empty path")
    domain = settings["domain"]
    if domain is not None and (not isinstance(domain, str) or not domain.strip()):
        found.append(f"domain must be a non-empty string or None, got {domain!r}")
    _count("token_budget", settings["token_budget"], 0, found)
    _count("max_strategies", settings["max_strategies"], 0, found)
    _count("guide", settings["guide"], 0, found)
    for flag in ("include_tool_stats", "learn", "rule_lessons", "head_start"):
        if not isinstance(settings[flag], bool):
            found.append(f"{flag} must be a bool, got {settings[flag]!r}")
    if not isinstance(settings["routines"], bool) and settings["routines"] != "read_only":
        found.append(f"routines must be a bool or \"read_only\", got {settings['routines']!r}")
    evaluator = settings["evaluator"]
    if evaluator is not None and not callable(evaluator):
        found.append(f"evaluator must be callable (trace, output) -> bool | float, "
                     f"got {evaluator!r}")
    curator = settings["curator"]
    if curator is not None:
        if not callable(getattr(curator, "apply", None)):
            found.append(f"curator must be a Curator (or have its apply method), got {curator!r}")
        elif all(hasattr(curator, name) for name in THRESHOLDS):
            found += [f"curator.{p}" for p in curator_problems(curator)]
    reflector = settings["llm_reflector"]
    if reflector is not None and not isinstance(reflector, LLMReflector):
        found.append(f"llm_reflector must be an LLMReflector, got {reflector!r}")
    return found


def check_playbook(settings: dict[str, Any]) -> None:
    """Raise :class:`ConfigurationError` listing every invalid argument of a playbook."""
    problems = playbook_problems(settings)
    if problems:
        raise ConfigurationError(problems, subject="playbook")

"""A playbook's and a curator's settings are checked at construction: one ConfigurationError
lists every bad one, and nothing (no database file) is made before the check passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolcycle import ConfigurationError
from toolcycle.playbook import Curator, Playbook
from toolcycle.playbook.checks import curator_problems


def test_defaults_and_every_documented_kind_of_store_pass(tmp_path: Path) -> None:
    Playbook(":memory:")
    Playbook(tmp_path / "pb.db", domain="depot", token_budget=0, max_strategies=0, guide=4)
    Playbook(str(tmp_path / "other.db"), curator=Curator(promote_after=1), learn=False)
    assert curator_problems(Curator()) == []


def test_every_bad_playbook_argument_is_listed_at_once(tmp_path: Path) -> None:
    location = tmp_path / "never.db"
    bad: dict[str, Any] = {
        "domain": "", "token_budget": -1, "max_strategies": 2.5, "guide": True,
        "include_tool_stats": "yes", "learn": None, "rule_lessons": 1, "routines": "on",
        "evaluator": "exact", "curator": object(), "llm_reflector": "local:qwen",
    }
    with pytest.raises(ConfigurationError) as raised:
        Playbook(location, **bad)
    problems = raised.value.problems
    assert len(problems) == len(bad), problems
    for name in bad:
        assert any(p.startswith(name) for p in problems), (name, problems)
    assert "guide must be an integer, got True" in problems  # a bool is not a count
    assert not location.exists()  # the check ran before the store was opened


@pytest.mark.parametrize("store", [None, 3, "", "   ", b"pb.db"])
def test_a_store_that_is_no_location_is_refused(store: Any) -> None:
    with pytest.raises(ConfigurationError, match="store must"):
        Playbook(store)


@pytest.mark.parametrize(("field", "value", "says"), [
    ("promote_after", 0, "promote_after must be >= 1, got 0"),
    ("promote_after", 2.0, "promote_after must be an integer"),
    ("max_per_domain", -5, "max_per_domain must be >= 1"),
    ("max_candidates_per_domain", False, "max_candidates_per_domain must be an integer"),
    ("retire_min_uses", 0, "retire_min_uses must be >= 1"),
    ("retire_below_success", 1.5, "retire_below_success must be 0 <="),
    ("retire_below_success", float("nan"), "retire_below_success must be a number"),
    ("merge_similarity", 0, "merge_similarity must be 0 <"),
    ("merge_similarity", "0.8", "merge_similarity must be a number"),
    ("stale_after_s", 0, "stale_after_s must be a number of seconds > 0"),
    ("stale_after_s", float("nan"), "stale_after_s must be a number of seconds > 0"),
    ("promote_on_flow", "no", "promote_on_flow must be a bool"),
    ("promote_on_answers", 1, "promote_on_answers must be a bool"),
])
def test_a_bad_curator_threshold_raises_when_the_curator_is_made(
        field: str, value: Any, says: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Curator(**{field: value})
    assert raised.value.subject == "curator"
    assert any(says in p for p in raised.value.problems), raised.value.problems


def test_edge_thresholds_are_valid() -> None:
    Curator(retire_below_success=0.0, merge_similarity=1.0, stale_after_s=float("inf"))
    Curator(retire_below_success=1, promote_after=1, max_per_domain=1, retire_min_uses=1)


def test_a_curator_changed_after_construction_is_checked_by_the_playbook() -> None:
    curator = Curator()
    curator.promote_after = 0
    curator.merge_similarity = 2.0
    with pytest.raises(ConfigurationError) as raised:
        Playbook(":memory:", curator=curator)
    assert raised.value.problems == [
        "curator.promote_after must be >= 1, got 0",
        "curator.merge_similarity must be 0 < merge_similarity <= 1, got 2.0",
    ]


def test_the_error_is_a_value_error_naming_the_subject() -> None:
    with pytest.raises(ValueError, match=r"invalid playbook \(2 problem\(s\)\)"):
        Playbook(":memory:", token_budget=-1, max_strategies=-1)



def test_a_curator_of_ones_own_is_checked_like_the_default() -> None:
    class Cautious(Curator):
        """Promotes later; its thresholds are still the curator's fields."""

    assert isinstance(Playbook(":memory:", curator=Cautious(promote_after=5)).curator, Cautious)
    with pytest.raises(ConfigurationError, match="promote_after must be >= 1"):
        Cautious(promote_after=-1)

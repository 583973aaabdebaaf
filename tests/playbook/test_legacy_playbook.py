"""Issue 69: a playbook written before lessons kept their typed parts (a pitfall's error class
and repair, a sequence's first call and skipped tools) still acts as it did.

``data/legacy_playbook.json`` holds the rows the code before typed repairs stored (learned
from traces by that code: ``data/make_legacy_playbook.py``) and what that code did with each
lesson: which fallback it made, which call it reshaped, the line and guide line it showed.
Written into a store's tables as that code wrote them, then opened by this code, each lesson
must act the same, and the upgrade happens once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.advice import guide_line
from toolcycle.playbook.dead_end import says_found_nothing
from toolcycle.playbook.fallback import alternative_of
from toolcycle.playbook.location import open_store
from toolcycle.playbook.offer import render_line
from toolcycle.playbook.reshape import argument_lesson
from toolcycle.playbook.routine import routine_name
from toolcycle.playbook.store import PlaybookStore
from toolcycle.playbook.strategy import shows_how_to_call, skipped

FIXTURE = json.loads((Path(__file__).parent / "data" / "legacy_playbook.json").read_text())


def _write_old_rows(store: PlaybookStore) -> None:
    """The fixture's rows, written as the old code's ``put`` and ``put_candidate`` did."""
    with store.transaction() as conn:
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
        (version,) = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        for data in FIXTURE["strategies"]:
            conn.execute("INSERT INTO strategies(id, domain, status, updated_at, version, data)"
                         " VALUES (?, ?, ?, ?, ?, ?)",
                         (data["id"], data["domain"], data["status"], data["updated_at"],
                          version, json.dumps(data)))
        for data in FIXTURE["candidates"]:
            conn.execute("INSERT INTO candidates(key, domain, data) VALUES (?, ?, ?)",
                         (data["key"], data["domain"], json.dumps(data)))


def _acted(s: Strategy) -> dict[str, Any]:
    """What this code does with ``s``, as the fixture recorded the old code's."""
    lesson = argument_lesson(s)
    routine = routine_name(s.tools) if len(s.tools) > 1 else ""
    return {
        "alternative": list(alternative_of(s) or []),
        "argument": None if lesson is None else [lesson.tool, lesson.error_class,
                                                  lesson.argument, lesson.example],
        "line": render_line(s, [routine] if routine else []),
        "guide": guide_line(s) if s.kind == "sequence" else "",
        "shows_how_to_call": shows_how_to_call(s),
        "says_found_nothing": says_found_nothing(s),
        "skipped": skipped(s),
    }


def _old_store(location: str) -> None:
    fresh = open_store(location)
    _write_old_rows(fresh)
    fresh.close()


def test_an_old_playbooks_lessons_act_as_they_did(db_location: str) -> None:
    _old_store(db_location)
    store = open_store(db_location)  # upgrades the old rows, once
    try:
        learned = {s.id: s for s in store.strategies(status=None)}
        assert set(learned) == set(FIXTURE["acted"])
        for sid, acted in FIXTURE["acted"].items():
            assert _acted(learned[sid]) == acted, sid
        for old in FIXTURE["strategies"]:  # the typed error class is the old detail's head
            if old["kind"] == "pitfall":
                assert learned[old["id"]].error_class == old["detail"].partition("|")[0]
                assert learned[old["id"]].repair is not None
        # retrieval sees the upgraded rows (the index is refreshed by the upgrade's write)
        assert {s.id for s, _ in store.search("Single fare to Kelby", "rail", None)} & set(
            learned)
        assert store.upgrade_legacy() == 0  # nothing left to upgrade
    finally:
        store.close()


def test_an_old_pending_pattern_is_promoted_with_its_typed_parts(db_location: str) -> None:
    _old_store(db_location)
    pb = Playbook(db_location, learn=False)
    try:
        [pending] = pb.store.candidates("rail")
        [old] = pending["insights"]
        assert old["error_class"] == FIXTURE["candidates"][0]["insights"][0]["detail"]
        assert pb.store.pitfall_tools("rail", old["error_class"]) == {"seat_map"}
    finally:
        pb.close()


def test_a_second_open_finds_nothing_to_upgrade(db_location: str) -> None:
    _old_store(db_location)
    open_store(db_location).close()
    store = open_store(db_location)
    try:
        assert store.upgrade_legacy() == 0
        assert all(s.error_class for s in store.strategies() if s.kind == "pitfall")
    finally:
        store.close()

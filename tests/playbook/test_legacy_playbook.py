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
import threading
from pathlib import Path
from typing import Any

import pytest

from toolcycle.playbook import Argument, Playbook, Repair, Strategy, legacy
from toolcycle.playbook.advice import guide_line
from toolcycle.playbook.dead_end import says_found_nothing
from toolcycle.playbook.fallback import alternative_of
from toolcycle.playbook.location import open_store
from toolcycle.playbook.offer import render_line
from toolcycle.playbook.parts import Rename, pitfall_detail
from toolcycle.playbook.pitfall import pitfall_advice
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


@pytest.mark.parametrize("repair", [
    Repair("alternative", "schedule_api", via="rota_board", via_args=("clinician",),
           rename=Rename("doctor", "clinician")),
    Repair("alternative", "find_ticker", via="staff_directory", via_args=("name",),
           then=("weather(city)",)),
    Repair("prerequisite", "get_quote", via="find_ticker", argument="ticker",
           via_args=("company",)),
    Repair("schema", "amenities_register", via_args=("station", "facility")),
    Repair("argument", "fare_quote", argument="date", example="01.05.2026"),
    Repair("argument", "fare_quote", argument="date"),  # the task's own words: no example
])
def test_the_legacy_reader_reads_each_repair_the_old_rows_said(repair: Repair) -> None:
    """Every kind of repair, as the old code stored it (its advice, and its detail ending in
    the repair's signature), reads back as the repair it was written from."""
    error_class = "unknown value …"
    tools = [repair.tool, *([repair.via] if repair.via else [])]
    old = {"kind": "pitfall", "tools": tools, "detail": pitfall_detail(error_class, repair),
           "advice": pitfall_advice(repair.tool, error_class, repair, timeout=False)}
    assert legacy.is_legacy(old)
    upgraded = legacy.upgrade(old)
    assert upgraded["error_class"] == error_class
    assert Repair.from_dict(upgraded["repair"]) == repair
    assert not legacy.is_legacy(upgraded)


@pytest.mark.parametrize(("advice", "first_args", "skips"), [
    ('Call fare_quote(date like "01.05.2026", origin), then answer. Do not use web_search, '
     "station_info for this kind of task.",
     [Argument("date", "01.05.2026"), Argument("origin")], ["web_search", "station_info"]),
    ("Call find_ticker(company), then get_quote(ticker), then answer (feed each result into "
     "the next call).", [Argument("company")], []),
    ("Call ping(), then answer.", [], []),
])
def test_the_legacy_reader_reads_a_sequences_first_call_and_skipped_tools(
        advice: str, first_args: list[Argument], skips: list[str]) -> None:
    upgraded = Strategy.from_dict(legacy.upgrade({
        "id": "s", "domain": "d", "kind": "sequence", "advice": advice,
        "tools": ["fare_quote"]}))
    assert (upgraded.first_args, upgraded.skips) == (first_args, skips)


def test_stores_opening_an_old_playbook_at_once_upgrade_it_once(db_location: str) -> None:
    """Workers of a fleet open the same old playbook together: each waits for the write lock
    and reads the rows again under it, so one upgrades them and the others find nothing."""
    _old_store(db_location)
    barrier = threading.Barrier(4)
    opened: list[PlaybookStore] = []
    failures: list[BaseException] = []

    def open_it() -> None:
        barrier.wait(timeout=60)
        try:
            opened.append(open_store(db_location))
        except BaseException as exc:  # the test reports it
            failures.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        assert failures == [] and len(opened) == 4
        with opened[0].transaction() as conn:
            (version,) = conn.execute(
                "SELECT value FROM meta WHERE key = 'version'").fetchone()
        assert version == 2  # the old rows' write, then one upgrade
        assert all(s.error_class for s in opened[0].strategies() if s.kind == "pitfall")
    finally:
        for store in opened:
            store.close()

"""Write ``legacy_playbook.json``: the rows a playbook of the code before typed repairs stored,
and what that code then did with each lesson (the fixture of ``test_legacy_playbook.py``).

Run it with that code first on the path, from the project root::

    git archive dc1596a toolcycle | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old:. python tests/playbook/data/make_legacy_playbook.py

The lessons are learned as that code learned them (traces in, the curator's rows out), except
a probed dead end's, which needs probes: it is written with that code's own functions.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import toolcycle
from tests.playbook.conftest import make_trace
from toolcycle.playbook import Playbook
from toolcycle.playbook.advice import guide_line
from toolcycle.playbook.dead_end import FOUND_NOTHING, advice, says_found_nothing
from toolcycle.playbook.evidence import Repair
from toolcycle.playbook.fallback import alternative_of
from toolcycle.playbook.offer import render_line
from toolcycle.playbook.reshape import argument_lesson
from toolcycle.playbook.routine import routine_name
from toolcycle.playbook.strategy import Strategy, shows_how_to_call, skipped, strategy_id

assert hasattr(toolcycle.playbook.evidence, "Repair") and not hasattr(
    toolcycle.playbook.strategy, "Repair"), "run it with the code before typed repairs"

OUT = Path(__file__).with_name("legacy_playbook.json")
PLACES = ["Ashmoor", "Kelby", "Wrenfield", "Pellingham"]


def learn(pb: Playbook) -> None:
    for n, place in enumerate(PLACES[:3]):
        # an unreliable primary: delay_feed timed out, timetable_archive answered
        trace = make_trace(f"delay of the 08:1{n} from {place}", [
            [("delay_feed", {"service": f"08:1{n}"}, None,
              "Tool `delay_feed` timed out after 5.0 s")],
            [("timetable_archive", {"service": f"08:1{n}"}, '{"delay_minutes": 12}', None)],
        ], agent="rail")
        trace.output = "12 minutes"
        pb.learn_from(trace, True)
        # an unstated argument format: the date refused as the task wrote it, then passed
        trace = make_trace(f"Single fare from {place} to Kelby on 3 November 2026?", [
            [("web_search", {"query": f"fare {place}"}, "No results.", None)],
            [("fare_quote", {"origin": place, "date": "3 November 2026"}, None,
              "Tool `fare_quote` failed: ValueError: invalid date '3 November 2026': "
              "expected DD.MM.YYYY")],
            [("fare_quote", {"origin": place, "date": "03.11.2026"}, '{"fare_eur": 27.6}',
              None)],
        ], agent="rail")
        trace.output = "27.6 EUR"
        pb.learn_from(trace, True)
        # an id to look up first: find_ticker, then get_quote
        company = ["Acme", "Globex", "Initech"][n]
        trace = make_trace(f"What is the stock price of {company}?", [
            [("web_search", {"query": company}, "No results.", None)],
            [("find_ticker", {"company": company}, f"{company.upper()[:4]}", None)],
            [("get_quote", {"ticker": company.upper()[:4]}, "123.4", None)],
        ], agent="rail")
        trace.output = "123.4"
        pb.learn_from(trace, True)
    # a failure seen once: a pending candidate
    pending = make_trace("Seats left on the 09:40 to Kelby?", [
        [("seat_map", {"service": "09:40"}, None,
          "Tool `seat_map` failed: KeyError: 'unknown service 09:40'")],
    ], agent="rail", status="failure")
    pb.learn_from(pending, False)
    assert pb.flush(30)


def dead_end() -> Strategy:
    repair = Repair("alternative", "roster", via="ledger", via_args=("name",))
    detail = f"{FOUND_NOTHING}|{repair.signature}"
    return Strategy(id=strategy_id("pitfall", "rail", ["roster", "ledger"], detail),
                    domain="rail", advice=advice("roster", repair), kind="pitfall",
                    tools=["roster", "ledger"], applies_when=["balance"], support=3,
                    detail=detail)


def acted(s: Strategy) -> dict[str, Any]:
    """What the old code did with ``s``."""
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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old.db"
        pb = Playbook(str(path), learn=False, routines=True)
        learn(pb)
        pb.store.put([dead_end()])
        pb.close()
        conn = sqlite3.connect(path)
        strategies = [json.loads(d) for (d,) in conn.execute(
            "SELECT data FROM strategies ORDER BY id")]
        candidates = [json.loads(d) for (d,) in conn.execute(
            "SELECT data FROM candidates ORDER BY key")]
        conn.close()
    expected = {s["id"]: acted(Strategy.from_dict(s)) for s in strategies}
    OUT.write_text(json.dumps({"strategies": strategies, "candidates": candidates,
                               "acted": expected}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

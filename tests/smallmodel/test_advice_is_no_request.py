"""What the request asks is the user's words, not the playbook's (issue 68/69): learned advice
names other tasks' tool parameters ("Call tank_daily(tank_code, day)"), and read as the
request it made the field check refuse a right answer: the 1.5B gave an occupancy figure
for "occupancy in percent", and was told the request "asks about `code`", the advice's word.
A field's author abbreviates what a person writes out ("pct" for "percent"), so such a field
is named too. The domain here is another (water tanks)."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.playbook import Playbook
from toolcycle.playbook.strategy import Argument, Strategy
from toolcycle.run.asked_field import named_field, request_words
from toolcycle.testing import ScriptedModel, call

LEVELS = {("T-3", "2026-03-05"): {"tank_code": "T-3", "fill_level": 71, "inflow_lps": 4}}


def tank_daily(tank_code: str, day: str) -> dict[str, Any]:
    """A tank's figures on a day."""
    return LEVELS[(tank_code, day)]


SEQUENCE = Strategy(id="s-tank", domain="tanks", kind="sequence", tools=["tank_daily"],
                    advice="Call tank_daily(tank_code, day), then answer.",
                    applies_when=["tank", "full", "march"], support=3,
                    first_args=[Argument("tank_code"), Argument("day")])
QUESTION = "How full was tank T-3 on 5 March 2026?"


def _run(playbook: Playbook | None) -> Any:
    model = ScriptedModel([call("tank_daily", {"tank_code": "T-3", "day": "2026-03-05"}),
                           "Tank T-3 was at 71.", "T-3", "T-3"])
    agent = Agent(model, "Answer using the tools.", [tank_daily], name="tanks",
                  grounding=True, limits=Limits(max_attempts=3), playbook=playbook)
    return agent.run_sync(QUESTION)


def test_the_playbooks_advice_names_no_field_the_request_asks_about() -> None:
    pb = Playbook(":memory:", learn=False)
    pb.store.put([SEQUENCE])
    result = _run(pb)
    assert result.trace.strategies_shown == ["s-tank"]  # the advice was shown ...
    assert result.output == "Tank T-3 was at 71." and result.status == "success"  # ... not asked
    assert [a.validator for a in result.trace.attempts] == [None]


def test_a_fields_short_form_of_a_requests_word_is_named() -> None:
    words = request_words("Give me ward W-2's occupancy in percent and average quantity.")
    assert named_field("occupancy_pct", words) and named_field("avg_qty", words)
    assert not named_field("code", words) and not named_field("pt", words)  # (too short)
    assert not named_field("cap", request_words("What is the price?"))
    assert named_field("temp_c", request_words("What is the temperature?"))  # a 4-letter start
    # a word of its own is no short form, though its letters are in order in the request's
    assert not named_field("age", request_words("What is the average?"))
    assert not named_field("set", request_words("Sales in september?"))

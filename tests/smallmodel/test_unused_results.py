"""An answer that uses nothing the tools found is asked again once, shown the results it left
out (toolcycle/run/unused_results.py): a second look inside grounding's one check, which does
not change the run's status."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call

PROMPT = "How many loans were issued for title AV3814 on the 7th of December 2026?"


def daily_loans(title: str, date: str) -> dict[str, Any]:
    """Loans issued of a title on a day (dates like 12/07/2026)."""
    return {"title": title, "date": "12/07/2026", "loans": 93, "open": True}


def catalog(title: str) -> list[Any]:
    """The catalogue's records of a title."""
    return []


def _run(script: list[Any], tools: list[Any] | None = None) -> Any:
    agent = Agent(ScriptedModel(script), tools=tools or [daily_loans, catalog], grounding=True,
                  limits=Limits(max_attempts=3))
    return agent.run_sync(PROMPT)


def test_an_answer_from_the_last_empty_result_is_shown_the_one_that_held_the_figure() -> None:
    """Seen on the 1.5B (JSON, generated library suite): it got 93, called one more tool that
    returned [], and answered "No loans found", a success."""
    result = _run([call("daily_loans", {"title": "AV3814", "date": "12/07/2026"}),
                   call("catalog", {"title": "AV3814"}),
                   "No loans found for title AV3814 on 2026-12-07.",
                   "93 loans were issued."])
    first = result.trace.attempts[0]
    assert first.validator == "grounding"
    assert first.errors[0].startswith("your answer uses nothing the tools found. The "
                                      f"question: {PROMPT!r}.")
    assert "`daily_loans` returned" in first.errors[0] and "93" in first.errors[0]
    assert "`catalog`" not in first.errors[0]  # it found nothing: nothing left out
    assert (result.output, result.status) == ("93 loans were issued.", "success")


def test_an_answer_using_a_found_figure_passes_at_once() -> None:
    result = _run([call("daily_loans", {"title": "AV3814", "date": "12/07/2026"}),
                   "93 loans were issued for AV3814."])
    assert result.attempts == 1


@pytest.mark.parametrize("answer", ["It was a quiet day.", "The title is popular."])
def test_the_second_look_never_changes_the_status(answer: str) -> None:
    """Written again after the re-ask, the answer stands: an answer may rightly use nothing a
    tool found, so the re-ask is a second look, not a verdict."""
    result = _run([call("daily_loans", {"title": "AV3814", "date": "12/07/2026"}),
                   answer, answer])
    assert [a.validator for a in result.trace.attempts] == ["grounding", None]
    assert result.status == "success"


@pytest.mark.parametrize("answer", ["No loans found.", "I could not find it.",
                                    "The number of loans is not available."])
def test_an_answer_that_says_missing_what_a_result_holds_is_ungrounded(answer: str) -> None:
    """Saying what was asked is not there, where a result holds the field the request names
    (``loans`` for "how many loans"), is no answer the run can vouch for
    (toolcycle/run/said_missing.py); the re-ask came first, as for any second look."""
    result = _run([call("daily_loans", {"title": "AV3814", "date": "12/07/2026"}),
                   answer, answer])
    assert [a.validator for a in result.trace.attempts] == ["grounding", None]
    assert (result.output, result.status) == (answer, "ungrounded")


def test_results_holding_no_figure_the_request_lacks_ask_nothing() -> None:
    """An id, a date, a flag, words and the request's own figures are no facts an answer
    must repeat: an id is a handle for the next call, a flag or a state is said in words."""
    def status(title: str) -> dict[str, Any]:
        """Whether a title is on loan."""
        return {"title": title, "ref": "LN-5521", "date": "12/07/2026", "on_loan": True,
                "state": "pending", "year": 2026, "note": "a description to paraphrase"}

    result = _run([call("status", {"title": "AV3814"}), "Yes, it is on loan."], [status])
    assert result.attempts == 1 and result.status == "success"


def test_without_grounding_nothing_is_asked() -> None:
    agent = Agent(ScriptedModel([call("daily_loans", {"title": "AV3814", "date": "x"}),
                                 "No loans found."]),
                  tools=[daily_loans], grounding=False)
    assert agent.run_sync(PROMPT).attempts == 1


def test_a_count_of_a_listed_result_uses_it() -> None:
    def rooms(name: str) -> dict[str, Any]:
        """The rooms of a property."""
        return {"items": [{"room": "101"}, {"room": "102"}]}

    result = _run([call("rooms", {"name": "Harbour View"}), "It has 2 rooms."], [rooms])
    assert result.attempts == 1


def test_a_result_that_is_not_json_holds_no_facts() -> None:
    """A tool that returns its failure as text writes figures that are no answer."""
    def page(title: str) -> str:
        """A title's page."""
        return "Error 404: no such page (retry in 30 s)"

    result = _run([call("page", {"title": "AV3814"}), "I could not find that title."], [page])
    assert result.attempts == 1


def test_an_answer_using_a_name_a_result_gave_uses_it() -> None:
    """Seen on the 1.5B (first-hour held-out agents, seed 6804): "Grace Obi" from a record
    that also held two figures was asked again, and the re-ask turned it wrong."""
    def keeper(tank: str) -> dict[str, Any]:
        """A tank's record."""
        return {"volume_l": 4203, "visitors": 310, "keeper": "Ravi Menon"}

    result = _run([call("keeper", {"tank": "Reef"}), "Ravi Menon"], [keeper])
    assert result.attempts == 1


def test_a_date_written_another_way_uses_its_result() -> None:
    def order(ref: str) -> dict[str, Any]:
        """An order's record."""
        return {"total": 42.5, "arrives": "2026-11-27"}

    result = _run([call("order", {"ref": "O-1"}), "It arrives on November 27, 2026."],
                  [order])
    assert result.attempts == 1

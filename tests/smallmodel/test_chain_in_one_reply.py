"""A detail call given a name that a lookup of the same reply, or an earlier one, turned into
an id is told that id (toolcycle.run.handles, toolcycle.run.recovery).

Seen on the 1.5B (issue 68, held-out first-hour seed 6815, two questions): asked for two
things' figures added up, it wrote the whole chain in one reply (both lookups by name, both
detail calls by the same names, a sum of made-up figures, an answer), was told the detail
tool's `id` "is taken from the request; the lookup can give it", and wrote the same reply
again at every attempt, the ids the lookups had given unused above it. The domain here is
another (a library), through the real loop with a scripted model.
"""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call

BOOKS = {"Salt Roads": "BK-204", "Glass Harbour": "BK-377"}
RECORDS = {"BK-204": {"pages": 412, "shelf": "C3"}, "BK-377": {"pages": 288, "shelf": "A1"}}


def find_book(title: str) -> str:
    """The id of a book, by its title."""
    return BOOKS[title]


def book_info(id: str) -> dict[str, Any]:
    """A book's record by its id: pages and shelf."""
    return RECORDS[id]


CHAIN = [call("find_book", {"title": "Salt Roads"}), call("find_book", {"title": "Glass Harbour"}),
         call("book_info", {"id": "Salt Roads"}), call("book_info", {"id": "Glass Harbour"})]


def _errors(script: list[Any], parallel: bool = False) -> list[str]:
    agent = Agent(ScriptedModel([*script, "done"]), tools=[find_book, book_info],
                  parallel_tools=parallel, limits=Limits(max_iterations=6))
    result = agent.run_sync("How many pages do Salt Roads and Glass Harbour have together?")
    return [record.error for step in result.trace.steps for record in step.tool_calls
            if record.error]


def test_the_lookup_of_the_same_reply_gives_the_id_the_detail_call_needed() -> None:
    errors = _errors([CHAIN])
    assert len(errors) == 2
    assert ("`id` 'Salt Roads' is taken from the request, not from a tool result; `find_book` "
            "gave 'BK-204' for it: call `book_info` with `id` 'BK-204'") in errors[0]
    assert "`find_book` gave 'BK-377' for it: call `book_info` with `id` 'BK-377'" in errors[1]


def test_a_lookup_of_an_earlier_reply_counts_too() -> None:
    errors = _errors([CHAIN[0], CHAIN[2]])
    assert "`find_book` gave 'BK-204' for it: call `book_info` with `id` 'BK-204'" in errors[0]


def test_a_lookup_written_after_the_detail_call_has_given_nothing_yet() -> None:
    errors = _errors([[CHAIN[2], CHAIN[0]]])
    assert "`find_book` can give it" in errors[0] and "gave" not in errors[0]


def test_calls_run_together_do_not_read_each_others_results() -> None:
    # with every call of the reply running at once, whether the lookup has finished when the
    # detail call fails is timing: the advice must not depend on it
    errors = _errors([CHAIN], parallel=True)
    assert all("`find_book` can give it" in e and "gave" not in e for e in errors)


def test_a_rewritten_name_passed_as_an_id_is_told_the_lookup_with_the_requests_spelling() -> None:
    """Seen on the 1.5B (held-out 6816): ``field_details(field_id="brook_plot")`` for "Brook
    Plot", told only that the id "appears in no tool result or in the request", passed the
    rewritten name to the detail tool again and again until the loop guard ended the run."""
    errors = _errors([call("book_info", {"id": "salt_roads"})])
    assert ("`id` 'salt_roads' is the request's 'Salt Roads' rewritten, not from a tool "
            "result; `find_book` can give it: call it with 'Salt Roads'") in errors[0]


def test_a_rewritten_name_failing_makes_the_next_turn_look_it_up() -> None:
    wrong = call("book_info", {"id": "salt_roads"})
    agent = Agent(ScriptedModel([wrong, CHAIN[0], *["done"] * 3]),
                  tools=[find_book, book_info], grounding=True, limits=Limits(max_iterations=6))
    result = agent.run_sync("How many pages does Salt Roads have?")
    assert [s.tool_choice for s in result.trace.steps][:2] == [None, "find_book"]

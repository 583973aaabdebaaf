"""A page of nothing is nothing to the grounding as to the playbook
(``toolcycle.words.is_empty_result``): the 1.5B's primary tool failed (401), a directory
answered ``{"matches": null, "total": 0}`` and a search ``[]``, and "The reading of meter
PW9370 is not available." ended ``success``. After a failed call the run cannot tell "not
there" from "looked up wrong", and says so. The domain here is another (a seed bank)."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Limits
from toolcycle.testing import ScriptedModel, call


def vault_live(lot: str) -> str:
    """Live count of a seed lot."""
    raise PermissionError("401 Unauthorized: the API token was revoked")


def vault_directory(shelf: str) -> dict[str, Any]:
    """Lots on a shelf."""
    return {"matches": None, "total": 0}


def vault_count(lot: str) -> dict[str, Any]:
    """The counted seeds of a lot."""
    return {"lot": lot, "seeds": 0}


def _run(script: list[Any]) -> Any:
    agent = Agent(ScriptedModel(script), "Answer using the tools.",
                  [vault_live, vault_directory, vault_count], grounding=True,
                  limits=Limits(max_attempts=2))
    return agent.run_sync("How many seeds does lot SB-77 hold?")


def test_a_failed_call_beside_a_page_of_nothing_found_nothing() -> None:
    said = "The count of lot SB-77 is not available."
    result = _run([call("vault_live", {"lot": "SB-77"}),
                   call("vault_directory", {"shelf": "A"}), said, said])
    assert result.output == said and result.status == "ungrounded"


def test_a_zero_alone_is_an_answer_after_a_failed_call() -> None:
    said = "Lot SB-77 holds 0 seeds."
    result = _run([call("vault_live", {"lot": "SB-77"}),
                   call("vault_count", {"lot": "SB-77"}), said])
    assert result.output == said and result.status == "success"


def test_the_loop_guards_note_is_no_result_and_its_count_no_source() -> None:
    # the 1.5B called a lookup that found nothing until the loop guard's note came ("returned
    # this same result 3 times"), after a failed call, then answered a count of 3: the note
    # had made the empty result hold something, and its "3" a source
    said = "Lot SB-77 has 3 shelves."
    empty = call("vault_directory", {"shelf": "A"})
    result = _run([call("vault_live", {"lot": "SB-77"}), empty, empty, empty, said, said])
    notes = [c.result for c in result.tool_calls if c.result and "[loop guard]" in c.result]
    assert notes and "3 times" in notes[0]  # the model read the note
    assert result.output == said and result.status == "ungrounded"

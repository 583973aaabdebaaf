"""A title before a name is no claim, and its full stop ends no sentence (toolcycle/run/
grounding.py, ``_title``). Seen on the 1.5B (held-out first-hour seed 6818): "the keeper ...
is Mr. Ravi Menon", the record's keeper right, ended ``ungrounded`` for "Mr", and a made-up
"Mr. Johnson" had been flagged only for "Mr": the name after the full stop read as a
sentence's first word. A clinic's doctors here, another domain."""

from __future__ import annotations

import pytest

from toolcycle import Agent
from toolcycle.run.grounding import unsupported_claims
from toolcycle.testing import ScriptedModel, call

SOURCES = 'Who runs the Harbour Clinic? {"doctor": "Ada Park", "beds": 12}'


@pytest.mark.parametrize(("answer", "unsupported"), [
    ("The Harbour Clinic is run by Dr. Ada Park.", []),
    ("The Harbour Clinic is run by Dr Ada Park.", []),
    ("Mrs. Park runs it.", []),
    ("The Harbour Clinic is run by Dr. Johnson.", ["Johnson"]),
    ("The Harbour Clinic is run by Mr Johnson.", ["Johnson"]),
    ("Ada Park runs it. Prof. Lee helps.", ["Lee"]),
    ("The Dr. is away.", ["Dr"]),  # (no name after it: a word like any other)
])
def test_a_title_is_no_claim_and_the_name_after_it_is(answer: str,
                                                      unsupported: list[str]) -> None:
    assert unsupported_claims(answer, SOURCES) == unsupported


def clinic(name: str) -> dict[str, object]:
    """A clinic's record: its doctor and its beds."""
    return {"doctor": "Ada Park", "beds": 12}


def test_the_right_name_with_a_title_is_a_success() -> None:
    agent = Agent(ScriptedModel([call("clinic", {"name": "Harbour Clinic"}),
                                 "The Harbour Clinic is run by Dr. Ada Park."]),
                  tools=[clinic], grounding=True)
    result = agent.run_sync("Who runs the Harbour Clinic?")
    assert (result.status, result.attempts) == ("success", 1), result.trace.render()

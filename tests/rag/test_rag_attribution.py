"""Where an answer's content comes from (``RagAnswer.attributed``), the user turn after found
passages, and the refusal of an answer that is only chunk ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcycle.models.scripted import ScriptedModel
from toolcycle.rag import Document, KnowledgeBase, answer_with_rag
from toolcycle.rag.attribution import attributed

PASSAGES = {
    "tickets#0": "A single ticket costs 2.40 euros. A day pass costs 7.50 euros.",
    "night#0": "Night buses run from 00:30 to 05:00 every 30 minutes.",
    "leave#0": "Employees receive 27 days of paid leave. Up to 5 unused days carry over.",
    "regions#0": "Machines run in Frankfurt, Dublin and Helsinki. Helsinki runs on renewables.",
}


@pytest.mark.parametrize(("answer", "question", "expected"), [
    # a figure the question lacks, in the passage that is about the same thing
    ("A day pass costs 7.50 euros.", "How much is a day pass?", ["tickets#0"]),
    # "5" is also in "05:00", but that passage shares no word with the answer
    ("5 unused leave days", "How many unused leave days carry over?", ["leave#0"]),
    # no figure: the words the answer adds
    ("The region is Helsinki.", "Which region runs on renewables only?", ["regions#0"]),
    # the model's own citation's digits are no figure of the answer
    ("Up to 5 unused days [tickets#0].", "How many leave days carry over?", ["leave#0"]),
    ("1,200.50 of them", "How many?", []),
])
def test_an_answer_is_attributed_to_the_passages_holding_what_it_adds(
        answer: str, question: str, expected: list[str]) -> None:
    assert attributed(answer, question, PASSAGES) == expected


@pytest.mark.parametrize("answer", [
    "No, the gym does not have a swimming pool.",  # adds nothing to the question
    "The parking fee is not mentioned in the provided passages.",  # talks about passages
    "[tickets#0]",  # only an id
])
def test_an_answer_that_adds_nothing_a_passage_holds_is_attributed_to_none(answer: str) -> None:
    question = "Does the gym have a swimming pool? What is the parking fee?"
    assert attributed(answer, question, PASSAGES) == []


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase(tmp_path / "kb.sqlite")
    base.add_many([
        Document("refunds", "Refunds reach the original card within 14 days of a return."),
        Document("shipping", "Express shipping arrives the next business day."),
    ])
    return base


async def test_the_answer_carries_its_attribution_beside_the_models_citations(
        kb: KnowledgeBase) -> None:
    answer = await answer_with_rag("How long do refunds take?", kb,
                                   ScriptedModel(["Refunds take 14 days."]), max_tool_cycles=0)
    assert answer.citations == []  # the model cited nothing
    assert answer.attributed == ["refunds#0"] == answer.telemetry.attributed_chunk_ids
    assert answer.run.trace.metadata["rag"]["attributed_chunk_ids"] == ["refunds#0"]




@pytest.mark.parametrize("cycles", [0, 4])
async def test_the_user_turn_ends_with_the_passages(kb: KnowledgeBase, cycles: int) -> None:
    """No directive after found passages (asked there to cite, the 1.5B put ids where facts
    belong: toolcycle/rag/answer.py, ``_Session.prompt``)."""
    model = ScriptedModel(["14 days."])
    await answer_with_rag("How long do refunds take?", kb, model, max_tool_cycles=cycles)
    assert model.requests[0].last_message.text.rstrip().endswith("of a return.")


async def test_an_answer_of_chunk_ids_alone_is_refused_and_asked_again(
        kb: KnowledgeBase) -> None:
    model = ScriptedModel(["[refunds#0]", "Refunds take 14 days [refunds#0]."])
    answer = await answer_with_rag("How long do refunds take?", kb, model, max_tool_cycles=0)
    assert answer.output == "Refunds take 14 days [refunds#0]."
    assert "only chunk ids" in model.requests[1].last_message.text


def test_a_bare_figure_is_attributed_by_the_questions_words() -> None:
    passages = {"attendance#0": "Students must attend 80 percent of the lab sessions.",
                "fees#0": "The fee is 80 euros."}
    assert attributed("80%", "What share of lab sessions must students attend?",
                      passages) == ["attendance#0"]


def test_only_an_answer_of_ids_is_refused_for_being_ids() -> None:
    """An empty answer is the loop's to handle; it holds no id, so it is not called one."""
    from toolcycle.errors import ValidationFailed
    from toolcycle.rag.answer import says_more_than_ids

    says_more_than_ids("", None)  # type: ignore[arg-type]
    says_more_than_ids("14 days [refunds#0].", None)  # type: ignore[arg-type]
    with pytest.raises(ValidationFailed):
        says_more_than_ids(" [refunds#0], [shipping#0]. ", None)  # type: ignore[arg-type]

"""A call that failed on a value another tool gives: the next request names that tool
(toolcycle/run/producer_first.py). Seen on the 1.5B (held-out first-hour agents of seeds
6810 and 6817): ``get_vineyard(vineyard_id="Vigna Alta")``, the advice to look the id up
ignored, then "The vineyard 'Vigna Alta' does not exist". Here in another domain, through
the real loop and the JSON text protocol."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel

GREENHOUSES = {"North Bay": "GH-4"}


def greenhouse_id(name: str) -> str:
    """The id of a greenhouse, by its name."""
    return GREENHOUSES[name]


def greenhouse(greenhouse_id: str) -> dict[str, Any]:
    """A greenhouse's record: its plants."""
    return {"GH-4": {"plants": 420}}[greenhouse_id]


BY_NAME = '{"name": "greenhouse", "arguments": {"greenhouse_id": "North Bay"}}'
LOOKUP = '{"name": "greenhouse_id", "arguments": {"name": "North Bay"}}'
RECORD = '{"name": "greenhouse", "arguments": {"greenhouse_id": "GH-4"}}'
ANSWER = '{"answer": "North Bay holds 420 plants."}'
DIRECTIVE = "Call the tool greenhouse_id now."


def _run(script: list[str], grounding: bool = True) -> tuple[Any, ScriptedModel]:
    inner = ScriptedModel(script)
    agent = Agent(JsonToolsModel(inner), "You answer questions about greenhouses.",
                  [greenhouse_id, greenhouse], grounding=grounding)
    return agent.run_sync("How many plants does North Bay hold?"), inner


def test_a_failure_makes_the_next_request_call_the_producer() -> None:
    result, inner = _run([BY_NAME, LOOKUP, RECORD, ANSWER])
    said = [r.last_message.text for r in inner.requests]
    assert DIRECTIVE not in said[0] and DIRECTIVE in said[1]
    assert [s.tool_choice for s in result.trace.steps][:3] == [None, "greenhouse_id", None]
    assert (result.status, result.output) == ("success", "North Bay holds 420 plants.")


def test_an_answer_in_words_after_the_failure_is_refused_for_the_lookup() -> None:
    """The 1.5B's commonest reply there: the thing "does not exist", an answer attempt spent
    on grounding's re-ask. The turn must call, so the lookup comes before any answer."""
    gave_up = '{"answer": "There is no greenhouse called North Bay."}'
    result, _ = _run([BY_NAME, gave_up, LOOKUP, RECORD, ANSWER])
    assert (result.status, result.output) == ("success", "North Bay holds 420 plants.")
    assert result.attempts == 1


def test_a_failure_whose_turn_called_the_producer_too_leaves_the_model_free() -> None:
    both = f"[{BY_NAME}, {LOOKUP}]"
    result, inner = _run([both, RECORD, ANSWER])
    assert not any(DIRECTIVE in r.last_message.text for r in inner.requests)
    assert result.status == "success"


def test_each_producer_is_named_once_a_run() -> None:
    result, inner = _run([BY_NAME, BY_NAME, LOOKUP, BY_NAME, RECORD, ANSWER])
    assert sum(DIRECTIVE in r.last_message.text for r in inner.requests) == 1
    assert result.output == "North Bay holds 420 plants."


def test_without_grounding_nothing_is_forced() -> None:
    _, inner = _run([BY_NAME, BY_NAME, LOOKUP, RECORD, ANSWER], grounding=False)
    assert not any(DIRECTIVE in r.last_message.text for r in inner.requests)

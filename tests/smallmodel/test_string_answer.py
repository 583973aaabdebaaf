"""A small model's answer given as a string where the output tool wants an object with one
required string field is repaired into that object (and the trace says so); every other shape
is refused as before, with errors that say what to change (toolcycle/output_repair.py)."""

from __future__ import annotations

from typing import Any, Literal

import pydantic
import pytest

from toolcycle import Agent, AgentError, Limits, Output
from toolcycle.output_modes import OutputMode
from toolcycle.testing import ScriptedModel, call


class Answer(pydantic.BaseModel):
    answer: str


class WithNote(pydantic.BaseModel):
    answer: str
    note: str | None = None


class Figure(pydantic.BaseModel):
    value: int


class Pair(pydantic.BaseModel):
    city: str
    country: str


class Trip(pydantic.BaseModel):
    unit: Literal["km", "mi"]
    distance: float


def _run(script: list[Any], output: Any, attempts: int = 1) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(script)
    agent = Agent(model, output=output, limits=Limits(max_attempts=attempts))
    return agent.run_sync("Where is the Eiffel tower?"), model


def _repairs(result: Any) -> list[str]:
    return [r for step in result.trace.steps for r in step.repairs]


def _observed(error: AgentError) -> str:
    """What the model read after its output call: the call's result, or its error."""
    assert error.result is not None
    record = error.result.trace.steps[0].tool_calls[0]
    return (record.result or "") + (record.error or "")


def test_a_text_answer_becomes_the_lone_string_field() -> None:
    result, _ = _run(["  Paris  "], Answer)
    assert result.output == Answer(answer="Paris")
    assert any("taken as its `answer`" in r for r in _repairs(result))


def test_a_bare_string_argument_becomes_the_object() -> None:
    result, _ = _run([call("final_result", raw='"Paris"')], Answer)
    assert result.output == Answer(answer="Paris")
    assert any("a bare string" in r for r in _repairs(result))
    # the history holds the repaired call (ScriptedModel checked the provider shapes)
    held = next(m for m in result.messages if m.tool_calls).tool_calls[0]
    assert held.arguments == {"answer": "Paris"} and held.parse_error is None


def test_a_string_under_another_name_becomes_the_field() -> None:
    result, _ = _run([call("final_result", {"result": "Paris"})], Answer)
    assert result.output == Answer(answer="Paris")
    assert any("under `'result'`" in r for r in _repairs(result))


def test_a_forced_final_text_answer_is_repaired_too() -> None:
    model = ScriptedModel([call("nothing"), "Paris"])
    agent = Agent(model, output=Answer,
                  limits=Limits(max_iterations=1, on_limit="final_answer"))
    assert agent.run_sync("q").output == Answer(answer="Paris")


def test_a_huge_string_is_taken_whole_and_quoted_bounded() -> None:
    big = "x" * 1_000_000
    result, _ = _run([call("final_result", raw=f'"{big}"')], Answer)
    assert result.output.answer == big
    assert all(len(r) < 400 for r in _repairs(result))


@pytest.mark.parametrize("arguments", [
    {"result": None}, {"result": {"nested": "Paris"}}, {"result": 3},
    {"result": "Paris", "other": "x"},
])
def test_hostile_shapes_are_refused_not_guessed(arguments: dict[str, Any]) -> None:
    with pytest.raises(AgentError) as caught:
        _run([call("final_result", arguments)], Answer)
    assert "answer: Field required (expected a string)" in _observed(caught.value)


@pytest.mark.parametrize("raw", ['null', '{"answer": ', '"   "', '[1, 2]', 'Paris'])
def test_unreadable_or_blank_strings_are_not_repaired(raw: str) -> None:
    with pytest.raises(AgentError):
        _run([call("final_result", raw=raw)], Answer)


@pytest.mark.parametrize("output", [Figure, Pair, Output(Answer, reflect=lambda o, c: "ok")])
def test_no_repair_where_the_shape_is_not_one_string_field(output: Any) -> None:
    with pytest.raises(AgentError) as caught:
        _run(["Paris"], output)
    assert _repairs(caught.value.result) == []
    assert caught.value.code in ("INVALID_RESPONSE", "OUTPUT_VALIDATION_FAILED",
                                 "VALIDATION_FAILED", "MAX_ATTEMPTS")


def test_optional_fields_beside_block_the_renamed_string_only() -> None:
    result, _ = _run(["Paris"], WithNote)  # text: still the one required field
    assert result.output == WithNote(answer="Paris")
    with pytest.raises(AgentError):
        _run([call("final_result", {"note": "Paris"})], WithNote)


def test_text_output_runs_are_unchanged() -> None:
    result, _ = _run(["Paris"], str)
    assert result.output == "Paris" and _repairs(result) == []


def test_errors_say_field_expected_and_given() -> None:
    with pytest.raises(AgentError) as caught:
        _run([call("final_result", {"unit": "miles", "distance": "far"})], Trip)
    observed = _observed(caught.value)
    assert "unit: Input should be 'km' or 'mi'; given 'miles'" in observed
    assert "distance:" in observed and "given 'far'" in observed
    with pytest.raises(AgentError) as caught:
        _run([call("final_result", {"distance": 3})], Trip)
    observed = _observed(caught.value)
    assert "unit: Field required (expected one of 'km', 'mi')" in observed


@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_text_output_modes_are_not_repaired(mode: OutputMode) -> None:
    """In native and prompted modes the reply's text is the output: nothing to repair."""
    result, _ = _run(['{"answer": "Paris"}'], Output(Answer, mode=mode))
    assert result.output == Answer(answer="Paris") and _repairs(result) == []

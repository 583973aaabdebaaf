"""After a failed validation the conversation goes on, and it must stay a history that the
real APIs accept: the test model checks every request in the OpenAI and Anthropic shapes."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Message, Output, RunContext, ToolResult, ValidationFailed
from toolcycle.models.protocol import HistoryChecker, ProtocolViolation, Wire
from toolcycle.models.scripted import ScriptedModel, call

from .support import BETTER, GOOD, NEGATIVE, NO_REVENUE, OUTPUT_TOOL, Report, lookup

WIRES: list[Wire] = ["openai", "anthropic"]


def positive_revenue(report: Report, ctx: RunContext[Any]) -> None:
    if report.revenue <= 0:
        raise ValidationFailed("revenue must be positive")


def preview(report: Report, ctx: RunContext[Any]) -> str:
    return f"{report.company}: {report.revenue}"


SCENARIOS: dict[str, tuple[list[Any], Output[Any]]] = {
    # rejected by a validator, with a helper in the same turn, then accepted
    "validator": (
        [[call("lookup", {"company": "Acme"}), call(OUTPUT_TOOL, NEGATIVE)],
         call(OUTPUT_TOOL, GOOD)],
        Output(Report, validators=[positive_revenue]),
    ),
    # a schema failure, then two output calls in one turn
    "schema": (
        [call(OUTPUT_TOOL, NO_REVENUE), [call(OUTPUT_TOOL, GOOD), call(OUTPUT_TOOL, BETTER)]],
        Output(Report),
    ),
    # a text reply (INVALID_RESPONSE), then the output
    "no_tool_call": (["Acme earns 1200.", call(OUTPUT_TOOL, GOOD)], Output(Report)),
    # reflection: submit before output, a rejected submit, then a good one
    "reflection": (
        [call("submit"), call(OUTPUT_TOOL, NEGATIVE), call("submit"),
         [call(OUTPUT_TOOL, GOOD), call("submit")]],
        Output(Report, validators=[positive_revenue], reflect=preview),
    ),
    # free text rejected by a validator
    "text": (["too short", "a long enough answer"], Output(str, validators=[
        lambda text, ctx: _at_least(text, 10)])),
}


def _at_least(text: str, n: int) -> None:
    if len(text) < n:
        raise ValidationFailed(f"answer must have at least {n} characters")


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_conversation_after_failed_validation_passes_the_protocol_check(
    wire: Wire, scenario: str
) -> None:
    script, output = SCENARIOS[scenario]
    model = ScriptedModel([*script, "Anything else?"], wire=wire)
    agent = Agent(model, "You write reports.", tools=[lookup], output=output)
    result = await agent.run("Report on Acme.")
    assert result.attempts >= 2
    assert len(model.requests) == len(script)  # every scripted reply was requested

    # The run's history can be continued in that wire shape: one more checked request.
    follow_up = Agent(model, "You write reports.", tools=[lookup])
    more = await follow_up.run("Thanks.", message_history=result.messages)
    assert more.output == "Anything else?"
    HistoryChecker(wire).check(more.messages)


@pytest.mark.parametrize("wire", WIRES)
async def test_the_checker_rejects_broken_variants_of_that_history(wire: Wire) -> None:
    script, output = SCENARIOS["validator"]
    model = ScriptedModel(list(script), wire=wire)
    result = await Agent(model, tools=[lookup], output=output).run("Report on Acme.")
    messages = result.messages
    HistoryChecker(wire).check([*messages, Message.user("next")])  # the real one passes
    tool_index = next(i for i, m in enumerate(messages) if m.role == "tool")

    # 1. The rejected output call left unanswered (the retry prompt follows the call).
    dropped = messages[:tool_index] + messages[tool_index + 1 :]
    with pytest.raises(ProtocolViolation, match="answered"):
        HistoryChecker(wire).check(dropped)

    # 2. The results of that turn in the wrong order.
    answers = messages[tool_index]
    swapped = Message("tool", list(reversed(answers.parts)))
    with pytest.raises(ProtocolViolation, match="call order"):
        HistoryChecker(wire).check([*messages[:tool_index], swapped, *messages[tool_index + 1 :]])

    # 3. The output call answered twice (a result for the helper missing).
    output_answer = answers.results[1]
    twice = Message("tool", [output_answer, ToolResult(output_answer.call_id, OUTPUT_TOOL, "x")])
    with pytest.raises(ProtocolViolation):
        HistoryChecker(wire).check([*messages[:tool_index], twice, *messages[tool_index + 1 :]])

    # 4. The last turn's output call without its answer at the end of the run.
    with pytest.raises(ProtocolViolation, match="no result"):
        HistoryChecker(wire).check(messages[:-1])

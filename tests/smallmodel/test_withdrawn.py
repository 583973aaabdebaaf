"""A refused answer is withdrawn from what the model reads next (toolcycle/run/withdrawn.py):
the re-ask still names it, the run's history and trace keep it, every call the model reads
stays answered. The 1.5B copied its refused figures into later answers (first-hour traces,
2026-12-06/07: 27 runs, none a success); the domain here is another's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from toolcycle import Agent, Limits, Output, ValidationFailed
from toolcycle.messages import Message, ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.run.snapshot_shape import _counter_problems
from toolcycle.testing import ScriptedModel, call

HIVES = {"Clover Row": {"honey_kg": 38.5, "frames": 10}}


def hive(name: str) -> dict[str, Any]:
    """A beehive's record: honey harvested (kg) and frames."""
    return HIVES[name]


ASKED = "How much honey did the hive Clover Row give?"


class Harvest(pydantic.BaseModel):
    hive: str
    honey_kg: float


def _seen(log: list[list[Message]]) -> Any:
    """A script step that keeps the messages the model was sent, then replies with ``then``."""
    def step(then: Any) -> Any:
        def reply(messages: Sequence[Message], settings: ModelSettings) -> Any:
            log.append(list(messages))
            return then
        return reply
    return step


def _said(messages: list[Message], role: str) -> str:
    """Everything messages of ``role`` say: text, calls' arguments, tools' results."""
    return " | ".join(" ".join([m.text, *(c.raw_arguments for c in m.tool_calls),
                                *(p.content for p in m.parts if isinstance(p, ToolResult))])
                      for m in messages if m.role == role)


def test_a_refused_text_answer_is_not_sent_again_but_the_re_ask_names_it() -> None:
    log: list[list[Message]] = []
    seen = _seen(log)
    script = [call("hive", {"name": "Clover Row"}), "Clover Row gave 120 kg.",
              seen("Clover Row gave 38.5 kg.")]
    result = Agent(ScriptedModel(script), tools=[hive], grounding=True).run_sync(ASKED)
    assert (result.output, result.status) == ("Clover Row gave 38.5 kg.", "success")
    sent = log[0]
    assert "120" not in _said(sent, "assistant")  # its own refused words: withdrawn
    assert "120" in sent[-1].text and sent[-1].role == "user"  # the re-ask names them
    assert "38.5" in _said(sent, "tool")  # the results it answers from stay
    assert "120" in _said(result.messages, "assistant")  # the history keeps them


def test_a_refused_output_call_goes_with_its_answer() -> None:
    log: list[list[Message]] = []
    seen = _seen(log)
    script = [call("hive", {"name": "Clover Row"}),
              call("final_result", {"hive": "Clover Row", "honey_kg": 120}),
              seen(call("final_result", {"hive": "Clover Row", "honey_kg": 38.5}))]
    result = Agent(ScriptedModel(script), tools=[hive], grounding=True,
                   output=Harvest).run_sync(ASKED)
    assert result.output == Harvest(hive="Clover Row", honey_kg=38.5)
    sent = log[0]
    assert "120" not in _said(sent, "assistant") and "120" in sent[-1].text
    assert "Rejected" not in _said(sent, "tool")  # the refused call's answer left with it
    # the scripted model's history checker (OpenAI's and Anthropic's rules) accepted the
    # request: every call the model reads is answered


def test_a_refused_reply_that_also_called_a_tool_stays() -> None:
    log: list[list[Message]] = []
    seen = _seen(log)
    script: list[Any] = [[call("hive", {"name": "Clover Row"}),
                          call("final_result", {"hive": "Clover Row", "honey_kg": 120})],
                         seen(call("final_result", {"hive": "Clover Row", "honey_kg": 38.5}))]
    result = Agent(ScriptedModel(script), tools=[hive], grounding=True,
                   output=Harvest).run_sync(ASKED)
    assert result.output.honey_kg == 38.5
    assert "120" in _said(log[0], "assistant")  # the lookup's turn is the run's: kept


def test_without_grounding_a_validators_refusal_is_shown_back() -> None:
    log: list[list[Message]] = []
    seen = _seen(log)

    def plausible(answer: str, ctx: Any) -> None:
        if "120" in answer:
            raise ValidationFailed("that is more honey than a hive gives")

    agent = Agent(ScriptedModel(["Clover Row gave 120 kg.", seen("38.5 kg.")]), tools=[hive],
                  grounding=False, output=Output(str, validators=[plausible]),
                  limits=Limits(max_attempts=2))
    assert agent.run_sync(ASKED).output == "38.5 kg."
    assert "120" in _said(log[0], "assistant")  # its fix is an edit of what it said


def test_a_snapshot_says_what_was_withdrawn_and_its_shape_is_checked() -> None:
    base = {"attempt": 1, "iteration": 1, "attempt_iterations": 1, "executed_calls": 0,
            "tool_counts": {}, "closed_attempts": [], "timeout_left_s": None}
    assert _counter_problems(base) == []  # (snapshots written before it lack the key)
    assert _counter_problems({**base, "withdrawn": [3, 4]}) == []
    assert _counter_problems({**base, "withdrawn": "3"}) == [
        "counters.withdrawn: must be a list of integers"]

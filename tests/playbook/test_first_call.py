"""A run shown a learned sequence begins with a call of its first tool (RoutineOffer.first_call)."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook

from .test_repair import _learned, country_info, exchange_rate

CHOICES: list[Any] = []


def from_memory(messages: list[Message], settings: ModelSettings) -> Any:
    """Answers from memory unless made to call (the 1.5B's made-up parcel statuses); once it
    has looked the code up it goes on by hand."""
    CHOICES.append(settings.tool_choice)
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if " = " in (results[-1] if results else ""):
        return f"Worth {results[-1].split(' = ')[-1].splitlines()[0]}"
    if results:
        return call("exchange_rate", {"currency": results[-1].split("code ")[1].split(",")[0]})
    if settings.tool_choice == "auto":
        return "Worth about 1 USD, I believe."
    prompt = next(m.text for m in messages if m.role == "user")
    return call("country_info", {"country": prompt.split(" of ")[-1].split()[0]})


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(from_memory), "Answer with the tools.",
                 [tool(country_info, read_only=True), tool(exchange_rate, read_only=True)],
                 name="money", playbook=pb)


async def test_a_run_shown_a_sequence_must_begin_with_a_call_and_then_answer() -> None:
    pb = await _learned(head_start=False)  # (with one, the playbook makes that call itself)
    CHOICES.clear()
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert result.output == "Worth 2.75 USD"  # not the answer from memory
    # the sequence's first tool, by name, once; the stand-in ran the whole chain, so the
    # next request asks for the answer (RoutineOffer.answer_when)
    assert CHOICES == ["country_info", "none"]
    assert [c.name for c in result.trace.tool_calls] == ["country_info"]


async def test_a_run_shown_no_sequence_is_left_to_choose() -> None:
    pb = await _learned()
    CHOICES.clear()
    result = await _agent(pb).run("Tell me a joke.")
    assert result.trace.strategies_shown == []
    assert CHOICES == ["auto"]


async def test_without_routines_the_playbook_forces_nothing() -> None:
    pb = await _learned(routines=False)
    CHOICES.clear()
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert result.trace.strategies_shown != []  # advised, not forced
    assert CHOICES == ["auto"] and result.output == "Worth about 1 USD, I believe."


async def test_a_head_start_makes_that_call_before_the_first_turn() -> None:
    """The task names one value, and the sequence learned that its first call takes it
    (toolcycle.playbook.sequence): the call is made before the model's first request, and
    that request asks for the answer. One model turn instead of two."""
    pb = await _learned()
    CHOICES.clear()
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert result.output == "Worth 2.75 USD"
    assert CHOICES == ["none"] and result.iterations == 1 and result.trace.iterations == 1
    [record] = result.trace.tool_calls
    assert (record.name, record.args, record.iteration) == (
        "country_info", {"country": "Ruritania"}, 0)
    assert record.result is not None and record.result.startswith("Ran country_info, then")
    assert result.usage.requests == 1 and result.usage.tool_calls == 1
    # a task naming two values gets none: which one the call takes is not known
    CHOICES.clear()
    two = await _agent(pb).run("How many USD is the currency of Ruritania or Freedonia worth?")
    assert CHOICES[0] == "country_info" and two.trace.tool_calls[0].iteration == 1

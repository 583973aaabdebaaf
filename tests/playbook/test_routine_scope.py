"""At its defaults (``routines="read_only"``) a playbook calls for the model, and makes the
model call, only tools declared ``read_only``: routines over lookups are offered, a chain with
a step that may change something is not, and a run is made to begin with a call only of a
lookup. ``routines=True`` still acts on any tool that needs no approval."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, tool
from toolcycle.models.scripted import ScriptedModel
from toolcycle.playbook import LearningTask, Playbook, learn

from .test_first_call import CHOICES, from_memory
from .test_repair import COUNTRIES, country_info, exchange_rate, in_order

ROUTINE = "country_info_then_exchange_rate"
TASK = "How many USD is the currency of Ruritania worth?"


def _agent(pb: Playbook, policy: Any, *, lookups: tuple[str, ...]) -> Agent[Any, str]:
    return Agent(ScriptedModel(policy), "Answer with the tools.",
                 [tool(country_info, read_only="country_info" in lookups),
                  tool(exchange_rate, read_only="exchange_rate" in lookups)],
                 name="money", playbook=pb)


async def _learned(pb: Playbook, lookups: tuple[str, ...]) -> Playbook:
    tasks = [LearningTask(f"t{i}", f"How many USD is the currency of {c} worth?",
                          COUNTRIES[c][1]) for i, c in enumerate(["Freedonia", "Sylvania",
                                                                  "Oberland"])]
    report = await learn(tasks, _agent(pb, in_order, lookups=lookups), playbook=pb,
                         progress=False)
    assert report.success_rate == 1.0
    assert pb.flush(30)
    return pb


async def test_the_default_offers_routines_over_lookups() -> None:
    both = ("country_info", "exchange_rate")
    pb = await _learned(Playbook(":memory:"), both)
    assert pb.routines == "read_only"
    assert [r.name for r in pb.routines_learned("money")] == [ROUTINE]
    CHOICES.clear()
    result = await _agent(pb, from_memory, lookups=both).run(TASK)
    # the head start looked the country up before the first turn, its routine ran the chain
    assert result.output == "Worth 2.75 USD"
    assert CHOICES == ["none"] and result.iterations == 1


async def test_the_default_calls_and_forces_nothing_over_tools_that_are_not_lookups() -> None:
    pb = await _learned(Playbook(":memory:"), ())
    assert pb.routines_learned("money") == ()
    assert any(s.kind == "sequence" for s in pb.strategies("money"))  # learned, advised
    CHOICES.clear()
    result = await _agent(pb, from_memory, lookups=()).run(TASK)
    assert result.trace.strategies_shown != []
    assert ROUTINE not in (result.trace.tools_offered or ())
    assert CHOICES == ["auto"]  # not made to call a tool that may change something


async def test_a_chain_with_one_step_that_is_not_a_lookup_is_no_routine() -> None:
    """The run may still be made to begin with the lookup: the model makes that call, with
    its own arguments, and calling a lookup changes nothing."""
    pb = await _learned(Playbook(":memory:", head_start=False), ("country_info",))
    assert pb.routines_learned("money") == ()
    CHOICES.clear()
    result = await _agent(pb, from_memory, lookups=("country_info",)).run(TASK)
    assert ROUTINE not in (result.trace.tools_offered or ())
    assert CHOICES[0] == "country_info"
    assert [c.name for c in result.trace.tool_calls] == ["country_info", "exchange_rate"]
    assert result.output == "Worth 2.75 USD"


async def test_routines_true_acts_on_any_tool() -> None:
    pb = await _learned(Playbook(":memory:", routines=True, head_start=False), ())
    assert [r.name for r in pb.routines_learned("money")] == [ROUTINE]
    CHOICES.clear()
    await _agent(pb, from_memory, lookups=()).run(TASK)
    assert CHOICES[0] == "country_info"


async def test_settings_changed_after_the_agent_was_built_reach_its_next_run() -> None:
    both = ("country_info", "exchange_rate")
    pb = await _learned(Playbook(":memory:"), both)
    agent = _agent(pb, from_memory, lookups=both)
    assert (await agent.run(TASK)).iterations == 1  # the head start, then the routine
    pb.head_start = False
    result = await agent.run(TASK)
    assert result.output == "Worth 2.75 USD"
    assert result.iterations > 1  # no lookup before the first turn: the model made it
    assert pb.planner("money").head_start_enabled is False

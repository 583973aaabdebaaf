"""A routine the playbook learns while an agent lives is offered from that agent's next run
(Playbook.routines_learned, Agent._own_core), not only once the agent is built again.

Found reading hotel JSON at 5954155: bench/learning.py builds one agent per epoch (one in all,
by default), so no train run was ever offered a routine its own learning had made."""

from __future__ import annotations

from toolcycle import Agent, tool
from toolcycle.models.scripted import ScriptedModel
from toolcycle.playbook import LearningTask, Playbook, learn

from .test_repair import COUNTRIES, country_info, exchange_rate, in_order

ROUTINE = "country_info_then_exchange_rate"


def _agent(pb: Playbook) -> Agent[object, str]:
    return Agent(ScriptedModel(in_order), "Answer with the tools.",
                 [tool(country_info, read_only=True), tool(exchange_rate, read_only=True)],
                 name="money", playbook=pb)


def _tasks(*countries: str) -> list[LearningTask]:
    return [LearningTask(f"t-{c}", f"How many USD is the currency of {c} worth?",
                         COUNTRIES[c][1]) for c in countries]


async def test_a_routine_learned_mid_life_is_offered_from_the_next_run() -> None:
    pb = Playbook(":memory:", routines=True)
    agent = _agent(pb)  # built before any lesson exists: no routine then
    assert ROUTINE not in agent.tools
    await learn(_tasks("Freedonia", "Sylvania", "Oberland"), agent, playbook=pb,
                progress=False)
    assert [r.name for r in pb.routines_learned("money")] == [ROUTINE]
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert ROUTINE in result.trace.tools_offered
    # it stood in for the first call: the whole chain ran in that call
    first = result.trace.tool_calls[0]
    assert first.name == "country_info"
    assert (first.result or "").startswith("Ran country_info, then exchange_rate for you")
    assert "2.75" in result.output
    assert ROUTINE not in agent.tools  # the agent's own tools are as built
    pb.close()


async def test_nothing_is_rebuilt_while_no_routine_is_added() -> None:
    pb = Playbook(":memory:", routines=True)
    agent = _agent(pb)
    assert agent._own_core() == (agent._core, agent.model_settings)  # none learned yet
    await learn(_tasks("Freedonia", "Sylvania", "Oberland"), agent, playbook=pb,
                progress=False)
    first = agent._own_core()
    await agent.run("How many USD is the currency of Ruritania worth?")
    pb.flush()
    assert agent._own_core()[0] is first[0]  # the same core: a lookup, no rebuild
    # an agent built now has it among its own tools, and learns of no second copy
    again = _agent(pb)
    assert ROUTINE in again.tools and again._own_core()[0] is again._core
    pb.close()


async def test_no_routine_is_learned_into_an_agent_whose_playbook_offers_none() -> None:
    pb = Playbook(":memory:", routines=False)
    agent = _agent(pb)
    await learn(_tasks("Freedonia", "Sylvania", "Oberland"), agent, playbook=pb,
                progress=False)
    assert pb.routines_learned("money") == ()
    result = await agent.run("How many USD is the currency of Ruritania worth?")
    assert ROUTINE not in (result.trace.tools_offered or ())
    assert [c.name for c in result.trace.tool_calls] == ["country_info", "exchange_rate"]
    pb.close()

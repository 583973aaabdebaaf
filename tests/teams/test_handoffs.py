"""Handoffs: a transfer to another agent, which goes on with the conversation with its own
instructions, tools and output type; the result says which agent answered."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, ConfigurationError, Limits, Message, tool
from toolcycle.events import HandoffEvent
from toolcycle.testing import HistoryChecker, ScriptedModel, call

from .helpers import check_team, refund, reset_password


class Refund(BaseModel):
    order: str
    done: bool


def _system(messages: list[Message]) -> str:
    return messages[0].text if messages and messages[0].role == "system" else ""


async def test_triage_hands_the_conversation_to_a_specialist() -> None:
    seen_by_billing: list[tuple[str, list[str]]] = []

    def billing_script(messages: list[Message], settings: Any) -> Any:
        seen_by_billing.append((_system(messages), [t.name for t in settings.tools]))
        if messages[-1].role == "tool" and messages[-1].parts[0].content.startswith("refunded"):
            return call("final_result", {"order": "A1", "done": True})
        return call("refund", {"order": "A1"})

    billing = Agent(ScriptedModel(billing_script), "You handle refunds.", [refund],
                    name="billing", description="Refunds and invoices.", output=Refund)
    support = Agent(ScriptedModel(["unused"]), "You handle accounts.", [reset_password],
                    name="support")
    triage_model = ScriptedModel([[call("transfer_to_billing"), call("transfer_to_support")]])
    triage = Agent(triage_model, "You route requests.", name="triage",
                   handoffs=[billing, support])
    assert {t.name for t in triage_model_tools(triage)} == {"transfer_to_billing",
                                                             "transfer_to_support"}
    events: list[HandoffEvent] = []
    result = await triage.run("refund order A1", callbacks={"on_handoff": events.append})

    assert result.output == Refund(order="A1", done=True)
    assert result.agent_name == "billing" and result.trace.agent_name == "triage"
    assert [(e.from_agent, e.to_agent) for e in events] == [("triage", "billing")]
    assert result.trace.handoffs == [{"from": "triage", "to": "billing", "attempt": 1,
                                      "iteration": 1}]
    # billing saw its own instructions and tools, and the whole conversation
    assert seen_by_billing[0] == ("You handle refunds.", ["refund", "final_result"])
    transfer, second = result.tool_calls[:2]
    assert transfer.result == "Transferred to billing: it answers from here."
    assert second.error is not None and "handed to billing" in second.error
    assert result.messages[1].text == "refund order A1"
    HistoryChecker().check(result.messages)
    check_team(result)
    assert "-- handed from triage to billing after iteration 1" in result.trace.render()


def triage_model_tools(agent: Agent[Any, Any]) -> list[Any]:
    return [d for d in agent.model_settings.tools]


async def test_a_handoff_keeps_the_runs_limits_and_usage() -> None:
    looping = Agent(ScriptedModel(lambda m, s: "final" if s.tool_choice == "none"
                                  else call("refund", {"order": str(len(m))})),
                    tools=[refund], name="billing")
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), handoffs=[looping],
                   limits=Limits(max_iterations=3))
    result = await triage.run("loop")
    assert result.termination.reason == "max_iterations"  # the run's limit, across agents
    assert result.iterations == 4 and result.output == "final"
    assert result.usage.requests == 4
    check_team(result)


async def test_a_handoff_inside_a_member_run() -> None:
    specialist = Agent(ScriptedModel(["specialist says hi"]), name="specialist")
    desk = Agent(ScriptedModel([call("transfer_to_specialist")]), name="desk",
                 handoffs=[specialist])
    boss = Agent(ScriptedModel([call("desk", {"input": "hello"}), "boss done"]),
                 tools=[desk.as_tool()])
    result = await boss.run("go")
    assert result.tool_calls[0].result == "specialist says hi"
    assert [r.agent_name for r in result.runs] == ["specialist"]
    check_team(result)


def test_bad_handoffs_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel(["x"]), handoffs=["billing", Agent(ScriptedModel(["x"]),
                                                               name="bad name")])
    message = str(caught.value)
    assert "str is not an agent" in message and "'bad name'" in message
    billing = Agent(ScriptedModel(["x"]), name="billing")

    @tool
    def transfer_to_billing() -> str:
        """A clash."""
        return ""

    with pytest.raises(ConfigurationError, match="two tools are named"):
        Agent(ScriptedModel(["x"]), tools=[transfer_to_billing], handoffs=[billing])


async def test_handoffs_guardrail_trips_and_the_loop_guard_are_events_on_the_run_span(
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from toolcycle import RunContext, ToolCall, tool_guardrail
    from toolcycle.tracing.otel import OTelCallbacks

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    @tool_guardrail(on="arguments")
    def no_b(ctx: RunContext[Any], call: ToolCall) -> str | None:
        return "no B" if call.arguments == {"order": "B"} else None

    billing = Agent(ScriptedModel([call("refund", {"order": "B"})]
                                  + [call("refund", {"order": "A"})] * 4 + ["done"]),
                    tools=[refund], name="billing", guardrails=[no_b],
                    limits=Limits(max_iterations=20, max_repeats=2))
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), handoffs=[billing],
                   callbacks=OTelCallbacks(tracer_provider=provider),
                   limits=Limits(max_iterations=20))
    await triage.run("refunds")
    [run] = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    names = [e.name for e in run.events]
    assert names[:2] == ["handoff", "guardrail"] and "loop_guard" in names


async def test_a_handoff_from_an_agent_with_toolsets_keeps_the_target_s_tools() -> None:
    class Desk:
        """A toolset (as an MCP server is one), listed again before every request."""

        async def get_tools(self) -> list[Any]:
            return [reset_password]

        async def close(self) -> None:
            return None

    offered: list[list[str]] = []

    def billing_script(messages: list[Message], settings: Any) -> Any:
        offered.append([t.name for t in settings.tools])
        return "billing here" if len(offered) > 1 else call("refund", {"order": "A1"})

    billing = Agent(ScriptedModel(billing_script), tools=[refund], name="billing")
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), tools=[Desk()],
                   handoffs=[billing])
    result = await triage.run("refund A1")
    assert result.output == "billing here"
    assert offered == [["refund"], ["refund"]]  # not the first agent's toolset again


async def test_handoffs_go_one_way_along_the_chain_that_was_built() -> None:
    """A target offers only its own handoffs (docs/teams.md, "Handoffs go one way"): billing,
    which lists refunds alone, cannot hand back to triage (its model's try is an unknown
    tool), and each link of the chain is one handoff."""
    refunds = Agent(ScriptedModel(["refund done"]), name="refunds")
    offered: list[list[str]] = []

    def billing_reply(messages: list[Message], settings: Any) -> Any:
        offered.append([t.name for t in settings.tools])
        return call("transfer_to_triage" if len(offered) == 1 else "transfer_to_refunds")

    billing = Agent(ScriptedModel(billing_reply), name="billing", handoffs=[refunds])
    triage = Agent(ScriptedModel([call("transfer_to_billing")]), name="triage",
                   handoffs=[billing])
    result = await triage.run("refund A1")
    assert offered[0] == ["transfer_to_refunds"]
    assert "Unknown tool `transfer_to_triage`" in (result.tool_calls[1].error or "")
    assert [(h["from"], h["to"]) for h in result.trace.handoffs] == [
        ("triage", "billing"), ("billing", "refunds")]
    assert result.output == "refund done" and result.agent_name == "refunds"
    check_team(result)

"""The one typed interface between the engine and a playbook (toolcycle.run.plan): an agent
asks its playbook for each run's frozen plan and applies it whole; a playbook that lacks a
method of the interface is refused when the agent is built, never probed by name later; a
failed call's kind is a typed field of the trace, not words to parse."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from toolcycle import Agent, ConfigurationError, Tool, tool
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.result import Termination
from toolcycle.run.plan import RunPlan
from toolcycle.tracing.trace import Trace


def lookup(name: str) -> str:
    """Look a customer up by name."""
    return f"{name} is customer C-1"


def ledger(customer: str) -> str:
    """A customer's balance."""
    return "balance 12.50"


def spare(x: str) -> str:
    """Not for this task."""
    return "nothing"


class PlanningHook:
    """A playbook of its own (no toolcycle.playbook in it): it implements the interface whole
    and plans every run alike."""

    def __init__(self, plan: RunPlan) -> None:
        self._plan = plan
        self.attached: list[tuple[str, frozenset[str], bool]] = []
        self.planned: list[tuple[str, frozenset[str], bool]] = []
        self.observed: list[Trace] = []

    def attach(self, agent_name: str, tools: Mapping[str, Tool[Any]],
               reserved: frozenset[str], *, new_agent: bool) -> list[Tool[Any]]:
        self.attached.append((agent_name, frozenset(tools), new_agent))
        return []

    def routines_learned(self, agent_name: str) -> tuple[Tool[Any], ...]:
        return ()

    def plan(self, task: str, agent_name: str, offered: frozenset[str], *,
             gated: bool) -> RunPlan:
        self.planned.append((task, offered, gated))
        return self._plan

    def instructions_for(self, task: str, agent_name: str, tool_names: list[str]
                         ) -> tuple[str, list[str]]:
        return "", []

    def observe(self, trace: Trace, termination: Termination | None) -> None:
        self.observed.append(trace)


CHOICES: list[Any] = []
OFFERED: list[list[str]] = []


def model_answering_after_one_call(messages: list[Message], settings: ModelSettings) -> Any:
    CHOICES.append(settings.tool_choice)
    OFFERED.append([d.name for d in settings.tools or ()])
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if any("balance" in r for r in results):
        return f"Found: {results[-1]}"
    return call("ledger", {"customer": "C-1"})


def test_the_plan_is_applied_whole() -> None:
    """Withheld tools are not offered, the stand-in answers its tool's calls, the head start
    is made before the first request, and the answer is asked for once the plan says so."""
    standing = tool(lambda customer: "balance 99.00 (stood in)", name="ledger",
                    description="A customer's balance.")
    hook = PlanningHook(RunPlan(
        withheld=frozenset({"spare"}), stand_ins=MappingProxyType({"ledger": standing}),
        head_start=("lookup", {"name": "Ada"}),
        answer_when=lambda trace: any(c.name == "ledger" for c in trace.tool_calls)))
    CHOICES.clear()
    OFFERED.clear()
    agent = Agent(ScriptedModel(model_answering_after_one_call), "Answer.",
                  [tool(lookup), tool(ledger), tool(spare)], name="desk", playbook=hook)
    result = agent.run_sync("What does Ada owe?")
    assert hook.attached == [("desk", frozenset({"lookup", "ledger", "spare"}), True)]
    assert hook.planned == [("What does Ada owe?", frozenset({"lookup", "ledger", "spare"}),
                             False)]
    assert [c.name for c in result.trace.tool_calls] == ["lookup", "ledger"]
    assert result.trace.tool_calls[1].result == "balance 99.00 (stood in)"
    assert "spare" not in OFFERED[0] and result.trace.tools_offered == ["lookup", "ledger"]
    assert result.output == "Found: balance 99.00 (stood in)"
    assert CHOICES == ["auto", "none"]  # asked for the answer once the ledger was read


def model_answering_from_the_first_result(messages: list[Message],
                                          settings: ModelSettings) -> Any:
    """Looks the customer up, then answers from the lookup unless a call is required."""
    CHOICES.append(settings.tool_choice)
    results = [p.content for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("lookup", {"name": "Ada"})
    if settings.tool_choice == "required" and not any("balance" in r for r in results):
        return call("ledger", {"customer": "C-1"})
    return f"Found: {results[-1]}"


def _begun_not_done(trace: Trace) -> bool:
    names = [c.name for c in trace.tool_calls]
    return names[-1:] == ["lookup"] and "ledger" not in names


@pytest.mark.parametrize(("call_while", "calls", "choices"), [
    (_begun_not_done, ["lookup", "ledger"], ["auto", "required", "auto"]),
    (None, ["lookup"], ["auto", "auto"]),  # without it the model answers from the lookup
])
def test_a_sequence_begun_and_not_finished_requires_the_next_call(
        call_while: Any, calls: list[str], choices: list[str]) -> None:
    """RunPlan.call_while: after a turn that left the shown sequence begun and not finished,
    the next request requires a call (which call is the model's), then the run goes on as
    before."""
    CHOICES.clear()
    agent = Agent(ScriptedModel(model_answering_from_the_first_result), "Answer.",
                  [tool(lookup), tool(ledger)], name="desk",
                  playbook=PlanningHook(RunPlan(call_while=call_while)))
    result = agent.run_sync("What does Ada owe?")
    assert [c.name for c in result.trace.tool_calls] == calls
    assert choices == CHOICES


def test_under_approval_the_plan_is_asked_gated_and_neither_stands_in_nor_starts() -> None:
    from toolcycle.approval import Approve
    standing = tool(lambda customer: "balance (stood in)", name="ledger", description="d")
    hook = PlanningHook(RunPlan(stand_ins=MappingProxyType({"ledger": standing}),
                                head_start=("lookup", {"name": "Ada"})))
    agent = Agent(ScriptedModel(model_answering_after_one_call), "Answer.",
                  [tool(lookup), tool(ledger)], name="desk", playbook=hook,
                  approval=lambda ctx, request: Approve())
    result = agent.run_sync("What does Ada owe?")
    assert hook.planned[0][2] is True
    assert [(c.name, c.result) for c in result.trace.tool_calls] == [
        ("ledger", "balance 12.50")]


def test_a_playbook_lacking_part_of_the_interface_is_refused_when_built() -> None:
    class Advises:
        def instructions_for(self, task: str, agent_name: str, tool_names: list[str]
                             ) -> tuple[str, list[str]]:
            return "", []

        def observe(self, trace: Trace, termination: Termination | None) -> None:
            pass

    with pytest.raises(ConfigurationError) as raised:
        Agent(ScriptedModel(["ok"]), "Answer.", [tool(lookup)],
              playbook=Advises())  # type: ignore[arg-type]
    assert "lacks attach, routines_learned, plan" in str(raised.value)


def test_a_failed_calls_kind_is_a_typed_field_of_the_trace() -> None:
    async def slow(name: str) -> str:
        """Never answers in time."""
        await asyncio.sleep(5)
        return name

    def broken(name: str) -> str:
        """Always fails."""
        raise LookupError("no such customer")

    replies = iter([call("slow", {"name": "Ada"}), call("broken", {"name": "Ada"}),
                    call("lookup", {"nom": "Ada"}), call("nowhere", {}), "done"])
    agent = Agent(ScriptedModel(lambda messages, settings: next(replies)), "Answer.",
                  [tool(slow, timeout=0.05), tool(broken), tool(lookup)])
    result = agent.run_sync("Who is Ada?")
    kinds = [(c.name, c.error_type) for c in result.trace.tool_calls]
    assert kinds == [("slow", "timeout"), ("broken", "LookupError"),
                     ("lookup", "invalid_arguments"), ("nowhere", "unknown_tool")]
    again = Trace.from_dict(result.trace.to_dict())  # stored and read back
    assert [c.error_type for c in again.tool_calls] == [k for _, k in kinds]
    old = result.trace.to_dict()
    for step in old["steps"]:  # a trace written before the field was recorded
        for record in step["tool_calls"]:
            record.pop("error_type")
    assert [c.error_type for c in Trace.from_dict(old).tool_calls] == [None] * 4

"""What a stand-in did reaches the learner as a typed record (playbook.routine_result.StandIn),
never read back out of an answer's text (issue 69).

A tool's own result may read like a stand-in's answer: an MCP server, a proxy, a tool that
wraps another. Read from the text, such a call was taken for a fallback's: not counted in its
tool's statistics, and the lines inside it counted as calls of other tools."""

from __future__ import annotations

import json

from toolcycle import Agent, tool
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.routine_result import noted
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

#: A result a tool wrote itself, in the words a fallback's answer uses.
LOOKALIKE = ("Ran service_history for you, since delay_feed failed: RuntimeError: down "
             "(already called; it answered such tasks in earlier runs; answer from its "
             'result):\nservice_history({"service": "RX1"}) -> RX1: delay 12 min')


def _trace(run_id: str) -> Trace:
    record = ToolCallRecord("c1", "delay_feed", {"service": "RX1"}, 1, result=LOOKALIKE,
                            duration_ms=30.0)
    trace = Trace(run_id, agent_name="rail", user_prompt="How late is RX1?",
                  steps=[Step(1, 1, tool_calls=[record])])
    trace.tools_offered = ["delay_feed", "service_history"]
    trace.termination = {"reason": "answered", "action": "answered"}
    return trace


def test_a_tools_own_result_in_a_stand_ins_words_is_the_tools_call() -> None:
    pb = Playbook(":memory:", routines=True)
    try:
        pb.learn_from(_trace("lookalike-1"), True)
        stats = pb.tool_stats("rail")
        assert set(stats) == {"delay_feed"}  # no step of service_history read from the text
        assert (stats["delay_feed"].calls, stats["delay_feed"].misses) == (1, 0)
    finally:
        pb.close()


@tool(read_only=True)
def find_id(name: str) -> str:
    """The id of a person, by name."""
    return "P-7"


@tool(read_only=True)
def detail(id: str) -> str:
    """A person's record, by id."""
    return f"{id}: desk 42"


async def test_a_routine_run_by_the_model_notes_its_steps_for_its_run() -> None:
    """The routine's note is kept on its call's record in the trace, holding each call it
    made; it survives the trace's round trip through JSON (a stored trace, another
    process)."""
    from toolcycle.playbook.routine import Feed, Routine, routine_tool

    routine = Routine("find_id_then_detail", ("find_id", "detail"), (Feed("id", "", ""),),
                      "s1", 2)
    made = routine_tool(routine, {"find_id": find_id, "detail": detail})
    assert made is not None
    agent = Agent(ScriptedModel([call(made.name, {"name": "Ann"}), "done"]), tools=[made])
    result = await agent.run("Which desk is Ann at?")
    [act] = noted(result.trace).values()
    assert (act.kind, act.tool, act.ok) == ("routine", made.name, True)
    assert [(s.tool, s.arguments, s.status) for s in act.steps] == [
        ("find_id", {"name": "Ann"}, "ok"), ("detail", {"id": "P-7"}, "ok")]
    stored = Trace.from_dict(json.loads(json.dumps(result.trace.to_dict())))
    assert noted(stored) == noted(result.trace)

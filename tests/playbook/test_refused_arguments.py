"""A call the loop refused for its arguments teaches how to call the tool (reflector.
expected_arguments, the ``schema`` repair), and the next run offered the tool reads it in the
tool's description (tool_lessons.py)."""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn

LOCKERS = {"Kelby": 12, "Ashmoor": 4, "Brackwater": 9, "Dunhallow": 0}
CHOICES: list[Any] = []


def station_info(station: str, topic: str) -> str:
    """Information about a railway station on a topic (platforms, opening hours, parking...)."""
    return "[]" if topic in ("lockers", "parking") else json.dumps({"platforms": 4})


def amenities_register(station: str) -> str:
    """The register of station amenities."""
    return json.dumps({"station": station, "lockers": LOCKERS.get(station, 0)})


def web_search(query: str) -> str:
    """Search the public web."""
    return "[]"


def topic_everywhere(messages: list[Message], settings: ModelSettings) -> Any:
    """Passes station_info's ``topic`` to amenities_register too (the 1.5B on `rail`) unless
    the tool is named for it or its description says how to call it; gives up after a web
    search."""
    CHOICES.append(settings.tool_choice)
    prompt = next(m.text for m in messages if m.role == "user")
    station = prompt.split(" at ")[-1].split()[0]
    results = [str(getattr(p, "content", "")) for m in messages if m.role == "tool"
               for p in m.parts]
    if results and '"lockers"' in results[-1]:
        return str(json.loads(results[-1])["lockers"])
    described = {d.name: d.description for d in settings.tools or ()}
    if not results:
        if settings.tool_choice == "amenities_register" or "with no other arguments" in (
                described.get("amenities_register", "")):
            return call("amenities_register", {"station": station})
        return call("amenities_register", {"station": station, "topic": "lockers"})
    if len(results) == 1:
        return call("web_search", {"query": prompt})
    return "There are no lockers."


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(topic_everywhere), "Look station data up with the tools.",
                 [tool(station_info, read_only=True), tool(amenities_register, read_only=True),
                  tool(web_search, read_only=True)], name="rail", playbook=pb)


async def test_a_refused_call_teaches_the_next_run_to_call_the_tool_right() -> None:
    pb = Playbook(":memory:", routines=True)
    tasks = [LearningTask(f"t{i}", f"How many lockers are there at {s} station?",
                          str(LOCKERS[s])) for i, s in enumerate(["Kelby", "Ashmoor",
                                                                  "Brackwater"])]
    report = await learn(tasks, _agent(pb), playbook=pb, progress=False)
    assert report.success_rate == 0.0
    [pitfall] = [s for s in pb.strategies("rail") if s.tools == ["amenities_register"]]
    assert pitfall.advice.startswith(
        "Call amenities_register(station) with no other arguments (else amenities_register "
        "fails with: Invalid arguments: (root): Additional properties are not allowed")
    CHOICES.clear()
    result = await _agent(pb).run("How many lockers are there at Dunhallow station?")
    assert CHOICES[0] == "auto"  # a lesson about the tool is no task's first call
    assert pitfall.id in result.trace.strategies_shown  # in the tool's description
    assert [c.args for c in result.trace.tool_calls] == [{"station": "Dunhallow"}]
    assert result.output == "0"

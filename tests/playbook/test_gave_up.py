"""Learning that this agent's answers after misses only are wrong, and acting on it
(reflector.GAVE_UP, Playbook.answers_need_a_call(..., GAVE_UP), RoutineOffer.call_again).

`depot` (JSON, at 94309cb): the 1.5B met the stock tool's 503, the catalog's ``null`` or the
freight tool's format error and answered at once that the figure was unavailable, in most
train and test runs of both arms."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.curator import Curator
from toolcycle.playbook.offer import CALLS_AFTER_MISSES, missed_so_far
from toolcycle.playbook.reflector import GAVE_UP, analyse, gave_up, reflect
from toolcycle.playbook.store import SQLitePlaybookStore
from toolcycle.playbook.strategy import Strategy, strategy_id
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

LESSON = strategy_id("pitfall", "depot", [], GAVE_UP)


def _trace(prompt: str, results: list[tuple[str | None, str | None]], *,
           action: str = "answered") -> Trace:
    """One turn per (result, error) of a call of ``inventory_live``."""
    steps = [Step(iteration=i, attempt=1, tool_calls=[ToolCallRecord(
        call_id=f"c{i}", name="inventory_live", args={"item": f"x{i}"}, iteration=i,
        result=result, error=error)]) for i, (result, error) in enumerate(results, start=1)]
    return Trace(run_id=prompt, agent_name="depot", user_prompt=prompt, steps=steps,
                 termination={"reason": "completed", "action": action},
                 tools_offered=["inventory_live", "warehouse_ledger"])


DOWN = (None, "Tool `inventory_live` failed: ConnectionError: 503 Service Unavailable")


@pytest.mark.parametrize(("results", "action", "lesson"), [
    ([DOWN], "answered", True),
    ([DOWN, ("null", None)], "answered", True),  # an empty result is a miss too
    ([DOWN, ('{"units": 42}', None)], "answered", False),  # it found something
    ([], "answered", False),  # no call at all: the no-call lesson's case
    ([DOWN], "final_answer", False),  # a limit ended it, not the model
])
def test_the_reflector_sees_an_answer_given_after_misses_only(
        results: list[tuple[str | None, str | None]], action: str, lesson: bool) -> None:
    trace = _trace("How many wrenches are in stock?", results, action=action)
    assert gave_up(trace, analyse(trace, False).calls) is lesson
    insights = [i for i in reflect(trace, success=False, domain="depot") if i.detail == GAVE_UP]
    assert len(insights) == lesson
    if lesson:
        assert insights[0].tools == [] and insights[0].kind == "pitfall"


def _feed(store: SQLitePlaybookStore, curator: Curator, prompt: str, *, right: bool) -> None:
    trace = _trace(prompt, [DOWN])
    curator.apply(store, [i for i in reflect(trace, success=right, domain="depot")
                          if i.detail == GAVE_UP])


def test_wrong_answers_after_misses_make_the_lesson_and_right_ones_hold_it_back(
        tmp_path: Any) -> None:
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator()
    _feed(store, curator, "Is the Quillan goggle discontinued?", right=True)  # "none left"
    for item in ("wrench", "reel", "jack", "press"):
        _feed(store, curator, f"How many units of the {item} are in stock?", right=False)
    assert store.get(LESSON) is None  # 1 right of 5: a fifth
    _feed(store, curator, "How many units of the clamp are in stock?", right=False)
    lesson = store.get(LESSON)
    assert lesson is not None and lesson.status == "active" and lesson.applies_when == []
    assert store.search("How many units of the clamp are in stock?", "depot", None) == []


def test_the_test_asks_for_a_call_after_misses_only_for_the_first_turns() -> None:
    assert missed_so_far(_trace("q", [DOWN]))
    assert missed_so_far(_trace("q", [DOWN] * CALLS_AFTER_MISSES))
    assert not missed_so_far(_trace("q", [DOWN] * (CALLS_AFTER_MISSES + 1)))  # then free
    assert not missed_so_far(_trace("q", [DOWN, ('{"units": 42}', None)]))
    assert not missed_so_far(_trace("q", []))


def inventory_live(item: str) -> str:
    """Live stock of an item."""
    raise ConnectionError("503 Service Unavailable")


def warehouse_ledger(item: str) -> str:
    """The ledger's count of an item."""
    return f"{item}: 42 units"


def _giving_up(choices: list[Any]) -> ScriptedModel:
    """Answers "unavailable" after a failure unless made to call; made to, it calls the
    ledger (what a small model does when told to try another tool)."""

    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        choices.append(settings.tool_choice)
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("inventory_live", {"item": "wrench"})
        if results[-1].is_error and settings.tool_choice == "required":
            return call("warehouse_ledger", {"item": "wrench"})
        return "unavailable" if results[-1].is_error else results[-1].content

    return ScriptedModel(reply)


def _agent(pb: Playbook | None, choices: list[Any]) -> Agent[Any, str]:
    return Agent(_giving_up(choices), "Answer with the tools.",
                 [tool(inventory_live, read_only=True), tool(warehouse_ledger, read_only=True)],
                 name="depot", playbook=pb)


def _learned(routines: bool = True) -> Playbook:
    pb = Playbook(":memory:", routines=routines)
    pb.store.put([Strategy(id=LESSON, domain="depot", kind="pitfall", tools=[],
                           advice="(the gave-up lesson)", detail=GAVE_UP, support=3)])
    return pb


async def test_a_learned_lesson_makes_a_run_call_again_after_misses() -> None:
    choices: list[Any] = []
    result = await _agent(_learned(), choices).run("How many wrenches are in stock?")
    assert result.output == "wrench: 42 units"
    assert choices == ["auto", "required", "auto"]
    # without the lesson (or without routines) the model gives up as before
    for pb in (None, Playbook(":memory:", routines=True), _learned(routines=False)):
        choices.clear()
        result = await _agent(pb, choices).run("How many wrenches are in stock?")
        assert result.output == "unavailable" and choices == ["auto", "auto"]


@pytest.mark.parametrize(("error", "advice"), [
    ("Tool `inventory_live` failed: ConnectionError: inventory service unreachable: 503 "
     "Service Unavailable", "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: RuntimeError: 502 Bad Gateway",
     "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: LookupError: no item 'x'",
     "Check the arguments against what earlier tools returned."),
])
def test_a_pitfall_without_a_repair_says_whether_the_service_is_down(error: str,
                                                                     advice: str) -> None:
    """"Check the arguments" was the advice for a 503 (depot, JSON, at 94309cb): no argument
    was wrong, and no earlier tool had returned anything to check them against."""
    trace = _trace("How many wrenches are in stock?", [(None, error)])
    [pitfall] = [i for i in reflect(trace, success=False, domain="depot") if i.tools]
    assert pitfall.advice.endswith(advice)

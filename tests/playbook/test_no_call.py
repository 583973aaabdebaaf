"""Learning that this agent's answers without a tool call are wrong, and acting on it
(reflector.NO_CALL, curator._no_call_shown, Playbook.answers_need_a_call)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.curator import Curator
from toolcycle.playbook.reflector import NO_CALL, answered_without_a_call, reflect
from toolcycle.playbook.store import SQLitePlaybookStore
from toolcycle.playbook.strategy import strategy_id
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

from .test_first_call import CHOICES, _agent
from .test_repair import COUNTRIES

LESSON = strategy_id("pitfall", "money", [], NO_CALL)


def _trace(prompt: str, *, calls: int = 0, action: str = "answered",
           offered: list[str] | None = None, run_id: str = "") -> Trace:
    records = [ToolCallRecord(call_id=f"c{i}", name="country_info", args={"country": "X"},
                              iteration=1, result="X: currency code XXK") for i in range(calls)]
    return Trace(run_id=run_id or prompt, agent_name="money", user_prompt=prompt,
                 steps=[Step(iteration=1, attempt=1, tool_calls=records)],
                 termination={"reason": "completed", "action": action},
                 tools_offered=offered)


@pytest.mark.parametrize(("trace", "lesson"), [
    (_trace("What is the Freedonian rate?"), True),
    (_trace("What is the Freedonian rate?", offered=["country_info"]), True),
    (_trace("What is the Freedonian rate?", calls=1), False),  # it looked something up
    (_trace("What is the Freedonian rate?", action="partial"), False),  # a limit, no answer
    (_trace("What is the Freedonian rate?", offered=[]), False),  # no tool to call
])
def test_the_reflector_sees_an_answer_given_without_a_call(trace: Trace, lesson: bool) -> None:
    assert answered_without_a_call(trace) is lesson
    insights = [i for i in reflect(trace, success=False, domain="money") if i.detail == NO_CALL]
    assert len(insights) == lesson
    if lesson:
        [insight] = insights
        assert insight.kind == "pitfall" and insight.tools == [] and not insight.success


def _feed(store: SQLitePlaybookStore, curator: Curator, prompt: str, *, right: bool) -> None:
    trace = _trace(prompt)
    curator.apply(store, [i for i in reflect(trace, success=right, domain="money")
                          if i.detail == NO_CALL])


def test_three_wrong_answers_of_different_tasks_make_the_lesson(tmp_path: Any) -> None:
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator()
    for country in ("Freedonia", "Sylvania"):
        _feed(store, curator, f"How much is the currency of {country} worth?", right=False)
    _feed(store, curator, "How much is the currency of Sylvania worth?", right=False)  # again
    assert store.get(LESSON) is None
    _feed(store, curator, "How much is the currency of Oberland worth?", right=False)
    lesson = store.get(LESSON)
    assert lesson is not None and lesson.status == "active" and lesson.support == 3
    # about the model, not a kind of task: it matches no task's words, so it is never
    # injected into a prompt (the first call does its work) and never judged by its uses
    assert lesson.applies_when == [] and lesson.tools == []
    assert store.search("How much is the currency of Oberland worth?", "money", None) == []


def test_right_answers_without_a_call_hold_the_lesson_back(tmp_path: Any) -> None:
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator()
    _feed(store, curator, "What is the capital of France?", right=True)
    for country in ("Freedonia", "Sylvania", "Oberland", "Ruritania"):
        _feed(store, curator, f"How much is the currency of {country} worth?", right=False)
    assert store.get(LESSON) is None  # 1 right of 5: a fifth
    _feed(store, curator, "How much is the currency of Elbonia worth?", right=False)
    assert store.get(LESSON) is not None  # 1 right of 6


async def test_a_learned_lesson_makes_every_run_begin_with_a_call() -> None:
    pb = Playbook(":memory:", routines=True)
    tasks = [LearningTask(f"t{i}", f"How many USD is the currency of {c} worth?",
                          COUNTRIES[c][1]) for i, c in enumerate(["Freedonia", "Sylvania",
                                                                  "Oberland"])]
    report = await learn(tasks, _agent(pb), playbook=pb, progress=False)
    assert report.success_rate == 0.0  # every answer from memory, every one wrong
    assert pb.answers_need_a_call("money")
    assert pb.strategies("money")[0].id == LESSON
    CHOICES.clear()
    result = await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert CHOICES == ["required", "auto", "auto"]  # looked up, then free to go on
    assert result.output == "Worth 2.75 USD"
    assert result.trace.strategies_shown == []  # nothing injected: no tokens spent on it


async def test_without_routines_the_lesson_is_learned_but_forces_nothing() -> None:
    pb = Playbook(":memory:", routines=False)
    tasks = [LearningTask(f"t{i}", f"How many USD is the currency of {c} worth?",
                          COUNTRIES[c][1]) for i, c in enumerate(["Freedonia", "Sylvania",
                                                                  "Oberland"])]
    await learn(tasks, _agent(pb), playbook=pb, progress=False)
    assert pb.answers_need_a_call("money")
    CHOICES.clear()
    await _agent(pb).run("How many USD is the currency of Ruritania worth?")
    assert CHOICES == ["auto"]



def test_the_lesson_does_not_go_stale(tmp_path: Any) -> None:
    """While it holds, runs begin with a call, so nothing can confirm it again: the stale rule
    that retires unconfirmed strategies would retire it for working."""
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator(stale_after_s=60.0)
    for country in ("Freedonia", "Sylvania", "Oberland"):
        _feed(store, curator, f"How much is the currency of {country} worth?", right=False)
    lesson = store.get(LESSON)
    assert lesson is not None
    assert curator.retire(store, "money", now=lesson.updated_at + 3600.0) == []
    lesson = store.get(LESSON)
    assert lesson is not None and lesson.status == "active"

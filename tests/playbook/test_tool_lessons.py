"""A lesson about a tool lives with that tool (toolcycle/playbook/tool_lessons.py).

It reaches every run offered the tool, in its description, whatever the task's words; it
reaches no run's instructions, and no run not offered the tool, whatever words they share.
Why: on a generated suite (bench/learning_gen, seed 1001, ReAct) a date-format lesson learned
from "attendance count" tasks about a course was shown, through the word "course", to a task
of another kind, which then failed; a task using the tool in other words was never shown it.
"""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.strategy import Repair
from toolcycle.playbook.tool_lessons import NOTE_HEADER, in_play, is_tool_lesson
from toolcycle.tools import ToolDefinition

DATE_LESSON = Strategy(
    id="s-daily-date", domain="campus", kind="pitfall", tools=["faculty_daily"],
    advice='faculty_daily fails with: invalid day …: expected YYYYMMDD. Pass day like '
           '"20260516".', applies_when=["attendance", "count", "course"],
    detail="invalid day …: expected YYYYMMDD|argument::day:99999999", support=3,
    error_class="invalid day …: expected YYYYMMDD",
    repair=Repair("argument", "faculty_daily", argument="day", example="20260516"))
ENROLMENT_SEQUENCE = Strategy(
    id="s-enrolled", domain="campus", kind="sequence", tools=["faculty_history"],
    advice="Call faculty_history(course), then answer.",
    applies_when=["enrolled", "students", "course"], support=3)


def faculty_daily(day: str) -> str:
    """Daily visitor figures of the campus (gym, library, halls)."""
    if not (day.isdigit() and len(day) == 8):
        raise ValueError(f"invalid day {day!r}: expected YYYYMMDD")
    return '{"visitors": 412}'


def faculty_history(course: str) -> str:
    """Recorded data of a course."""
    return '{"enrolled": 265}'


def faculty_live(course: str) -> str:
    """Live data of a course."""
    raise TimeoutError("faculty_live timed out after 5.0 s")


class Seen:
    """A scripted model that answers at once and keeps what each run's first request held."""

    def __init__(self) -> None:
        self.system: list[str] = []
        self.tools: list[dict[str, str]] = []

    def __call__(self, messages: list[Message], settings: ModelSettings) -> Any:
        self.system.append(messages[0].text if messages[0].role == "system" else "")
        offered: tuple[ToolDefinition, ...] = tuple(settings.tools or ())
        self.tools.append({d.name: d.description for d in offered})
        return "done"


def _playbook(*strategies: Strategy) -> Playbook:
    pb = Playbook(":memory:", learn=False)
    pb.store.put(list(strategies))
    return pb


def test_a_tool_lesson_reaches_a_task_worded_in_another_domain_through_the_tool() -> None:
    """No word of "How many visitors did the gym have on 16 May 2026?" is one the lesson was
    learned from; the task is offered the tool, so the tool's description carries it."""
    seen = Seen()
    pb = _playbook(DATE_LESSON)
    agent = Agent(ScriptedModel(seen), "Answer with the tools.",
                  [faculty_daily, faculty_history], name="campus", playbook=pb)
    result = agent.run_sync("How many visitors did the gym have on 16 May 2026?")
    assert 'Pass day like "20260516"' in seen.tools[0]["faculty_daily"]
    assert seen.tools[0]["faculty_daily"].startswith("Daily visitor figures")
    assert NOTE_HEADER not in seen.tools[0]["faculty_history"]
    assert "20260516" not in seen.system[0]  # with the tool, not in the instructions
    assert result.trace.strategies_shown == ["s-daily-date"]  # judged like any shown lesson


def test_a_task_sharing_a_tool_lessons_words_is_not_told_it_in_its_instructions() -> None:
    """"Course BI8151: how many enrolled students?" shares "course" with the date lesson:
    it gets the lesson of its own kind in its instructions, the date lesson only where the
    date tool is described."""
    seen = Seen()
    pb = _playbook(DATE_LESSON, ENROLMENT_SEQUENCE)
    agent = Agent(ScriptedModel(seen), "Answer with the tools.",
                  [faculty_daily, faculty_history, faculty_live], name="campus", playbook=pb)
    agent.run_sync("Course BI8151: how many enrolled students does it have?")
    assert "faculty_history(course)" in seen.system[0]
    assert "YYYYMMDD" not in seen.system[0]
    assert "YYYYMMDD" not in seen.tools[0]["faculty_history"] + seen.tools[0]["faculty_live"]


def test_a_tool_lesson_never_reaches_a_run_not_offered_its_tool() -> None:
    """Every word of the task is one the lesson applies to; the run is not offered
    faculty_daily, so nothing of the lesson reaches it."""
    seen = Seen()
    pb = _playbook(DATE_LESSON)
    agent = Agent(ScriptedModel(seen), "Answer with the tools.",
                  [faculty_history, faculty_live], name="campus", playbook=pb)
    result = agent.run_sync("Attendance count of the course BI8151?")
    assert "YYYYMMDD" not in seen.system[0]
    assert all("YYYYMMDD" not in text for text in seen.tools[0].values())
    assert result.trace.strategies_shown == []
    assert in_play(pb.store, "campus", ["faculty_history", "faculty_live"]) == []


def test_a_note_on_a_tool_the_shown_sequence_excludes_is_withheld_from_that_run() -> None:
    """Shown "Call faculty_history(course), then answer. Do not use faculty_daily for this
    kind of task.", a run is not shown faculty_daily's note: it only names the tool again,
    and the 1.5B, told not to use a tool whose note it read, called that tool first and
    wandered for ten turns (held-out seed 1012, ReAct, b79e5b7). A run shown no such
    sequence still gets the note with the tool."""
    excluding = Strategy(
        id="s-enrolled-skip", domain="campus", kind="sequence", tools=["faculty_history"],
        advice="Call faculty_history(course), then answer. Do not use faculty_daily for this "
               "kind of task.", skips=["faculty_daily"],
        applies_when=["enrolled", "students", "course"], support=3)
    seen = Seen()
    pb = _playbook(DATE_LESSON, excluding)
    agent = Agent(ScriptedModel(seen), "Answer with the tools.",
                  [faculty_daily, faculty_history], name="campus", playbook=pb)
    shown = agent.run_sync("Course BI8151: how many enrolled students does it have?")
    assert "Do not use faculty_daily" in seen.system[0]
    assert NOTE_HEADER not in seen.tools[0]["faculty_daily"]
    assert shown.trace.strategies_shown == ["s-enrolled-skip"]
    other = agent.run_sync("How many visitors did the gym have on 16 May 2026?")
    assert 'Pass day like "20260516"' in seen.tools[1]["faculty_daily"]
    assert other.trace.strategies_shown == ["s-daily-date"]


def test_which_lessons_are_about_a_tool() -> None:
    """Errors of a tool are its lessons; a dead end ("found nothing for this kind of task")
    and a sequence are lessons about tasks; a repair through another tool is in play only
    where that tool is offered too."""
    dead = Strategy(id="s-dead", domain="campus", kind="pitfall", tools=["faculty_info"],
                    advice="faculty_info found nothing for this kind of task.",
                    detail="found nothing", error_class="found nothing", support=3)
    timeout = Strategy(id="s-live", domain="campus", kind="pitfall",
                       tools=["faculty_live", "faculty_history"], support=3,
                       advice="faculty_live times out. Call faculty_history(course) instead.",
                       detail="timed out|alternative:faculty_history:course",
                       error_class="timed out",
                       repair=Repair("alternative", "faculty_live", via="faculty_history",
                                     argument="course", via_args=("course",)))
    assert is_tool_lesson(DATE_LESSON) and is_tool_lesson(timeout)
    assert not is_tool_lesson(dead) and not is_tool_lesson(ENROLMENT_SEQUENCE)
    pb = _playbook(DATE_LESSON, dead, timeout, ENROLMENT_SEQUENCE)
    assert [s.id for s in in_play(pb.store, "campus", ["faculty_live"])] == []
    assert [s.id for s in in_play(pb.store, "campus", ["faculty_live", "faculty_history"])
            ] == ["s-live"]
    assert in_play(pb.store, "elsewhere", ["faculty_daily"]) == []  # another domain's tool


def dates_wrong_first(messages: list[Message], settings: ModelSettings) -> Any:
    """Writes the task's date as the task words it, then as the error asks, then answers."""
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("faculty_daily", {"day": "16 May 2026"})
    if results[-1].is_error:
        return call("faculty_daily", {"day": "20260516"})
    return "Figure: " + results[-1].content


async def test_a_format_learned_from_runs_reaches_a_task_in_other_words_with_its_tool() -> None:
    pb = Playbook(":memory:")
    agent = Agent(ScriptedModel(dates_wrong_first), "Answer with the tools.",
                  [faculty_daily, faculty_history], name="campus", playbook=pb)
    for course in ("BI8151", "CH2210", "MA4410"):
        await agent.run(f"Attendance count of course {course} on 16 May 2026?")
    assert pb.flush(30)
    [lesson] = [s for s in pb.strategies("campus") if s.kind == "pitfall"]
    assert lesson.about_tool is True and "course" in lesson.applies_when
    seen = Seen()
    frozen = Playbook(pb.store, learn=False)
    result = await Agent(ScriptedModel(seen), "Answer with the tools.",
                         [faculty_daily, faculty_history], name="campus",
                         playbook=frozen).run("How busy was the gym on 3 June 2026?")
    # the format as learned (from 16 May), written as this task's own day
    assert 'Pass day like "20260603"' in seen.tools[0]["faculty_daily"]
    assert result.trace.strategies_shown == [lesson.id]


def test_a_note_quoting_a_multi_line_error_stays_on_its_tools_line() -> None:
    """The note joins the description as learned; every text protocol's tool list shows
    the two on the tool's one line (the shared rule, models/text/describe.one_line)."""
    from toolcycle.models.text.describe import describe_tools
    from toolcycle.models.text.hermes import tool_line
    from toolcycle.run.toolsets import with_notes

    tool = ToolDefinition("daily", "Daily figures.", {"type": "object", "properties": {}})
    note = "Learned: daily fails with: bad day\n  expected\r\nYYYYMMDD"
    [noted] = with_notes((tool,), {"daily": note})
    assert noted.description == f"Daily figures. {note}"
    shown = "Daily figures. Learned: daily fails with: bad day expected YYYYMMDD"
    assert describe_tools([noted]) == f"- daily(): {shown}"
    assert json.loads(tool_line(noted))["function"]["description"] == shown

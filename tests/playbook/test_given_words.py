"""A sequence is a task's lesson when the task asks what its tasks asked, not when it only
names what the sequence is given (toolcycle/playbook/applicability.py: given_words).

Why: on a generated suite (bench/learning_gen seed 1001, ReAct, at b277a2c) "Course BI8151:
what is its enrolled students?" met the average-grade sequence through "students" alone, the
argument its first call takes; the run looked the course up as a student and answered that
it had none, where without a playbook it found the figure.
"""

from __future__ import annotations

from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.advice import GUIDE_HEADER, guide_line
from toolcycle.playbook.applicability import asks_what_it_answered, given_words

TOOLS = ["student_lookup", "student_file", "faculty_ledger", "faculty_live"]
GRADES = Strategy(
    id="s-grades", domain="campus", kind="sequence", tools=["student_lookup", "student_file"],
    advice="Call student_lookup(student), then student_file(enrolment_ref), then answer.",
    applies_when=["advisor", "average", "grade", "room", "student"], support=2, helpful=2,
    heads=["student", "student"],
    feeds=[[{"arg": "enrolment_ref", "left": "", "value": "MA-1", "text": "", "right": ""}]])


def _playbook() -> Playbook:
    pb = Playbook(":memory:", learn=False, guide=4)
    pb.store.put([GRADES])
    return pb


def test_a_task_naming_only_what_a_sequence_is_given_is_not_shown_it_as_its_lesson() -> None:
    pb = _playbook()
    text, shown = pb.instructions_for("Course BI8151: what is its enrolled students?",
                                      "campus", TOOLS)
    assert shown == [] and text.startswith(GUIDE_HEADER)  # the guide, judged by meaning
    assert "student" not in text.split(": Call")[0].split("Asked about")[-1]
    text, shown = pb.instructions_for("Tell me the grade average for the student D. Laspe.",
                                      "campus", TOOLS)
    assert shown == ["s-grades"]


def test_what_a_sequence_is_given_are_the_arguments_it_took_values_in() -> None:
    assert given_words(GRADES) == {"student", "enrol", "ref"}
    assert not asks_what_it_answered("How many students are enrolled?", GRADES)
    assert asks_what_it_answered("Who is the advisor of student Ann Lee?", GRADES)
    # a sequence that learned no argument names nothing as given: every word asks
    bare = Strategy(**{**GRADES.to_dict(), "heads": [], "feeds": []})
    assert asks_what_it_answered("How many students are enrolled?", bare)
    assert guide_line(GRADES).startswith("- Asked about advisor, average, grade, room:")

"""The registration of the playbook's lesson types, in the order their insights are curated.

A new lesson type is a module implementing :class:`~toolcycle.playbook.lesson.LessonType`
and one line here (and its test).
"""

from __future__ import annotations

from .dead_end import DeadEnds
from .lesson import LessonType
from .no_call import NoCall
from .pitfall import Pitfalls
from .sequence import Sequences
from .strategy import Strategy

#: Every lesson type the reflector asks, in order.
LESSON_TYPES: tuple[LessonType, ...] = (Sequences(), Pitfalls(), DeadEnds(), NoCall())


def lesson_type_of(strategy: Strategy) -> LessonType | None:
    """The registered type that made ``strategy`` (the most specific first: a dead end and
    the no-call lesson are pitfalls too)."""
    for lesson_type in (*LESSON_TYPES[2:], *LESSON_TYPES[:2]):
        if lesson_type.owns(strategy):
            return lesson_type
    return None

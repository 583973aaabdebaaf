"""The registration of the playbook's lesson types, in the order their insights are curated.

A new lesson type is two files: a module implementing :class:`~toolcycle.playbook.lesson.
LessonType`, and its line here (docs/playbook.md, "Adding a lesson type"). Nothing else names
a lesson type: the reflector asks each registered one, the outcome asks the one that owns a
strategy.
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
    """The registered type that made ``strategy``: the last registered that owns it, so a type
    registered later refines an earlier one (a dead end and the no-call lesson are pitfalls
    too)."""
    for lesson_type in reversed(LESSON_TYPES):
        if lesson_type.owns(strategy):
            return lesson_type
    return None

"""A run's outcome as the curator reads it, and how a run bears on each strategy it was shown.

Apart from the curator's merging rules because it is a question of its own: a strategy is
judged only by the runs that followed it (a run that ignored it, or one it did not fit, says
nothing about it), and what "followed" means differs by kind of strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..status import is_success
from ..tracing.trace import Trace
from .lessons import lesson_type_of
from .routine import routine_name
from .strategy import Strategy, UseVerdict


@dataclass(slots=True)
class RunOutcome:
    """What the curator needs to know about a run besides its insights."""

    run_id: str
    success: bool
    iterations: int
    tool_latency_ms: float
    shown: list[str] = field(default_factory=list)
    #: the run's task tool calls in order, as ``(tool, status)`` with status ``ok``, ``error``,
    #: ``empty`` or ``repeat``; None when unknown (then success alone is the verdict)
    calls: list[tuple[str, str]] | None = None
    #: per tool, the argument values of its good calls that the model shaped itself (see
    #: :func:`toolcycle.playbook.reflector.shaped_values`): a format the tool accepted
    shaped: dict[str, dict[str, str]] = field(default_factory=dict)
    #: the run's domain, task fingerprint and prompt keywords (see :class:`Insight`), and
    #: whether the model ended it with an answer of its own (not a limit or an error): what
    #: tells a run that stopped short of a sequence (see :meth:`Curator.apply`)
    domain: str = ""
    task: str = ""
    keywords: list[str] = field(default_factory=list)
    answered: bool = False



def use_verdict(strategy: Strategy, outcome: RunOutcome) -> UseVerdict:
    """How a run shown ``strategy`` bears on it: only a run that followed it is evidence.

    Followed: a sequence's tools were called in order; a pitfall's repair tools were called
    (without a repair: its tool was called and did not fail); advice: one of its tools was
    called. A followed strategy whose tools then answered, in a run that failed, is harmful;
    one whose tools had nothing for the task (empty results, errors) was retrieved for a task
    it does not fit, and a run that never followed it says nothing about it at all. A dead
    end (a tool that found nothing for this kind of task) is followed by not calling its
    tool (:func:`~toolcycle.playbook.dead_end.verdict`): each lesson type may judge its own
    (:meth:`~toolcycle.playbook.lesson.LessonType.judge`).
    """
    if outcome.calls is None:
        return "helpful" if outcome.success else "harmful"
    lesson_type = lesson_type_of(strategy)  # a type's own rule first (a dead end's, say)
    if lesson_type is not None and (
            own := lesson_type.judge(strategy, outcome.calls, outcome.success)) is not None:
        return own
    called = [tool for tool, _ in outcome.calls]
    answered = {tool for tool, status in outcome.calls if status == "ok"}
    failed = {tool for tool, status in outcome.calls if status == "error"}
    tools = strategy.tools
    routine = routine_name(tools) if strategy.kind == "sequence" and len(tools) > 1 else None
    if routine is not None and routine in called:
        # the run called the routine that runs this sequence (Playbook(routines=True))
        followed, fits = True, routine in answered
    elif strategy.kind == "sequence" and tools:
        position = 0
        for tool in called:
            if position < len(tools) and tool == tools[position]:
                position += 1
        followed, fits = position == len(tools), tools[-1] in answered
    elif strategy.kind == "pitfall" and len(tools) > 1:
        followed = all(t in called for t in tools[1:])
        fits = all(t in answered for t in tools[1:])
    elif strategy.kind == "pitfall" and tools:
        followed = tools[0] in answered and tools[0] not in failed
        fits = followed
    else:
        followed = not tools or any(t in called for t in tools)
        fits = not tools or any(t in answered for t in tools)
    if not followed:
        return "ignored"
    if outcome.success:
        return "helpful"
    return "harmful" if fits else "misfit"


#: ``(trace, outcome) -> bool | float``: judges a run (a float counts as success from 0.5).
Grader = Callable[[Trace, Any], bool | float]


def judge(trace: Trace, outcome: Any, grader: Grader | None) -> bool:
    """Success of a run, as the playbook learns it: its status is ``"success"`` and the
    grader, when there is one, passes its answer.

    The status comes first because a right-looking answer is not a right way to it: an answer
    forced at a limit, a partial one and a tool's error text passed through (``"forced"``,
    ``"partial"``, ``"tool_error"``, docs/status.md) would teach the curator that the calls
    before them work, and a grader that compares text could pass an error message that
    happens to contain the expected value.
    """
    if isinstance(outcome, BaseException) or trace.error or not is_success(trace.status):
        return False
    return grader is None or passes(grader(trace, outcome))


def passes(verdict: bool | float) -> bool:
    """A grader's or evaluator's verdict as success: a float counts from 0.5."""
    return verdict >= 0.5 if isinstance(verdict, float) else bool(verdict)

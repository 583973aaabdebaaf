"""The one typed interface between the engine and a playbook.

A playbook gives each run a frozen :class:`RunPlan` (which of its routines the run is not
offered, the tools whose calls another implementation answers, how the run must begin, when
it has done what it was shown, the call made before its first request, what it learned
about each offered tool) and reads the run's
trace back when it ends (typed fields: ``ToolCallRecord.error_type``, ``tools_offered``,
``strategies_shown``). Nothing here is probed by name: an agent's ``playbook`` implements
:class:`PlaybookHook` whole (``toolcycle.playbook.Playbook`` does).

Why one frozen value: the engine asked the playbook eleven questions through ``getattr`` and
``isinstance`` (four protocols of a tool selection the playbook pretended to be, five methods
found by name), each answered from state the playbook could change between them; a plan is
asked once per run, holds no reference back, and says everything the run takes from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..result import Termination
    from ..tools import Tool
    from ..tracing.trace import Trace


def _no_tools() -> Mapping[str, Tool[Any]]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a playbook gives one run beyond its advice (the advice itself is
    :meth:`PlaybookHook.instructions_for`'s, written into the instructions).

    ``withheld``: offered tools the run is not offered (routines whose lesson the run is not
    shown); ``stand_ins``: tool name -> what answers that tool's calls in this run (it keeps
    the tool's name; none where a call can need approval); ``first_call``: the run's first
    ``tool_choice`` (``"required"`` or an offered tool's name) until its first call;
    ``answer_when``: a test of the trace after which the next request asks for the answer;
    ``call_while``: a test of the trace after which the next request requires a call
    (``"required"``): a shown sequence begun, its last step done, the rest not yet;
    ``head_start``: a call (tool name, arguments) the loop makes before the first request;
    ``notes``: tool name -> what the playbook learned about that tool, appended to its
    description in this run (a lesson about a tool is shown with the tool, whatever the task
    says: :mod:`toolcycle.playbook.tool_lessons`); ``noted``: the ids of the strategies in
    ``notes``, which the run's trace records among ``strategies_shown``.
    """

    withheld: frozenset[str] = frozenset()
    stand_ins: Mapping[str, Tool[Any]] = field(default_factory=_no_tools)
    first_call: str | None = None
    answer_when: Callable[[Trace], bool] | None = None
    call_while: Callable[[Trace], bool] | None = None
    head_start: tuple[str, dict[str, Any]] | None = None
    notes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    noted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        """Whether the plan changes anything about the run."""
        return bool(self.withheld or self.stand_ins or self.first_call is not None
                    or self.answer_when is not None or self.call_while is not None
                    or self.head_start is not None
                    or bool(self.notes))


#: The plan of a run a playbook has nothing to add to.
NO_PLAN = RunPlan()


class PlaybookHook(Protocol):
    """What the engine needs from a playbook (:class:`toolcycle.playbook.Playbook` is one):
    the whole interface, typed; the engine calls each method where its docstring says."""

    def attach(self, agent_name: str, tools: Mapping[str, Tool[Any]],
               reserved: frozenset[str], *, new_agent: bool) -> Sequence[Tool[Any]]:
        """``agent_name``'s tools as the agent is built (``new_agent``) or as a run lists
        them (its toolsets' too): what they are for and what the playbook may make over
        them. Returns the routines made over them, none named like one of ``tools`` or
        ``reserved`` (the output's tools), which the engine adds to the agent's tools."""
        ...

    def routines_learned(self, agent_name: str) -> Sequence[Tool[Any]]:
        """The routines learned after the agent was built, added to each run's tools (the
        same object while none is added: a run compares it by identity)."""
        ...

    def plan(self, task: str, agent_name: str, offered: frozenset[str], *,
             gated: bool) -> RunPlan:
        """The plan of one run of ``task`` offered the tools ``offered``; ``gated``: a call
        can need an approval decision (then no stand-in and no head start: they would
        call tools the policy never sees)."""
        ...

    def instructions_for(
        self, task: str, agent_name: str, tool_names: list[str]
    ) -> tuple[str, list[str]]:
        """The advice appended to the run's instructions and the ids of what it shows."""
        ...

    def observe(self, trace: Trace, termination: Termination | None) -> None:
        """A finished run's trace, to learn from (must return at once)."""
        ...


#: The methods :class:`PlaybookHook` has, checked once when an agent is built.
PLAYBOOK_METHODS = ("attach", "routines_learned", "plan", "instructions_for", "observe")

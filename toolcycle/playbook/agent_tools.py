"""What a playbook made of one agent's tools: the routines offered as its tools, and the
stand-ins that answer calls in its runs (a routine for its first tool, a routine for its last
tool's failed calls, a fallback for a failing tool, a reshaped or respelled call).

Kept per agent, because tools are: two agents of one domain share its lessons, not their
tools. Made when the agent is built and when a run lists a toolset's tools, and made again
whenever a run changes the domain's lessons (:meth:`AgentTools.relearn`), so what a run
taught is used from the next run on, not from the agent's next construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from ..tools import Tool
from .fallback import Fallback
from .offer import pitfall_stand_ins, routines_of
from .respell import respelling_tools
from .strategy import Strategy


@dataclass(slots=True)
class AgentTools:
    """One agent's share of what its playbook made. The dicts and the set are handed to its
    :class:`~toolcycle.playbook.offer.RoutineOffer` by reference and changed in place: runs
    in flight hold them."""

    #: Every tool the agent listed so far (its own and its toolsets'; not its routines).
    listed: dict[str, Tool[Any]] = field(default_factory=dict)
    #: The names of the routines offered as its tools (when built, by toolsets, learned since).
    offered: set[str] = field(default_factory=set)
    #: Routine name -> the routine standing in for its first tool (routine.stand_in).
    stand_ins: dict[str, Tool[Any]] = field(default_factory=dict)
    #: Routine name -> the routine repairing its last tool's failed calls (routine.repair).
    repairs: dict[str, Tool[Any]] = field(default_factory=dict)
    #: Pitfall strategy id -> the failing tool calling its alternative (fallback.fallback_tool).
    fallbacks: dict[str, Fallback] = field(default_factory=dict)
    #: Tool name -> the tool calling itself again with an argument reshaped as a pitfall
    #: learned (reshape.reshaping_tool), or respelled as the task wrote it (respell).
    reshapes: dict[str, Tool[Any]] = field(default_factory=dict)
    #: The routines learned after the agent was built, oldest first: each run of the agent
    #: adds them to its tools (:meth:`toolcycle.agent.Agent`). A new tuple each time one is
    #: added, so a run tells a change by identity, at no cost while nothing changed.
    learned: tuple[Tool[Any], ...] = ()
    #: Make routines only of tools declared ``read_only`` (the playbook's default,
    #: ``routines="read_only"``): a routine calls its later steps for the model.
    read_only_steps: bool = False

    def remake_stand_ins(self, tools: Mapping[str, Tool[Any]],
                         strategies: Sequence[Strategy]) -> None:
        """The fallbacks, reshaped and respelled calls of ``strategies`` over every tool the
        agent listed so far (``tools`` among them), in place; a retired lesson's stand-in
        goes with it. Why: an agent lives through many runs, and what its runs taught is
        worth most to its next runs; made only when the agent was built, an agent built
        once would never have a call mended by what it learned (shown "Pass time like
        "21:00"", it calls with "7:15" and nothing reshapes it)."""
        self.listed.update(tools)
        fallbacks, reshapes = pitfall_stand_ins(strategies, self.listed)
        # the respelling call calls the reshaped one (an argument lesson's) where there is
        # one, so a call with a misformatted and a misnamed value is mended in both
        reshapes.update(respelling_tools(strategies, self.listed, reshapes))
        for made, kept in ((fallbacks, self.fallbacks), (reshapes, self.reshapes)):
            held: dict[str, Any] = kept
            held.update(made)
            for gone in set(held) - set(made):
                held.pop(gone, None)

    def make_routines(self, tools: Mapping[str, Tool[Any]], strategies: Sequence[Strategy],
                      skip: AbstractSet[str] = frozenset()) -> list[Tool[Any]]:
        """The routines of ``strategies`` that ``tools`` can run and lacks (and ``skip`` does
        not name), as tools; their stand-ins and repairs kept here. Not yet offered: the
        caller says which it offers. With :attr:`read_only_steps`, only routines every step
        of which is a ``read_only`` tool."""
        if self.read_only_steps:
            tools = {name: tool for name, tool in tools.items() if tool.policy.read_only}
        made = [r for r in routines_of(strategies, tools) if r.tool.name not in skip]
        for routine in made:
            if routine.stand_in is not None:
                self.stand_ins[routine.tool.name] = routine.stand_in
            if routine.repair is not None:
                self.repairs[routine.tool.name] = routine.repair
        return [routine.tool for routine in made]

    def relearn(self, strategies: Sequence[Strategy]) -> list[Tool[Any]]:
        """Remake the stand-ins for ``strategies`` (the domain's lessons, just changed) and make
        the routines they hold that the agent is not offered yet, offered from its next run
        (:attr:`learned`); returns those.

        Why: a routine learned mid-life was offered only once the agent was built again, and
        a user builds an agent once: no run would ever be offered a routine its own agent's
        learning had made, and later runs kept calling the chain's tools by hand (or its
        last tool alone, with a made-up id)."""
        self.remake_stand_ins({}, strategies)
        known = {name: tool for name, tool in self.listed.items() if name not in self.offered}
        new = self.make_routines(known, strategies, skip=self.offered)
        if new:
            self.offered.update(tool.name for tool in new)
            self.learned = (*self.learned, *new)
        return new

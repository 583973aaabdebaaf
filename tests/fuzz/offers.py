"""Playbook offers under fuzzing: stand-ins, fallbacks and repairs answering a run's calls.

A playbook with routines swaps some of a run's tools for wrappers that call other tools on
the model's behalf (:func:`~toolcycle.playbook.routine.stand_in`,
:func:`~toolcycle.playbook.routine.repair`, :func:`~toolcycle.playbook.fallback.fallback_tool`).
They run inside the engine's tool execution, so every invariant of the loop (each call
answered once, cancellation, no orphaned task or thread, trace and usage on every path) must
hold for them as for the tools themselves. The wrappers here are built by those same library
functions over the fuzz tools (read-only copies), so a fuzzed run meets the real ones: a sync
first step on a worker thread, an async step that raises ``CancelledError``, a primary that
times out, a repair whose chain fails again. Half of the offers also have the run begin with a
tool call (``FirstCallRequired``: the first request made with ``tool_choice="required"``) and
ask for the answer once ``snooze`` or ``echo`` returned (``AnswerWhenDone``: the next request
made with ``tool_choice="none"``, which the fuzzed model sometimes ignores), and half of
those make a head start (``HeadStart``: a call before the first request, of a wrapped tool,
one that fails or times out, or with arguments its schema refuses).

Drawn from a generator of its own (like approvals), so every other choice of a seed stays what
it was and the regression seeds replay the same scenarios.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolcycle import Tool
from toolcycle.playbook.fallback import fallback_tool
from toolcycle.playbook.respell import respelling_tool
from toolcycle.playbook.routine import Feed, Routine, repair, routine_tool, stand_in
from toolcycle.tools import ToolDefinition
from toolcycle.tracing.trace import Trace

from .tools import ALL_TOOLS

#: The tools whose calls the offers answer (stand-ins, a repair, fallbacks), and ``limited``
#: (``max_calls=2``), which a fallback or routine step must not call past its budget either.
WRAPPED = ["snooze", "echo", "aboom", "boom", "slow_sync", "limited", "aweird", "csnooze"]

#: Share of seeds whose agent gets the offers.
OFFER_SHARE = 0.5


def offers_drawn(seed: int) -> bool:
    """Whether the agent of ``seed``'s scenario gets playbook offers."""
    return random.Random(f"offers:{seed}").random() < OFFER_SHARE


def first_call_drawn(seed: int) -> bool:
    """Whether those offers also require the run's first call (half of them)."""
    return random.Random(f"first-call:{seed}").random() < 0.5


def head_start_drawn(seed: int) -> bool:
    """Whether those offers also make a head start (a call before the first request; half)."""
    return random.Random(f"head-start:{seed}").random() < 0.5


#: What a head start may call: a stand-in running a routine, one whose chain fails again, a
#: fallback, a tool that times out, one with a call budget, one returning awkward values, an
#: async tool cancelling itself, and arguments its schema refuses.
HEAD_STARTS: list[tuple[str, dict[str, Any]]] = [
    ("snooze", {"ms": 3}), ("echo", {"text": "boom"}), ("boom", {"kind": "value"}),
    ("slow_sync", {"ms": 30}), ("limited", {"x": 2}), ("aweird", {"kind": "huge"}),
    ("aboom", {"kind": "cancelled"}), ("snooze", {"ms": "three"}), ("echo", {}),
]


def _read_only(tool: Tool[Any]) -> Tool[Any]:
    assert tool.function is not None
    return Tool(tool.spec, policy=replace(tool.policy, read_only=True)).bind(tool.function)


class FuzzOffer:
    """A tool selector that offers every tool and swaps in the wrappers (a
    :class:`~toolcycle.run.state.ToolStandIns`)."""

    def __init__(self, first_call: bool = False, answer: bool = False,
                 head_start: bool = False) -> None:
        #: whether runs must begin with a tool call (``FirstCallRequired``): the first
        #: request is made with tool_choice="required", later ones "auto"
        self.required = first_call
        #: whether the answer is asked for once snooze or echo returned (``AnswerWhenDone``)
        self.answer = answer
        #: whether runs get a head start (``HeadStart``): one of :data:`HEAD_STARTS`, by task
        self.heads = head_start
        tools = {name: _read_only(t) for name, t in ALL_TOOLS.items() if t.function is not None}
        swaps: dict[str, Tool[Any]] = {}
        # snooze's result carries its ms: "snoozed 7 ms" -> nap(ms=7), the routine standing in
        # for snooze (a sync step on a worker thread, then an async one)
        naps = Routine("snooze_then_nap", ("snooze", "nap"), (Feed("ms", "snoozed ", " ms"),),
                       "s-fuzz-naps", 3)
        built = routine_tool(naps, tools)
        assert built is not None
        standing = stand_in(naps, built, tools)
        assert standing is not None
        swaps["snooze"] = standing
        # echo's whole result is aboom's kind: aboom's failures (it always raises, or raises
        # CancelledError itself) are repaired by a chain that fails again, or echo stands in
        echoes = Routine("echo_then_aboom", ("echo", "aboom"), (Feed("kind", "", ""),),
                         "s-fuzz-echoes", 3)
        built = routine_tool(echoes, tools)
        assert built is not None
        for name, made in (("echo", stand_in(echoes, built, tools)),
                           ("aboom", repair(echoes, built, tools))):
            assert made is not None
            swaps[name] = made
        # fallbacks: boom always raises (weird answers for it); slow_sync times out
        for primary, alternative in (("boom", "weird"), ("slow_sync", "snooze")):
            made = fallback_tool(tools[primary], tools[alternative])
            assert made is not None
            swaps[primary] = made
        # the respelling stand-in of a learned sequence's tool (toolcycle.playbook.respell):
        # a call refused for its names alone is made under the tool's ("x" -> "kind"),
        # found-nothing text is asked again; aweird answers weird values, csnooze sleeps
        for name in ("aweird", "csnooze"):
            made = respelling_tool(tools[name])
            assert made is not None
            swaps[name] = made
        self.swaps = swaps

    def select(self, task: str, tools: Sequence[ToolDefinition],
               keep: frozenset[str] = frozenset()) -> tuple[ToolDefinition, ...]:
        return tuple(tools)

    def stand_ins(self, task: str, offered: frozenset[str]) -> Mapping[str, Tool[Any]]:
        return {name: tool for name, tool in self.swaps.items() if name in offered}

    def first_call(self, task: str, offered: frozenset[str]) -> str | None:
        """"required", or (for odd-length tasks) a tool by name, as a shown sequence asks."""
        if not self.required:
            return None
        return "snooze" if len(task) % 2 else "required"

    def head_start(self, task: str, offered: frozenset[str]) -> tuple[str, dict[str, Any]] | None:
        """One of :data:`HEAD_STARTS`, drawn by the task (a third of tasks get none)."""
        if not self.heads:
            return None
        draw = random.Random(f"head:{task}").randrange(len(HEAD_STARTS) * 3 // 2)
        return HEAD_STARTS[draw] if draw < len(HEAD_STARTS) else None

    def answer_when(self, task: str, offered: frozenset[str], answered_for: frozenset[str]
                    ) -> Callable[[Trace], bool] | None:
        """Done once snooze or echo returned (each may be answered by a stand-in:
        ``answered_for``)."""
        if not self.answer:
            return None
        return _snoozed_or_echoed


def _snoozed_or_echoed(trace: Trace) -> bool:
    return any(c.name in ("snooze", "echo") and c.error is None for c in trace.tool_calls)

"""A run's tools: its toolsets' (MCP servers, say), listed at each run's start, and the ones a
tool selection keeps for its task.

Kept apart from :mod:`toolcycle.agent` because it is the one place where something outside the
process decides which tools a run has. A toolset that cannot list its tools does not raise
here: the run it was listing for ends at its start with
:class:`~toolcycle.errors.ToolsUnavailable`, through the engine's failure path, so the trace
is finished and stored like any other failed run's (a raw exception here would lose it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from ..context import CancelToken
from ..models.base import ModelSettings, ToolDefinition
from ..tools import Tool, Toolset
from ..tracing.trace import Trace
from .asked import answer_now, convert_first, look_again
from .grounding import look_first
from .plan import NO_PLAN, RunPlan
from .producer_first import producer_first
from .state import (
    AgentCore,
    AnswerWhenDone,
    FirstCallRequired,
    HeadStart,
    RunState,
    ToolSelector,
    ToolStandIns,
)

_log = logging.getLogger(__name__)

#: A failed toolset's place among the lists a core was built from (one object, compared by
#: identity like the lists: the core is rebuilt when the toolset lists again).
_FAILED: tuple[Tool[Any], ...] = ()

#: The toolsets' lists a core was built from, the core, and its settings (reused while no list
#: changed: a toolset returns the same list object until its tools change).
Expanded = tuple[tuple[Sequence[Tool[Any]], ...], AgentCore, ModelSettings]


async def with_toolsets(core: AgentCore, settings: ModelSettings, toolsets: Sequence[Toolset],
                        last: Expanded | None) -> tuple[AgentCore, ModelSettings, Expanded | None]:
    """``core`` and ``settings`` with every toolset's current tools added.

    One toolset costs only its own tools, never the run: a toolset that cannot list its
    tools is left out, and a tool whose name is taken (by the agent's own tool, an output
    tool, or an earlier toolset's) is left out, the first one given keeping the name. Both are
    logged as warnings once per change of the lists and named in the core's
    ``toolset_problems`` (the run's trace records them under ``metadata``). Only when the
    toolsets that failed leave the run no tool at all does it end at its start
    (``tools_unavailable``): a model asked to work with none of its tools would answer as if
    they did not exist.
    """
    listed: list[Sequence[Tool[Any]] | BaseException]
    if len(toolsets) == 1:  # asked before every request: no task per toolset when one is all
        try:
            listed = [await toolsets[0].get_tools()]
        except Exception as exc:
            listed = [exc]
    else:
        listed = await asyncio.gather(*(t.get_tools() for t in toolsets),
                                      return_exceptions=True)
    for outcome in listed:  # a cancellation is not a toolset's failure
        if isinstance(outcome, BaseException) and not isinstance(outcome, Exception):
            raise outcome
    failed = [f"{t!r} could not list its tools: {type(e).__name__}: {e}"
              for t, e in zip(toolsets, listed, strict=True) if isinstance(e, Exception)]
    lists = tuple(_FAILED if isinstance(tools, BaseException) else tools for tools in listed)
    if failed and not core.tools and all(not tools for tools in lists):
        return replace(core, tools_unavailable="; ".join(failed)), settings, last
    if last is not None and len(last[0]) == len(lists) and all(
            a is b for a, b in zip(last[0], lists, strict=True)):
        return last[1], last[2], last
    merged = dict(core.tools)
    reserved = {d.name for d in core.output.tool_definitions}
    problems = [f"{problem}; the run goes on without its tools" for problem in failed]
    for toolset, tools in zip(toolsets, lists, strict=True):
        for item in tools:
            if item.name in merged or item.name in reserved:
                problems.append(
                    f"tool {item.name!r} of {toolset!r} left out: the name is taken by "
                    f"{'an output tool' if item.name in reserved else 'another tool'} (the "
                    f"one given first keeps it; an MCP server's prefix= renames its tools)")
                continue
            merged[item.name] = item
    for problem in problems:
        _log.warning("agent %r: %s", core.name, problem)
    if core.playbook is not None:  # a toolset's tools described, given their lessons'
        # stand-ins, and the routines learned over them added; off the event loop: it reads
        # the domain's strategies from the store (a file, or PostgreSQL), once per change of
        # the lists, which a server may make on every request
        routines = await asyncio.to_thread(core.playbook.attach, core.name, dict(merged),
                                           frozenset(reserved), new_agent=False)
        for routine in routines:
            if routine.name not in merged and routine.name not in reserved:
                merged[routine.name] = routine
    definitions = tuple(ToolDefinition(t.spec.name, t.spec.description, t.spec.parameters)
                        for t in merged.values()) + core.output.tool_definitions
    expanded = replace(_with_tools(core, merged, definitions), toolset_problems=tuple(problems))
    expanded_settings = replace(settings, tools=definitions)
    return expanded, expanded_settings, (lists, expanded, expanded_settings)


async def close_toolsets(toolsets: Sequence[Toolset]) -> None:
    """Close every toolset, together; one that fails to close is logged, not raised.

    Why not raised: closing comes after the work (``async with Agent(...)`` exits after the
    run returned its result), and a server that breaks at its teardown must cost neither
    that result nor the closing of the others.
    """
    closed = await asyncio.gather(*(t.close() for t in toolsets), return_exceptions=True)
    for toolset, outcome in zip(toolsets, closed, strict=True):
        if isinstance(outcome, Exception):
            _log.warning("%r failed to close: %s: %s", toolset, type(outcome).__name__, outcome)
    for outcome in closed:  # a cancellation still propagates, once every toolset was told
        if isinstance(outcome, BaseException) and not isinstance(outcome, Exception):
            raise outcome


def note_toolset_problems(core: AgentCore, trace: Trace) -> None:
    """Record in the run's trace what its toolsets could not offer (``metadata``)."""
    if core.toolset_problems:
        trace.metadata["toolset_problems"] = list(core.toolset_problems)


@dataclass(frozen=True, slots=True)
class Listed:
    """A run's core and settings with its toolsets' tools, and the part of the run's timeout
    the listing left (``None``: no timeout)."""

    core: AgentCore
    settings: ModelSettings
    timeout_left: float | None

    def started(self, state: RunState) -> RunState:
        """``state``, its deadline counting the time its toolsets took to list."""
        if self.timeout_left is not None:  # (None: no timeout, or a toolset-less run)
            state.timeout_left = self.timeout_left
        return state


async def listed_within(list_core: Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]],
                        own_core: Callable[[], tuple[AgentCore, ModelSettings]],
                        timeout: float | None, token: CancelToken | None) -> Listed:
    """The toolsets listed for a run, under that run's timeout and cancel token.

    Why here, before the run: the listing (an MCP server starting, its ``tools/list``) is
    the first thing a run waits for, and a server that never answers must not hold it past
    its timeout or its cancel. If either comes first the listing is cancelled (and awaited),
    and the run starts with the agent's own tools and nothing left: the engine then ends it
    as it ends any run at its deadline (``on_limit``) or cancelled (``Cancelled``), trace
    stored.
    """
    started = time.monotonic()
    listing = asyncio.ensure_future(list_core())
    waits: set[asyncio.Future[Any]] = {listing}
    cancelled = None if token is None else asyncio.ensure_future(token.wait())
    if cancelled is not None:
        waits.add(cancelled)
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            if not waiting.done():
                waiting.cancel()
        await asyncio.wait(waits)
    core, settings = (listing.result() if not listing.cancelled() else own_core())
    left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
    return Listed(core, settings, left)


def refresher(list_core: Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]],
              selection: ToolSelector | None, state: RunState, prompt: str | None
              ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]]:
    """How a run lists its toolsets again before a request: with the run's tool selection
    and its playbook's plan applied when the agent has either (and the run a prompt to
    select for), what it offers recorded in the run's trace."""
    def offered(core: AgentCore) -> None:
        if selection is not None or core.plan is not None:
            state.trace.trace.tools_offered = [d.name for d in core.definitions]
    return selecting_for(list_core, selection, state.setup.core.playbook, prompt, offered)


class LearnedRoutines:
    """The routines a playbook learned after an agent was built (``Playbook.routines_learned``
    reads them), added to the tools of each of the agent's runs from then on.

    Why: an agent was offered only the routines known when it was built, and a long-lived
    one (a server's, a benchmark's train runs: one agent per epoch) none that its own runs
    taught. The playbook hands out a new tuple when it adds one, so the core is rebuilt only
    then, and a run costs a lookup while none is added.
    """

    def __init__(self, read: Callable[[str], Sequence[Tool[Any]]]) -> None:
        self.read = read
        self._last: tuple[Sequence[Tool[Any]], AgentCore, ModelSettings] | None = None

    def over(self, core: AgentCore, settings: ModelSettings
             ) -> tuple[AgentCore, ModelSettings, bool]:
        """``core`` and ``settings`` with the routines learned so far, and whether they
        differ from the last run's."""
        learned = self.read(core.name)
        if not learned:
            return core, settings, False
        last = self._last
        if last is not None and last[0] is learned:
            return last[1], last[2], False
        self._last = last = (learned, *with_learned(core, settings, learned))
        return last[1], last[2], True


def with_learned(core: AgentCore, settings: ModelSettings, learned: Sequence[Tool[Any]]
                 ) -> tuple[AgentCore, ModelSettings]:
    """``core`` and ``settings`` with the routines a playbook learned after the agent was
    built (one named like a tool the agent has, or its output's, is left out)."""
    reserved = {d.name for d in core.output.tool_definitions}
    tools = dict(core.tools)
    for routine in learned:
        if routine.name not in tools and routine.name not in reserved:
            tools[routine.name] = routine
    if len(tools) == len(core.tools):
        return core, settings
    definitions = tuple(ToolDefinition(t.spec.name, t.spec.description, t.spec.parameters)
                        for t in tools.values()) + core.output.tool_definitions
    return _with_tools(core, tools, definitions), replace(settings, tools=definitions)


def selected(core: AgentCore, settings: ModelSettings, selector: ToolSelector | None,
             task: str) -> tuple[AgentCore, ModelSettings]:
    """``core`` and ``settings`` for one run of ``task``: only the tools ``selector`` keeps
    (the output and submit tools always stay), less those the playbook's plan withholds, its
    stand-ins in place of the tools they answer for, a first call required where it asks for
    one, its test of when the run's calls are done and the call it makes before the first
    request; the same objects when it changes nothing.

    The plan is the playbook's (:meth:`~toolcycle.run.plan.PlaybookHook.plan`, typed); an
    agent whose playbook plans nothing takes one from its own tool selection where that
    implements the selection protocols docs/loop.md documents (:func:`selection_plan`)."""
    keep = frozenset(d.name for d in core.output.tool_definitions)
    chosen = core.definitions if selector is None else selector.select(task, core.definitions,
                                                                       keep)
    names = frozenset(d.name for d in chosen)
    gated = core.approval is not None
    plan = NO_PLAN
    if core.playbook is not None and chosen:
        plan = core.playbook.plan(task, core.name, names, gated=gated)
    if not plan and selector is not None and chosen:
        plan = selection_plan(selector, task, names, gated)
    if plan.withheld:
        chosen = tuple(d for d in chosen if d.name not in plan.withheld or d.name in keep)
        names = frozenset(d.name for d in chosen)
    noted = with_notes(chosen, {n: t for n, t in plan.notes.items() if n not in keep})
    if plan:
        core = replace(core, plan=plan)
    # Not under an approval policy: a stand-in calls tools the policy would never see.
    swaps = {} if gated else {n: t for n, t in plan.stand_ins.items() if n in names}
    # only with a tool to call: "required" with none offered is a request providers refuse
    # (found by the engine fuzzer)
    first = plan.first_call
    if chosen and settings.tool_choice == "auto" and (first == "required" or first in names):
        settings = replace(settings, tool_choice=first)  # a tool not offered is no choice
    if chosen and plan.answer_when is not None:
        core = replace(core, answer_when=plan.answer_when)
    if chosen and plan.call_while is not None:
        core = replace(core, call_while=plan.call_while)
    head = plan.head_start
    if chosen and not gated and head is not None and head[0] in names:
        core = replace(core, head_start=head)
    if len(chosen) == len(core.definitions) and not swaps and noted is chosen:
        return core, settings
    tools = {name: swaps.get(name, tool) for name, tool in core.tools.items() if name in names}
    return _with_tools(core, tools, noted), replace(settings, tools=noted)


def with_notes(definitions: tuple[ToolDefinition, ...], notes: Mapping[str, str]
               ) -> tuple[ToolDefinition, ...]:
    """``definitions`` with each tool's note (what a playbook learned about it,
    :attr:`RunPlan.notes`) after its description; the same tuple when none applies. The
    output's tools take none: they are not the playbook's to describe. A note quoting a
    tool's error may span lines: the text protocols show every description on its tool's
    line (:func:`~toolcycle.models.text.describe.one_line`), the note's too."""
    if not notes or not any(d.name in notes for d in definitions):
        return definitions
    return tuple(replace(d, description=f"{d.description.rstrip()} {notes[d.name]}".lstrip())
                 if d.name in notes else d for d in definitions)


def for_task(core: AgentCore, settings: ModelSettings, selector: ToolSelector | None,
             task: str | None) -> tuple[AgentCore, ModelSettings]:
    """:func:`selected` where an agent selects (a tool selection, or a playbook to plan
    with) and the run has a task to select for; ``core`` and ``settings`` as they are
    otherwise. One rule for every way a run gets an agent's tools: its start, a resume, a
    handoff to it."""
    if task is None or (selector is None and core.playbook is None):
        return core, settings
    return selected(core, settings, selector, task)


def selecting_for(refresh: Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]],
                  selector: ToolSelector | None, playbook: object, task: str | None,
                  offered: Callable[[AgentCore], None] | None = None,
                  ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]]:
    """:func:`selecting` where an agent selects (``selector``, or its ``playbook``) and the
    run has a task; ``refresh`` itself otherwise (the rule of :func:`for_task`)."""
    if task is None or (selector is None and playbook is None):
        return refresh
    return selecting(refresh, selector, task, offered)


def selection_plan(selector: ToolSelector, task: str, offered: frozenset[str],
                   gated: bool) -> RunPlan:
    """What a user's own tool selection adds to a run through the protocols docs/loop.md
    documents for it (:class:`ToolStandIns`, :class:`FirstCallRequired`,
    :class:`AnswerWhenDone`, :class:`HeadStart`), as one :class:`RunPlan`. A documented
    extension point of tool selections, asked once per run; the playbook answers with its
    own typed :meth:`~toolcycle.run.plan.PlaybookHook.plan` instead."""
    swaps: Mapping[str, Tool[Any]] = (selector.stand_ins(task, offered) if isinstance(
        selector, ToolStandIns) and not gated else {})
    first = (selector.first_call(task, offered) if isinstance(selector, FirstCallRequired)
             else None)
    done = (selector.answer_when(task, offered, frozenset(swaps))
            if isinstance(selector, AnswerWhenDone) else None)
    head = (selector.head_start(task, offered) if isinstance(selector, HeadStart)
            and not gated else None)
    return RunPlan(stand_ins=MappingProxyType(dict(swaps)), first_call=first,
                   answer_when=done, head_start=head)


def _with_tools(core: AgentCore, tools: dict[str, Tool[Any]],
                definitions: tuple[ToolDefinition, ...]) -> AgentCore:
    """``core`` with other tools, and what follows from them: their share of every request's
    tokens, and whether any call can need an approval decision."""
    return replace(core, tools=tools, definitions=definitions, tools_tokens=sum(
        len(str(d.parameters)) + len(d.description) for d in definitions) // 4,
        gated=core.approval is not None or any(t.requires_approval for t in tools.values()))


def selecting(refresh: Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]],
              selector: ToolSelector | None, task: str,
              offered: Callable[[AgentCore], None] | None = None,
              ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]]:
    """``refresh`` (the toolsets listed again before a request) with the run's selection
    applied to what it lists: a toolset's new tools are selected for the task like the rest.
    ``offered`` is told each new selection (the run's trace records it)."""
    last: list[Any] = []  # [listed core, its selection]: the lists rarely change mid-run

    async def refresh_selected() -> tuple[AgentCore, ModelSettings]:
        core, settings = await refresh()
        if not last or last[0] is not core:  # same core object: nothing new to select from
            last[:] = [core, selected(core, settings, selector, task)]
            if offered is not None and last[1][0].tools_unavailable is None:
                offered(last[1][0])
        result: tuple[AgentCore, ModelSettings] = last[1]
        return result
    return refresh_selected


def request_settings(state: RunState) -> ModelSettings:
    """This request's settings: the agent's, except that a ``tool_choice`` forcing a call
    (``"required"`` or a tool's name) holds for a text answer only until the run's first tool
    call. Kept on every request it would leave the model no way to answer: a text-protocol
    model loses its answer branch, a provider's model must call again, and the run can only
    end at a limit. Structured output keeps it: there the answer is itself a call. The run's
    settings are changed once, so later requests take the first test and return.

    A call that failed again the same way on a value another tool gives makes the next
    request name that tool (:func:`~.producer_first.producer_first`, once per tool), before
    grounding's re-asks: where one would require a call, this names the call that helps.

    Grounding's re-asks whose fix is a call force one: nothing to answer from
    (:func:`~.grounding.look_first`), or a thing the request names never looked up
    (:func:`~.asked.look_again`). The one whose fix is an answer with a figure the run holds
    (a conversion nobody asked for, :func:`~.asked.answer_now`) asks for the answer: the
    output tool where there is one, else ``"none"``. The one that named the converter into
    the unit asked (:func:`~.asked.convert_first`) names that tool.

    And where the run's tool selection says when its calls are done
    (:class:`~toolcycle.run.state.AnswerWhenDone`: the playbook, once a learned sequence
    succeeded), the request after the turn of calls that did it asks for the answer
    (``"none"``). Why: shown "Call helix(name), then answer", the 1.5B called helix, had
    the figure, then called other tools for four more turns (sources test split, JSON).
    Until then, after a turn whose last call was a step of that sequence, begun and not
    finished (:attr:`~toolcycle.run.plan.RunPlan.call_while`), the next request requires a
    call (``"required"``): a small model that has the first step's result (an id) tends to
    answer from it, inventing the figure the next step would have given. Each such request
    follows a step made, so a sequence of n calls forces at most n - 1, and a run that
    leaves the sequence is left free.
    """
    settings = state.setup.settings
    if (producer := producer_first(state)) is not None:  # a failure repeated: look it up
        return replace(settings, tool_choice=producer)
    if state.output.is_text and (look_first(state) or look_again(state)):  # grounding's re-asks
        return replace(settings, tool_choice="required")
    if answer_now(state):
        ending = [d.name for d in state.output.tool_definitions]
        return replace(settings, tool_choice="none" if state.output.is_text else (
            ending[0] if len(ending) == 1 else "required"))
    if (converter := convert_first(state)) is not None:  # the call the re-ask named
        return replace(settings, tool_choice=converter)
    if not state.output.is_text or not state.tool_counts:
        return settings
    if settings.tool_choice not in ("auto", "none"):
        settings = replace(settings, tool_choice="auto")
        state.setup = replace(state.setup, settings=settings)
    done, going = state.setup.core.answer_when, state.setup.core.call_while
    after_calls = (settings.tool_choice == "auto" and bool(state.messages)
                   and state.messages[-1].role == "tool")
    if after_calls and done is not None and done(state.trace.trace):
        return replace(settings, tool_choice="none")
    # (only with a tool to call: "required" with none offered is a request providers refuse,
    # and a toolset may have withdrawn its tools since the last turn)
    if after_calls and going is not None and settings.tools and going(state.trace.trace):
        return replace(settings, tool_choice="required")
    return settings


async def refresh_tools(state: RunState) -> None:
    """Offer this request the toolsets' current tools: a server that announced a changed list
    (MCP ``tools/list_changed``) is listed again, and the model sees the new tools at once. A
    toolset that cannot be listed now keeps the run's tools as they were."""
    assert state.refresh_tools is not None
    core, settings = await state.interrupts.guard(state.refresh_tools())
    if core is not state.setup.core and core.tools_unavailable is None:
        state.setup = replace(state.setup, core=core, settings=settings)
        note_toolset_problems(core, state.trace.trace)

"""The Agent: a model, instructions, tools, an output type and limits; runs the loop.

Everything that can be computed once is computed at construction (tool definitions, the output
tool, resolved callbacks) and every configuration problem is reported there, all at once.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Generic, Unpack

from typing_extensions import TypeVar

from ..approval import ApprovalPolicy, Approvals
from ..context import CancelToken
from ..conversation import Conversation, check_run_conversation
from ..errors import ConfigurationError
from ..events import Callbacks, CallbacksArg, Event
from ..guardrails import Guardrail, Guardrails
from ..limits import Limits, resolve_limits
from ..messages import Message
from ..models.base import Model, ModelSettings, ToolDefinition
from ..output import Output, as_output
from ..result import RunResult
from ..run.compaction import starting_from
from ..run.grounding import grounds_by_default
from ..run.loop import run as run_loop
from ..run.state import AgentCore, PlaybookHook, RunSetup, RunState, ToolSelector, prepare
from ..run.toolsets import (
    Expanded,
    LearnedRoutines,
    Listed,
    close_toolsets,
    for_task,
    listed_within,
    refresher,
    with_toolsets,
)
from ..tools import Tool, ToolFunction, ToolOptions, ToolPolicy, Toolset
from ..tracing.recorder import TRACE_HANDLERS, TraceSink
from .checks import (
    agent_settings,
    build_tools,
    check_cost_limit,
    check_limits,
    check_model_settings,
    check_options,
    check_playbook,
    check_snapshot_ledger,
    check_tool_selection,
    check_trace_store,
    model_of,
    output_clashes,
    run_options,
    trace_sink,
)
from .handoffs import handoff_tools
from .resuming import ResumeListing, resume_as
from .stream import AgentStream as AgentStream
from .stream import thread_runner
from .task_input import Instructions, TaskInput, check_callable_instructions, start_run
from .team import member_tool
from .team_agent import CoreLister

if TYPE_CHECKING:
    from ..stores.ledger import SnapshotLedger

DepsT = TypeVar("DepsT", default=Any)
"""The type of ``deps`` given to tools and validators (``deps_type=``; untyped by default)."""
OutputT = TypeVar("OutputT", default=str)
"""The type of ``result.output``, inferred from ``output=`` (``str`` when it is left out)."""
InputT = TypeVar("InputT", default=Any)
"""The type of a run's ``input=``, inferred from ``input_type=`` (untyped when left out)."""


class Agent(Generic[DepsT, OutputT, InputT]):
    """An LLM agent that calls tools in a loop.

    ``output`` is ``str`` (free text, the default; ``None`` means the same), any type pydantic
    can validate, or an :class:`~toolcycle.output.Output` with validators and reflection.
    Type checkers infer ``Agent[Any, Report]`` from ``output=Report`` or
    ``output=Output(Report)``; for unions and literals write ``output=Output(A | B)`` and
    annotate the variable (``agent: Agent[None, A | B] = ...``). ``limits`` sit between the
    system defaults and the per-run limits. ``callbacks`` is an object with ``on_*`` methods, a
    mapping of hook name to callable(s), or a list of those.

    ``input_type`` types a run's ``input=`` and ``instructions`` may be a template over its
    fields or a callable of the run's context (:mod:`toolcycle.agent.task_input`). ``approval`` is
    the policy that decides tool calls (:mod:`toolcycle.approval`; calls of tools with
    ``requires_approval`` pause the run without one); ``snapshot_key`` signs paused runs'
    snapshots (HMAC); ``snapshot_ledger`` records the snapshots resumes consume (a path or URL,
    :mod:`toolcycle.stores.ledger`). ``tool_selection`` offers each run only the tools related
    to its prompt (:mod:`toolcycle.tool_selection`). ``guardrails`` check the input, the
    output and tool calls (:mod:`toolcycle.guardrails`). ``handoffs`` are agents the model may
    hand the conversation to (``transfer_to_<name>``; docs/teams.md). ``grounding`` re-asks
    once when the answer's figures or names come from no source, and an answer that still has
    none is ``"ungrounded"`` (:mod:`toolcycle.run.grounding`); ``None`` (the default) turns it on
    for in-process local models (``model.system == "local"``) and off for the others.
    ``compaction_model`` writes the summaries of context compaction (docs/compaction.md;
    default: ``model``).
    """

    def __init__(
        self,
        model: Model | str,
        instructions: Instructions = "",
        tools: Sequence[Tool[Any] | ToolFunction | Toolset] = (),
        *,
        name: str = "agent",
        description: str = "",
        output: type[OutputT] | Output[OutputT] | None = None,
        limits: Limits | None = None,
        callbacks: CallbacksArg = None,
        parallel_tools: bool = False,
        model_settings: ModelSettings | None = None,
        deps_type: type[DepsT] | None = None,
        trace_store: TraceSink | str | os.PathLike[str] | bool | None = None,
        playbook: PlaybookHook | None = None,
        input_type: type[InputT] | None = None,
        approval: ApprovalPolicy | None = None,
        snapshot_key: bytes | str | None = None,
        tool_selection: ToolSelector | None = None,
        guardrails: Sequence[Guardrail] = (),
        handoffs: Sequence[Agent[Any, Any, Any]] = (),
        snapshot_ledger: SnapshotLedger | str | os.PathLike[str] | None = None,
        grounding: bool | None = None,
        compaction_model: Model | str | None = None,
    ) -> None:
        problems: list[str] = []
        resolved_model = model_of("model", model, problems)
        summariser = (None if compaction_model is None  # compaction's summaries (else the model)
                      else model_of("compaction_model", compaction_model, problems))
        task = None if input_type is None else TaskInput(input_type, instructions)
        problems.extend(task.problems if task is not None else ())
        if callable(instructions):
            problems.extend(check_callable_instructions(instructions))
        problems.extend(check_options(instructions, name, description, parallel_tools,
                                      approval, snapshot_key))
        built_tools, toolsets = build_tools(tools, problems)
        for transfer in handoff_tools(handoffs, Agent, problems):  # transfer_to_<agent>
            if transfer.name in built_tools:
                problems.append(f"two tools are named {transfer.name!r}")
            built_tools[transfer.name] = transfer
        resolved_output: Output[Any] | None = None
        try:
            resolved_output = as_output(str if output is None else output)
        except ConfigurationError as exc:
            problems.extend(exc.problems)
        if resolved_output is not None:
            problems.extend(output_clashes(resolved_output, built_tools))
        resolved_callbacks, callback_problems = Callbacks.collect(callbacks)
        problems.extend(f"callbacks: {p}" for p in callback_problems)
        problems.extend(check_limits(limits))
        if isinstance(limits, Limits) and resolved_model is not None:
            problems.extend(check_cost_limit(limits, resolved_model, summariser,
                                             built_tools.values()))
        problems.extend(check_model_settings(model_settings))
        problems.extend(check_trace_store(trace_store))
        problems.extend(check_playbook(playbook))
        problems.extend(check_tool_selection(tool_selection))
        guards, guard_problems = Guardrails.collect(guardrails)
        problems.extend(guard_problems)
        problems.extend(check_snapshot_ledger(snapshot_ledger))
        if grounding is not None and not isinstance(grounding, bool):
            problems.append("grounding must be True, False or None (on for local models), "
                            f"got {type(grounding).__name__}")
        if problems:
            raise ConfigurationError(problems, subject=f"agent {name!r}")
        assert resolved_model is not None and resolved_output is not None
        self._learned: LearnedRoutines | None = None
        if playbook is not None:  # what the tools are for, and the routines learned over them
            reserved = frozenset(d.name for d in resolved_output.tool_definitions)
            added = [r for r in playbook.attach(name, dict(built_tools), reserved,
                                                     new_agent=True)
                     if r.name not in built_tools and r.name not in reserved]
            built_tools.update((r.name, r) for r in added)
            self._learned = LearnedRoutines(playbook.routines_learned)  # added to each run

        self.model = resolved_model
        self.instructions = instructions
        self.input_type = input_type
        self._task = task
        self.description = description
        self.limits = limits
        #: (the agent's limits, them over the defaults): resolved once, not per run (Limits
        #: are frozen, so the pair stays right until ``self.limits`` is replaced).
        self._resolved_limits: tuple[Limits | None, Limits] = (limits, resolve_limits(limits))
        self.deps_type = deps_type
        definitions = tuple(
            ToolDefinition(t.spec.name, t.spec.description, t.spec.parameters)
            for t in built_tools.values()
        ) + resolved_output.tool_definitions
        self.model_settings = agent_settings(model_settings, resolved_output, definitions)
        self._core = AgentCore(
            name=name,
            instructions=instructions if isinstance(instructions, str) else "",
            tools=built_tools,
            definitions=definitions,
            output=resolved_output,
            parallel_tools=parallel_tools,
            tools_tokens=sum(len(str(d.parameters)) + len(d.description) for d in definitions)
            // 4,
            trace_store=trace_sink(trace_store),
            playbook=playbook,
            callbacks=resolved_callbacks,
            approval=approval,
            gated=approval is not None or any(t.requires_approval for t in built_tools.values()),
            snapshot_key=snapshot_key.encode() if isinstance(snapshot_key, str) else snapshot_key,
            snapshot_ledger=snapshot_ledger,
            guardrails=guards,
            grounding=grounds_by_default(resolved_model) if grounding is None else grounding,
            compaction_model=summariser,
        )
        # The callbacks' hook routes, built here once rather than by the agent's first run
        # (a batch of agents that each run once would otherwise pay for it in every run).
        resolved_callbacks.routes(TRACE_HANDLERS)
        self._toolsets = tuple(toolsets)
        self._handoffs = tuple(handoffs)  # (closed with this agent: their toolsets too)
        self.tool_selection = tool_selection
        #: The toolsets' last tool lists (kept, compared by identity) and the core built from them.
        self._expanded: Expanded | None = None

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def tools(self) -> dict[str, Tool[Any]]:
        return dict(self._core.tools)

    @property
    def approval(self) -> ApprovalPolicy | None:
        return self._core.approval

    @property
    def output(self) -> Output[Any]:
        return self._core.output

    def as_tool(self, name: str | None = None, description: str | None = None, *,
                policy: ToolPolicy | None = None, **options: Unpack[ToolOptions]) -> Tool[Any]:
        """This agent as a tool other agents can call: each call runs this agent inside the
        calling run (its limits bound the call, its usage and trace include it, cancelling it
        cancels the call). The tool takes ``input_type``'s fields (or ``{"input": "..."}``
        without one) and answers with this agent's output. See docs/teams.md."""
        return member_tool(self, name, description,
                           replace(policy or ToolPolicy(), **options) if options else policy)

    # -- running -----------------------------------------------------------------------------

    async def run(
        self,
        user_prompt: str | None = None,
        *,
        deps: DepsT | None = None,
        message_history: Sequence[Message] | None = None,
        limits: Limits | None = None,
        cancel_token: CancelToken | None = None,
        callbacks: CallbacksArg = None,
        run_id: str | None = None,
        conversation: Conversation | None = None,
        input: InputT | None = None,
    ) -> RunResult[OutputT]:
        """Run the agent once; raises an ``AgentError`` (carrying the partial result) on failure.

        With ``conversation=`` the history is the conversation's and the run's messages are
        appended to it when the run succeeds (:mod:`toolcycle.conversation`).
        """
        # (no await on the hot path)
        listed = await listed_within(self._run_core, self._own_core, self._run_limits(
            limits).timeout, cancel_token) if self._toolsets else Listed(*self._own_core(), None)
        if conversation is not None:
            check_run_conversation(conversation, message_history)
            run_id = run_id or uuid.uuid4().hex
            return await conversation.run(run_id, lambda history, summary: run_loop(
                listed.started(starting_from(self._new_state(
                    user_prompt, deps, history, limits, cancel_token, callbacks, run_id,
                    sink=None, core=listed.core, settings=listed.settings, task_input=input),
                    summary))))
        state = self._new_state(user_prompt, deps, message_history, limits, cancel_token,
                                callbacks, run_id, sink=None, core=listed.core,
                                settings=listed.settings, task_input=input)
        return await run_loop(listed.started(state))

    def run_sync(self, user_prompt: str | None = None, **kwargs: Any) -> RunResult[OutputT]:
        """Blocking :meth:`run` for scripts and notebooks without a running event loop.

        Every ``run_sync`` of a thread runs on the same event loop (kept until the interpreter
        exits), so provider clients keep their pooled connections from one call to the next
        instead of opening new ones (and a new TLS session) each time.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop running in this thread: the normal case
            return thread_runner().run(self.run(user_prompt, **kwargs))
        raise RuntimeError(
            "run_sync() cannot run inside a running event loop (Jupyter, an async framework): "
            "use `await agent.run(...)` there instead")

    def stream(
        self,
        user_prompt: str | None = None,
        *,
        deps: DepsT | None = None,
        message_history: Sequence[Message] | None = None,
        limits: Limits | None = None,
        cancel_token: CancelToken | None = None,
        callbacks: CallbacksArg = None,
        run_id: str | None = None,
        input: InputT | None = None,
    ) -> AgentStream[OutputT]:
        """Run with streaming: iterate the returned object for events, then read ``.result``."""
        if self._toolsets:  # the toolsets connect once the stream is iterated
            run_options(callbacks, limits)  # but bad options raise here, as without them
        return self._streamed(lambda sink, core, settings: self._new_state(
            user_prompt, deps, message_history, limits, cancel_token, callbacks, run_id, sink,
            core, settings, task_input=input), (limits, cancel_token))

    def _streamed(self, make: Callable[[Callable[[Event], None], AgentCore, ModelSettings],
                                       RunState],
                  new_run: tuple[Limits | None, CancelToken | None] | None = None,
                  lister: CoreLister | None = None) -> AgentStream[OutputT]:
        """A stream of the state ``make(sink, core, settings)`` builds: now, or once the stream
        is iterated for an agent with toolsets (they connect then, within a new run's limits
        and cancel token, ``new_run``; a resumed run's snapshot says the time it has left).
        ``lister``: what lists the core (a resume's: :class:`~.resuming.ResumeListing`)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        lister = lister or self
        if not lister._toolsets:
            return AgentStream(make(queue.put_nowait, *lister._own_core()), queue)

        async def prepare_state() -> RunState:
            if new_run is None:
                return make(queue.put_nowait, *await lister._run_core())
            listed = await listed_within(self._run_core, self._own_core,
                                         self._run_limits(new_run[0]).timeout, new_run[1])
            return listed.started(make(queue.put_nowait, listed.core, listed.settings))

        return AgentStream(None, queue, prepare_state)

    async def _run_core(self) -> tuple[AgentCore, ModelSettings]:
        """The agent's core with its toolsets' current tools (the same objects while no
        toolset's list changed, so a run without changes costs a comparison)."""
        if not self._toolsets:
            return self._own_core()
        core, settings, self._expanded = await with_toolsets(  # (_expanded read after it)
            *self._own_core(), self._toolsets, self._expanded)
        return core, settings

    def _listed_core(self) -> tuple[AgentCore, ModelSettings]:
        """The core with its toolsets' tools as last listed (its own before any listing)."""
        core, settings = self._own_core()
        return (self._expanded[1], self._expanded[2]) if self._expanded else (core, settings)

    def _own_core(self) -> tuple[AgentCore, ModelSettings]:
        """The agent's core with the routines its playbook learned since it was built."""
        if self._learned is None:
            return self._core, self.model_settings
        core, settings, changed = self._learned.over(self._core, self.model_settings)
        if changed:
            self._expanded = None  # the toolsets' core was built over the old one
        return core, settings

    async def close(self) -> None:
        """Close the agent's toolsets (an MCP server's process ends here), and those of the
        agents it hands off to; idempotent."""
        await close_toolsets(self._toolsets)
        for target in self._handoffs:
            await target.close()

    async def __aenter__(self) -> Agent[DepsT, OutputT]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _new_state(
        self, user_prompt: str | None, deps: Any, message_history: Sequence[Message] | None,
        limits: Limits | None, cancel_token: CancelToken | None, callbacks: CallbacksArg,
        run_id: str | None, sink: Callable[[Event], None] | None, core: AgentCore | None = None,
        settings: ModelSettings | None = None, task_input: Any = None,
        listeners: Callbacks | None = None, parent_call: tuple[str, str] | None = None,
    ) -> RunState:
        """Configuration in, a run's state out: the run itself is :mod:`toolcycle.run`'s.
        A team member's run (:mod:`toolcycle.agent.team`) also tells the calling run's
        ``listeners``, and ``parent_call`` names that run and its call."""
        core = core or self._core
        extra = None if callbacks is None and limits is None else run_options(callbacks, limits)
        if problems := check_cost_limit(limits, self.model, core.compaction_model,
                                        core.tools.values()):  # (limits checked already)
            raise ConfigurationError(problems, subject="run")
        task_input, user_prompt, instructions = start_run(
            self._task, self.instructions, task_input, user_prompt)
        settings = settings or self.model_settings
        selection = self.tool_selection
        core, settings = for_task(core, settings, selection, user_prompt)  # (and its plan)
        setup = RunSetup(
            core=core,
            model=self.model,
            settings=settings,
            limits=self._run_limits(limits),
            run_id=run_id or uuid.uuid4().hex,
            user_prompt=user_prompt,
            streaming=sink is not None,
            task_input=task_input,
            instructions=instructions,
            parent_call=parent_call,
        )
        own = core.callbacks if extra is None else core.callbacks.merged(extra)
        if listeners is not None:
            own = own.joined(listeners)
        state = prepare(setup, message_history, deps, cancel_token, own, sink)
        if user_prompt is not None and (selection is not None or core.plan is not None):
            state.trace.trace.tools_offered = [d.name for d in core.definitions]
        if self._toolsets:
            state.refresh_tools = refresher(self._run_core, self.tool_selection, state, user_prompt)
        return state

    def _run_limits(self, limits: Limits | None) -> Limits:
        """The run's limits over the agent's over the defaults (the cached part reused)."""
        agent_limits, resolved = self._resolved_limits
        if agent_limits is not self.limits:
            resolved = resolve_limits(self.limits)
            self._resolved_limits = (self.limits, resolved)
        return resolved if limits is None else limits.over(resolved)

    # -- resuming a paused run -----------------------------------------------------------------

    async def resume(
        self,
        snapshot: dict[str, Any] | str | bytes,
        approvals: Approvals,
        *,
        deps: DepsT | None = None,
        cancel_token: CancelToken | None = None,
        callbacks: CallbacksArg = None,
        conversation: Conversation | None = None,
    ) -> RunResult[OutputT]:
        """Continue a paused run (``result.snapshot``, or its JSON) with a person's decisions:
        ``approvals[request.call_id]`` is ``True`` to run the call or the reason to deny it, for
        every ``request`` in ``result.pending_approvals`` (or the ``Approval`` values of
        ``request.approve()`` / ``request.deny(reason)``). The run keeps its id, trace, usage
        and limits; the calls answered before the pause do not run again. It may pause again.
        A snapshot is resumed once: again, it raises :class:`~toolcycle.errors.SnapshotConsumed`.

        A run started on a ``conversation`` resumes with it (``Conversation.resume``).

        Raises :class:`~toolcycle.errors.SnapshotError` for a snapshot this agent cannot resume
        (changed, another version, another agent) and ``ConfigurationError`` for approvals that
        do not answer every pending call.
        """
        core, settings = await ResumeListing(self, snapshot)._run_core()  # (toolsets first)
        state = self._resumed_state(snapshot, approvals, deps, cancel_token, callbacks, None,
                                    core, settings)
        if conversation is None:
            return await run_loop(state)
        check_run_conversation(conversation, None)
        prior = state.messages[:state.new_message_index]
        return await conversation.resume(state.setup.run_id, prior, lambda: run_loop(state))

    def resume_stream(
        self,
        snapshot: dict[str, Any] | str | bytes,
        approvals: Approvals,
        *,
        deps: DepsT | None = None,
        cancel_token: CancelToken | None = None,
        callbacks: CallbacksArg = None,
    ) -> AgentStream[OutputT]:
        """:meth:`resume` with streaming, as :meth:`stream` is :meth:`run` with streaming."""
        lister = ResumeListing(self, snapshot)  # what must be listed first (toolsets)
        if lister._toolsets:
            run_options(callbacks, None)  # bad options raise here, as without toolsets
        return self._streamed(lambda sink, core, settings: self._resumed_state(
            snapshot, approvals, deps, cancel_token, callbacks, sink, core, settings),
            lister=lister)

    def _resumed_state(self, snapshot: dict[str, Any] | str | bytes, approvals: object,
                       deps: Any, cancel_token: CancelToken | None, callbacks: CallbacksArg,
                       sink: Callable[[Event], None] | None, core: AgentCore,
                       settings: ModelSettings) -> RunState:
        extra = run_options(callbacks, None)  # the run's callbacks added to the agent's
        return resume_as(self, snapshot, approvals, deps, cancel_token,
                         self._core.callbacks.merged(extra), sink, (core, settings))

    def resume_sync(self, snapshot: dict[str, Any] | str | bytes,
                    approvals: Approvals, **kwargs: Any) -> RunResult[OutputT]:
        """Blocking :meth:`resume` (on the same per-thread event loop as :meth:`run_sync`)."""
        return thread_runner().run(self.resume(snapshot, approvals, **kwargs))

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, model={self.model.name!r}, tools={list(self._core.tools)})"

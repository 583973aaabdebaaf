"""The data of one run: its frozen setup beside its mutable state.

:class:`AgentCore` is what an agent precomputes once for all its runs; :class:`RunSetup` adds
what one run fixes at its start (model, settings, limits, ids). :class:`RunState` is what
changes while the run goes: the conversation (append-only), counters, usage, the open turn,
the held answer to the output call, and the trace builder. Its methods are small and only
about the data; every decision is taken in :mod:`toolcycle.run.loop`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..approval import ApprovalPolicy, Decision
from ..context import CancelToken, RunContext
from ..errors import ConfigurationError
from ..events import CallbackError, Callbacks, Emitter, Event, RunResumed
from ..guardrails import Guardrails
from ..limits import Limits, RepeatGuard
from ..logs import run_callbacks
from ..media import MediaPart, media_in
from ..messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult, Usage
from ..models.base import Model, ModelSettings, ToolDefinition
from ..output import HeldAnswer, Output
from ..output_modes import OutputMode
from ..result import RunResult, Termination
from ..tools import Tool
from ..tracing.recorder import TraceBuilder, TraceSink
from ..tracing.trace import Trace
from .context_view import ContextView
from .paused import PausedRun
from .plan import PlaybookHook as PlaybookHook  # (defined there; imported from here before)
from .plan import RunPlan
from .scope import Interrupts


class ToolSelector(Protocol):
    """What the agent needs from a tool selection (:class:`toolcycle.tool_selection.
    ToolSelection` is one): the tools to offer a run, given its task; ``keep`` names tools that
    must stay (the output and submit tools)."""

    def select(self, task: str, tools: Sequence[ToolDefinition],
               keep: frozenset[str] = frozenset()) -> tuple[ToolDefinition, ...]: ...


@runtime_checkable
class ToolStandIns(Protocol):
    """A tool selection that also has some offered tools answered by another implementation
    for the run (the playbook says the same through :class:`~toolcycle.run.plan.RunPlan`).
    Each stand-in keeps the tool's name."""

    def stand_ins(self, task: str, offered: frozenset[str]) -> Mapping[str, Tool[Any]]: ...


@runtime_checkable
class FirstCallRequired(Protocol):
    """A tool selection that may have a run begin with a tool call: the playbook, for a run
    shown a learned sequence (``Call order_lookup(order_id), then track_parcel(...)``).
    ``first_call`` returns the run's first ``tool_choice``: ``"required"``, the name of an
    offered tool (the sequence's first), or ``None`` to leave the model free. It holds only
    until the run's first tool call (see ``toolsets.request_settings``)."""

    def first_call(self, task: str, offered: frozenset[str]) -> str | None: ...


@runtime_checkable
class AnswerWhenDone(Protocol):
    """A tool selection that may have a run answer once its calls have done what the task
    needs: the playbook, for a run shown a learned sequence ("Call vertex(name), then
    answer"). ``answer_when`` returns a test of the run's trace, or ``None``; after a turn of
    calls that passes it, the next request is made with ``tool_choice="none"`` (text output
    only: there the answer is the reply itself; see ``toolsets.request_settings``).
    ``answered_for``: the offered tools whose calls the run's stand-ins answer (none under an
    approval policy)."""

    def answer_when(self, task: str, offered: frozenset[str], answered_for: frozenset[str]
                    ) -> Callable[[Trace], bool] | None: ...


@runtime_checkable
class HeadStart(Protocol):
    """A tool selection that may make a run's first tool call itself, before the first model
    request: the playbook, where a learned sequence's first call takes the one value the task
    names (:mod:`toolcycle.playbook.sequence`). ``head_start`` returns the call (an offered
    tool's name and its arguments), or ``None``; the loop makes it as a turn of its own
    (:mod:`toolcycle.run.head_start`)."""

    def head_start(self, task: str, offered: frozenset[str]) -> tuple[str, dict[str, Any]] | None:
        ...


@dataclass(frozen=True, slots=True)
class AgentCore:
    """The immutable, precomputed part of an agent shared by all its runs."""

    name: str
    instructions: str
    tools: dict[str, Tool[Any]]
    definitions: tuple[ToolDefinition, ...]
    output: Output[Any]
    parallel_tools: bool
    tools_tokens: int  # the tool definitions' share of every request, estimated once
    trace_store: TraceSink | None = None
    playbook: PlaybookHook | None = None
    callbacks: Callbacks = field(default_factory=Callbacks)
    #: Tool approval (toolcycle.approval): the agent's policy, and whether any call can need a
    #: decision at all (a policy, or a tool with ``requires_approval``): read once per turn.
    approval: ApprovalPolicy | None = None
    gated: bool = False
    #: Signs paused runs' snapshots (HMAC); without it they carry a plain digest.
    snapshot_key: bytes | None = None
    #: Where resumes record the snapshots they consume (``toolcycle.stores.ledger``): a
    #: ``SnapshotLedger``, a store location, or ``None`` for the shared default ledger.
    snapshot_ledger: object = None
    #: Why a toolset could not list its tools for this run (the run then ends at its start
    #: with ``ToolsUnavailable``, trace stored); ``None`` nearly always.
    tools_unavailable: str | None = None
    #: What the toolsets could not offer this run (a toolset that failed to list, a tool whose
    #: name was taken), one line each: logged, and recorded in the run's trace.
    toolset_problems: tuple[str, ...] = ()
    #: The run's tool selection's test of when its calls are done (:class:`AnswerWhenDone`);
    #: set per run by ``toolsets.selected``, ``None`` for an agent without one.
    answer_when: Callable[[Trace], bool] | None = None
    #: The run's plan's test of a sequence begun and not finished
    #: (:attr:`~toolcycle.run.plan.RunPlan.call_while`), set per run like ``answer_when``.
    call_while: Callable[[Trace], bool] | None = None
    #: The agent's guardrails by kind (docs/guardrails.md); ``None`` for none (nearly all).
    guardrails: Guardrails | None = None
    #: The call the run's tool selection makes before the first request (:class:`HeadStart`),
    #: set per run like ``answer_when``; ``None`` nearly always.
    head_start: tuple[str, dict[str, Any]] | None = None
    #: Check that the answer's figures and names come from a source (:mod:`.grounding`).
    grounding: bool = False
    #: Writes the summaries of context compaction (:mod:`toolcycle.run.compaction`); ``None``:
    #: the run's own model.
    compaction_model: Model | None = None
    #: The plan the agent's playbook gave this run (:mod:`toolcycle.run.plan`), set per run by
    #: ``toolsets.selected`` where it changes anything; ``None`` nearly always.
    plan: RunPlan | None = None


class HandoffTarget(Protocol):
    """An agent as a handoff sees it: what the run becomes once handed to it."""

    @property
    def name(self) -> str: ...

    def handoff_core(self, task: str | None) -> tuple[AgentCore, Model, ModelSettings]:
        """The agent's core (tools, output, instructions), model and request settings for the
        run of ``task`` (its prompt) handed to it: its tools as its own tool selection (and
        playbook) offer them for that task, as in a run of its own."""
        ...

    def refresher(self, task: str | None
                  ) -> Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None:
        """How the run lists the agent's toolsets before each request once handed to it, its
        selection applied to what they list (``None`` for an agent without toolsets)."""
        ...


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What one run fixes when it starts."""

    core: AgentCore
    model: Model
    settings: ModelSettings
    limits: Limits
    run_id: str
    user_prompt: str | None
    streaming: bool = False
    task_input: Any = None  # the validated input= (ctx.input)
    #: This run's instructions when not the agent's string: a rendered template or a callable
    #: of the run's context.
    instructions: str | Callable[[RunContext[Any]], str] | None = None
    #: A team member's run: the calling run's id and the call's (``RunStart`` says so).
    parent_call: tuple[str, str] | None = None


@dataclass(slots=True, eq=False)
class Turn:
    """The calls of one assistant message and their answers, kept as each call finishes."""

    attempt: int
    iteration: int
    calls: list[ToolCall]
    answers: dict[str, tuple[ToolResult, str | None, float]] = field(default_factory=dict)
    started: dict[str, float] = field(default_factory=dict)  # announced calls -> start time
    reported: set[str] = field(default_factory=set)  # answers already sent as events
    stopped: str | None = None  # why the calls still to come are not executed
    #: Approval decisions by call id (only when the agent gates calls), and where a resumed
    #: turn goes on (the calls before were answered before the run paused).
    decisions: dict[str, Decision] | None = None
    resume_from: int = 0
    #: A team (:mod:`toolcycle.run.team`): the members whose runs paused in this turn, by the
    #: call that runs each (its paused result); and, in a resumed turn, the paused members'
    #: runs still to resume, by call. ``None`` nearly always.
    paused_members: dict[str, RunResult[Any]] | None = None
    resuming: dict[str, PausedRun] | None = None


@dataclass(slots=True, eq=False)
class RunState:
    """The mutable state of one run (see the module docstring)."""

    setup: RunSetup
    messages: list[Message]
    new_message_index: int
    ctx: RunContext[Any]
    emitter: Emitter
    trace: TraceBuilder
    interrupts: Interrupts
    usage: Usage
    #: Record an event into the trace, then tell the callbacks (and the stream): the emitter's
    #: ``emit``, with the trace builder as the first listener of every hook it records.
    emit: Callable[[Event], Awaitable[None]]
    limits: Limits  # the run's resolved limits (setup.limits, read on every iteration)
    output: Output[Any]  # setup.core.output, read on every iteration
    attempt: int = 0
    iteration: int = 0
    attempt_iterations: int = 0
    phase: str = "starting"
    tool_counts: dict[str, int] = field(default_factory=dict)
    executed_calls: int = 0
    #: The last assistant turn while some of its calls are unanswered.
    turn: Turn | None = None
    #: The answer to the output (or submit) call, until the output is judged.
    held: HeldAnswer | None = None
    last_output: Any = None
    last_preview_args: dict[str, Any] | None = None
    #: The final request at a limit is being made (tools withdrawn or the output tool forced).
    forcing: bool = False
    #: Structured output: the modes this run tries (:mod:`.modes`), the attempt's, the modes
    #: whose instructions the model was given, and the tools offered per mode.
    mode_chain: tuple[OutputMode, ...] = ()
    mode_index: int = 0
    modes_told: set[OutputMode] = field(default_factory=set)
    mode_tools: dict[OutputMode, tuple[ToolDefinition, ...]] = field(default_factory=dict)
    #: The compacted view of the history the requests send (:mod:`.compaction`); ``None``
    #: until the run's first compaction.
    view: ContextView | None = None
    compaction_paid: Usage = field(default_factory=Usage)  # summaries not yet in a step
    counts_tokens: bool = False  # a token budget is set: the history's size is tracked
    history_chars: int = 0  # kept only with a token budget
    #: Every tool call id in the conversation: a reply may not reuse one (see repair_reply).
    call_ids: set[str] = field(default_factory=set)
    closed_attempts: set[int] = field(default_factory=set)
    termination: Termination | None = None
    #: An agent with toolsets: their current tools, asked before each model request (an MCP
    #: server may change its list mid-run); ``None`` for an agent without (nearly all).
    refresh_tools: Callable[[], Awaitable[tuple[AgentCore, ModelSettings]]] | None = None
    #: A run continued from a snapshot: the event that opens it.
    resumed: RunResumed | None = None
    #: The seconds the run has when it starts (``None``: no timeout): its timeout, less what
    #: its toolsets' listing took, or what a paused run had left at its snapshot.
    timeout_left: float | None = None
    #: The playbook's advice appended to this run's instructions (learned from other runs'
    #: tasks): grounding reads no figure or name of it as a source (:mod:`.grounding`).
    learned_advice: str = ""
    #: A run of a team member (an agent called as a tool): the runs it sits inside, outermost
    #: first. Their limits bound this run too, and what it uses is counted in theirs as it
    #: happens (:mod:`toolcycle.run.team`). Empty for a run of its own (nearly all).
    ancestors: tuple[RunState, ...] = ()
    #: Who hears this run's events (the agent's callbacks and the run's): a team member's
    #: run tells them too (:mod:`toolcycle.run.team`).
    listeners: Callbacks | None = None
    #: The loop guard (``Limits.max_repeats``; ``None`` when turned off), and the call it
    #: refused that the model made again: the run then ends (``Limits.reached``).
    repeats: RepeatGuard | None = None
    stuck: str | None = None
    #: The note the loop guard appended to a call's result, by call id (the model reads it;
    #: the checks read the tool's own text, :meth:`tool_text`).
    loop_notes: dict[str, str] = field(default_factory=dict)
    #: Input guardrails running beside the first request (``guards.start_beside``), until
    #: the first reply is in.
    input_check: asyncio.Task[Any] | None = None
    #: The agent a handoff call of the open turn hands the run to (``team.hand_off``).
    handoff: HandoffTarget | None = None
    #: The runs of the agents this run called or handed off to, in the order they started
    #: (theirs included): ``result.runs``.
    runs: list[RunResult[Any]] = field(default_factory=list)
    #: The result, once the run ended (any way): a team reads a member's from here, a
    #: cancelled member's too.
    result: RunResult[Any] | None = None
    #: A resumed run's claim on its pause in the ledger of consumed snapshots (blocking; run
    #: in a thread before anything of the run executes); ``None`` for a run that starts.
    claim: Callable[[], None] | None = None

    def said_text(self, message: Message) -> str:
        """What a user or system message says for the checks of an answer: a system
        message without the playbook's advice (:attr:`learned_advice`: learned from other
        tasks, it is neither a source of figures nor part of what was asked)."""
        if message.role == "system" and self.learned_advice:
            return message.text.replace(self.learned_advice, "")
        return message.text

    def tool_text(self, result: ToolResult) -> str:
        """What the tool returned: ``result``'s content without the loop guard's note.

        Why: the checks of an answer read results as the tool's evidence, and the note is
        the loop's ("returned this same result 3 times"): read as a result, it made an empty
        one hold something, and its "3" a source for a small model's invented count of 3."""
        note = self.loop_notes.get(result.call_id)
        return result.content.removesuffix(note) if note else result.content

    # -- what the limits read (toolcycle.limits.RunCounts) ------------------------------------

    @property
    def deadline(self) -> float | None:
        return self.interrupts.deadline

    @property
    def upcoming_input_tokens(self) -> int:
        """Estimated input tokens of the next request (tracked only with a token budget)."""
        saved = self.view.saved_chars if self.view is not None else 0
        return (self.history_chars - saved) // 4 + self.setup.core.tools_tokens

    # -- shorthands ----------------------------------------------------------------------------

    @property
    def reflecting(self) -> bool:
        """Reflection is on, except for the forced output request at a limit."""
        return self.output.reflect is not None and not self.forcing

    # -- small operations on the data -----------------------------------------------------------

    def append(self, message: Message) -> None:
        self.messages.append(message)
        if self.counts_tokens:
            self.history_chars += message_chars(message)

    def start_attempt(self) -> None:
        self.attempt += 1
        self.attempt_iterations = 0
        self.ctx.attempt = self.attempt
        self.ctx.attempt_state.clear()
        self.last_preview_args = None

    def next_iteration(self) -> int:
        self.iteration += 1
        self.attempt_iterations += 1
        self.ctx.iteration = self.iteration
        for outer in self.ancestors:  # a member's requests are the team's iterations too
            outer.attempt_iterations += 1
        return self.iteration

    def spend(self, usage: Usage) -> None:
        """Count ``usage`` in this run and in every run it sits inside (one team, one bill)."""
        self.usage.add(usage)
        for outer in self.ancestors:
            outer.usage.add(usage)


def message_chars(message: Message) -> int:
    """The characters a message adds to a request (≈ 4 per token), with a little overhead."""
    total = 8
    for part in message.parts:
        if isinstance(part, TextPart | ThinkingPart):
            total += len(part.text)
        elif isinstance(part, ToolCall):
            total += len(part.name) + len(part.raw_arguments)
        elif isinstance(part, MediaPart):  # providers bill ~1,000 tokens for an image or page
            total += 4_000
        else:
            total += len(part.content) + 4_000 * len(part.media)
    return total


def prepare(
    setup: RunSetup,
    history: Sequence[Message] | None,
    deps: Any,
    cancel_token: CancelToken | None,
    callbacks: Callbacks,
    sink: Callable[[Event], None] | None,
) -> RunState:
    """A new run's state: the playbook's advice in the instructions, the prompt appended,
    the history checked (a run needs a user message to answer)."""
    core = setup.core
    messages = list(history or ())
    trace = Trace(setup.run_id, core.name, setup.model.name, setup.user_prompt)
    if media := media_in(messages):  # what the model was shown, without the bytes
        trace.metadata["media"] = [part.summary() for part in media]
    ctx = new_context(setup, Usage(), deps, cancel_token)
    given = setup.instructions
    instructions = core.instructions if given is None else (
        given if isinstance(given, str) else given(ctx))
    if not isinstance(instructions, str):
        raise ConfigurationError([f"instructions(ctx) must return a string, got "
                                  f"{type(instructions).__name__}"], subject="run")
    base, shown, advice = instructions, list[str](), ""
    if core.playbook is not None:
        advice, shown = core.playbook.instructions_for(
            setup.user_prompt or "", core.name, [d.name for d in core.definitions]
        )
        if advice:
            instructions = f"{instructions}\n\n{advice}" if instructions else advice
    if messages and messages[0].role == "system":
        if _written_by_the_agent(messages[0].text, base, instructions):
            messages[0] = Message.system(instructions)  # this run's advice, not an old run's
        else:  # the caller's own system message stands, and the advice is not shown
            shown = []
    elif instructions:
        messages.insert(0, Message.system(instructions))
    # a tool's lessons are in its description (RunPlan.notes), shown whatever the system
    # message: the model reads them wherever it reads about the tool
    noted = () if core.plan is None else core.plan.noted
    trace.strategies_shown = [*shown, *(i for i in noted if i not in shown)]
    new_index = len(messages)
    if setup.user_prompt is not None:
        messages.append(Message.user(setup.user_prompt))
    if not messages or messages[-1].role == "assistant":
        raise ConfigurationError(
            ["a run needs a user prompt (or a message history ending in a user message)"],
            subject="run",
        )
    state = assemble(setup, messages, new_index, trace, ctx, cancel_token, callbacks, sink)
    state.learned_advice = advice if shown else ""
    return state


def _written_by_the_agent(text: str, base: str, instructions: str) -> bool:
    """Whether a history's system message is the one an earlier run of this agent wrote:
    its instructions (``base``), and then the playbook's advice for that run's task.

    Why: a history passed back (``message_history=result.messages``) begins with the earlier
    run's system message, advice for the earlier task included; kept, the new task got that
    advice and not its own, while the trace said its own was shown, and the playbook learned
    from runs its strategies never reached. A system message of the caller's own stands."""
    if base:
        return text == base or text.startswith(f"{base}\n\n")
    header = instructions.partition("\n")[0]  # no instructions: the advice's own first line
    return bool(header) and text.startswith(header)


def new_context(setup: RunSetup, usage: Usage, deps: Any,
                cancel_token: CancelToken | None) -> RunContext[Any]:
    """The run context of a new run (:func:`prepare`) or a resumed one: same run id, the given
    usage (a resumed run continues its own), the task input and prompt."""
    return RunContext(
        deps=deps, usage=usage, cancel_token=cancel_token or CancelToken(), run_id=setup.run_id,
        agent_name=setup.core.name, input=setup.task_input, prompt=setup.user_prompt,
        model=setup.model,
    )


def assemble(
    setup: RunSetup,
    messages: list[Message],
    new_index: int,
    trace: Trace,
    ctx: RunContext[Any],
    cancel_token: CancelToken | None,
    callbacks: Callbacks,
    sink: Callable[[Event], None] | None,
) -> RunState:
    """A run's state around its conversation, trace and usage: a new run's (:func:`prepare`)
    or a paused one's (:func:`toolcycle.run.approvals.restore`)."""
    core = setup.core
    token = ctx.cancel_token
    usage = ctx.usage
    errors: list[CallbackError] = []

    def sink_failed(what: str, exc: Exception) -> None:
        errors.append(CallbackError(what, repr(core.trace_store), exc))

    builder = TraceBuilder(trace, core.trace_store, sink_failed)
    emitter = Emitter(callbacks.merged(run_callbacks()), sink, recorder=builder)
    emitter.errors = errors
    state = RunState(
        setup=setup,
        messages=messages,
        new_message_index=new_index,
        ctx=ctx,
        emitter=emitter,
        trace=builder,
        interrupts=Interrupts(token, watching_token=cancel_token is not None),
        usage=usage,
        emit=emitter.emit,
        limits=setup.limits,
        output=core.output,
        counts_tokens=setup.limits.counts_tokens,
        listeners=callbacks,
        repeats=RepeatGuard(setup.limits.max_repeats) if setup.limits.max_repeats else None,
        call_ids={c.id for m in messages if m.role == "assistant" for c in m.tool_calls},
        timeout_left=setup.limits.timeout,
    )
    if setup.limits.counts_tokens:
        state.history_chars = sum(message_chars(m) for m in messages)
    return state

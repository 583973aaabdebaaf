"""Typed events of a run, the callbacks that receive them, and safe invocation.

The same event objects go to callbacks (``on_<hook>`` functions or objects with such methods)
and out of :meth:`Agent.stream`. A callback that raises never breaks the run: its error is
collected into ``result.callback_errors``. Callbacks are resolved once per agent, so emitting
an event nobody listens to costs one dictionary lookup.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from .approval import ApprovalRequest, Decision
from .messages import Message, ToolCall, ToolResult, Usage, bounded_repr
from .status import RunStatus


@dataclass(slots=True)
class Event:
    hook: ClassVar[str] = "event"


@dataclass(slots=True)
class RunStart(Event):
    hook: ClassVar[str] = "on_run_start"
    run_id: str
    agent_name: str
    user_prompt: str | None
    model_name: str = ""
    #: The adapter's provider family (``Model.system``: "openai", "anthropic", "local", ...).
    model_system: str = ""
    #: A team member's run (``Agent.as_tool``): the run and the call that started it. Its
    #: events reach the calling run's callbacks and stream too, from this event to its
    #: ``RunSuccess``/``RunFailure``; ``None`` for a run of its own.
    parent_run_id: str | None = None
    parent_call_id: str | None = None


@dataclass(slots=True)
class AttemptStart(Event):
    hook: ClassVar[str] = "on_attempt_start"
    attempt: int


@dataclass(slots=True)
class IterationStart(Event):
    hook: ClassVar[str] = "on_iteration_start"
    attempt: int
    iteration: int
    forced: bool = False
    #: The request's ``tool_choice``: ``"auto"``, a call required or named (an agent's
    #: setting, structured output, a playbook's first call), or ``"none"`` (the answer asked
    #: for: at a limit, or once the playbook's sequence was done); ``None`` if not told.
    tool_choice: str | None = None


@dataclass(slots=True)
class TextDeltaEvent(Event):
    """Streaming only: a piece of the model's text. It may precede tool calls, so it is not
    the final answer until :class:`FinalResult` says so."""

    hook: ClassVar[str] = "on_text_delta"
    iteration: int
    text: str


@dataclass(slots=True)
class ModelResponseEvent(Event):
    hook: ClassVar[str] = "on_model_response"
    attempt: int
    iteration: int
    message: Message
    usage: Usage
    duration_ms: float
    #: What had to be changed for the reply to enter the history (an invalid tool name, a
    #: reused call id, an empty turn), in words; empty nearly always.
    repairs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ToolCallEvent(Event):
    """Before a tool runs (also fired for the output tool, ``submit`` and unknown tools)."""

    hook: ClassVar[str] = "on_tool_call"
    attempt: int
    iteration: int
    call: ToolCall
    #: ``tool``, ``output``, ``submit``, ``unknown`` (no such tool) or ``refused`` (tools were
    #: withdrawn for the final request at a limit).
    kind: str = "tool"
    #: The approval decision the call got (only when the agent gates calls: see
    #: :mod:`toolcycle.approval`); a denied call is answered with ``error_type="denied"``.
    approval: Decision | None = None


@dataclass(slots=True)
class ToolResultEvent(Event):
    """After a tool ran, on success and on error alike."""

    hook: ClassVar[str] = "on_tool_result"
    attempt: int
    iteration: int
    call: ToolCall
    result: ToolResult
    duration_ms: float
    #: Why the call failed, when ``result.is_error``: the class name of the exception the tool
    #: raised, or ``timeout``, ``invalid_arguments``, ``unknown_tool``, ``call_limit``,
    #: ``unserializable_result``, ``tools_disabled``, ``output_rejected``, ``cancelled``,
    #: ``run_stopped``, ``denied`` (an approval decision). Set where the observation is
    #: written, so telemetry never parses text.
    error_type: str | None = None


@dataclass(slots=True)
class LoopGuardEvent(Event):
    """The loop guard acted on a call (``Limits.max_repeats``): ``action`` is ``"nudge"`` (its
    observation says the result is the same as before), ``"refuse"`` (not run) or ``"stop"``
    (refused again: the run ends). ``repeats``: how many times in a row it returned the same
    result."""

    hook: ClassVar[str] = "on_loop_guard"
    attempt: int
    iteration: int
    call: ToolCall
    action: str
    repeats: int


@dataclass(slots=True)
class GuardrailEvent(Event):
    """A guardrail tripped (docs/guardrails.md): its ``kind`` (``"input"``, ``"output"``,
    ``"tool_arguments"``, ``"tool_result"``), ``name`` and ``reason``; ``call_id`` for a tool
    guardrail; ``halted``: the run ends (input and output guardrails always, a tool guardrail
    when its trip says so; otherwise only the call was blocked or its result withheld)."""

    hook: ClassVar[str] = "on_guardrail"
    kind: str
    name: str
    reason: str
    info: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    halted: bool = True


@dataclass(slots=True)
class HandoffEvent(Event):
    """The run was handed from one agent to another (``Agent(handoffs=[...])``): the next
    request is the new agent's, with its instructions, tools and output type."""

    hook: ClassVar[str] = "on_handoff"
    attempt: int
    iteration: int
    from_agent: str
    to_agent: str


@dataclass(slots=True)
class ValidationFailure(Event):
    hook: ClassVar[str] = "on_validation_failure"
    attempt: int
    errors: list[str]
    validator: str | None = None
    code: str = "VALIDATION"


@dataclass(slots=True)
class AttemptEnd(Event):
    hook: ClassVar[str] = "on_attempt_end"
    attempt: int
    success: bool
    #: When the run failed inside the attempt: why, and the error's code.
    error: str | None = None
    code: str | None = None


@dataclass(slots=True)
class FinalResult(Event):
    """The run produced its output (streaming: the last event before the run ends)."""

    hook: ClassVar[str] = "on_final_result"
    output: Any


@dataclass(slots=True)
class RunSuccess(Event):
    """The run returned a result. Not necessarily a success: ``status`` says how it ended
    (``"success"``, or ``"forced"``, ``"partial"``, ``"tool_error"``: docs/status.md), as
    ``result.status`` does; the hook keeps its name for the callbacks written against it."""

    hook: ClassVar[str] = "on_success"
    result: Any
    status: RunStatus = "success"


@dataclass(slots=True)
class RunFailure(Event):
    """The run raised: ``status`` is ``"failure"`` or ``"cancelled"``."""

    hook: ClassVar[str] = "on_failure"
    error: BaseException
    result: Any
    status: RunStatus = "failure"


@dataclass(slots=True)
class RunPaused(Event):
    """Calls wait for a person's decision: the run returns ``result.status == "paused"`` with
    ``result.snapshot``, which ``agent.resume`` continues."""

    hook: ClassVar[str] = "on_pause"
    run_id: str
    attempt: int
    iteration: int
    pending: list[ApprovalRequest]
    result: Any = None


@dataclass(slots=True)
class RunResumed(Event):
    """A paused run goes on (instead of :class:`RunStart`): the decisions on its pending calls."""

    hook: ClassVar[str] = "on_resume"
    run_id: str
    decisions: dict[str, Decision]
    #: The run's trace as it was when it paused (a callback recorder continues from it).
    trace: Any = None


HOOKS: tuple[str, ...] = (
    "on_run_start",
    "on_attempt_start",
    "on_iteration_start",
    "on_text_delta",
    "on_model_response",
    "on_tool_call",
    "on_tool_result",
    "on_loop_guard",
    "on_guardrail",
    "on_handoff",
    "on_validation_failure",
    "on_attempt_end",
    "on_final_result",
    "on_success",
    "on_failure",
    "on_pause",
    "on_resume",
)


@dataclass(slots=True)
class CallbackError:
    """A callback that raised: which hook, which callback, what error."""

    hook: str
    callback: str
    error: BaseException

    def __str__(self) -> str:
        return f"{self.hook} ({self.callback}): {type(self.error).__name__}: {self.error}"


Callback = Callable[[Any], Any]
#: How the emitter delivers one hook's events: the recorder's handler (if it records them),
#: then the callbacks.
Route = tuple[Callable[[Any, Any], None] | None, list[Callback]]
CallbacksArg = Iterable[object] | Mapping[str, Callback | Iterable[Callback]] | object | None


@dataclass(slots=True)
class Callbacks:
    """Listeners resolved once: hook name -> callables, plus an optional stream sink."""

    by_hook: dict[str, list[Callback]] = field(default_factory=dict)
    #: The emitter's routes for one recorder's handlers, built by the first run and shared by
    #: the next ones (an agent's listeners do not change between its runs): (handlers, routes).
    _routes: tuple[Mapping[str, Any], dict[str, Route]] | None = field(
        default=None, repr=False, compare=False)

    def routes(self, handlers: Mapping[str, Callable[[Any, Any], None]]) -> dict[str, Route]:
        """Hook -> (the recorder's handler, the callbacks): one lookup per event."""
        cached = self._routes
        if cached is not None and cached[0] is handlers:
            return cached[1]
        by_hook = self.by_hook
        routes: dict[str, Route] = {hook: (handlers.get(hook), by_hook.get(hook) or [])
                                    for hook in {*handlers, *by_hook}}
        self._routes = (handlers, routes)
        return routes

    @classmethod
    def collect(cls, *sources: CallbacksArg) -> tuple[Callbacks, list[str]]:
        """Accept objects with ``on_*`` methods, mappings of hook -> callable(s), or lists;
        return the listeners and every source that is none of these (a value that provides no
        hook would otherwise be ignored in silence). The agent reports those problems in its
        :class:`~toolcycle.errors.ConfigurationError`."""
        resolved = cls()
        problems: list[str] = []
        for source in sources:
            resolved._add_source(source, problems)
        return resolved, problems

    def _add_source(self, source: CallbacksArg, problems: list[str]) -> None:
        self._routes = None  # listeners change: routes are built again
        if source is None:
            return
        if isinstance(source, Mapping):
            for hook, value in source.items():
                if hook not in HOOKS:
                    problems.append(f"unknown callback hook {hook!r}; known: {', '.join(HOOKS)}")
                    continue
                funcs = [value] if callable(value) else _callables(value)
                if funcs is None:
                    problems.append(f"callback for {hook!r} must be a callable or a list of "
                                    f"callables, got {_shown(value)}")
                    continue
                self.by_hook.setdefault(hook, []).extend(funcs)
            return
        if isinstance(source, list | tuple):
            for item in source:
                self._add_source(item, problems)
            return
        found = False
        for hook in HOOKS:
            method = getattr(source, hook, None)
            if callable(method):
                self.by_hook.setdefault(hook, []).append(method)
                found = True
        if not found:
            problems.append(f"callbacks must be objects with on_* methods, mappings of hook to "
                            f"callable(s) or lists of those; {_shown(source)} has no on_* method")

    def joined(self, other: Callbacks) -> Callbacks:
        """These listeners, then those of ``other`` not among them: a team member's run
        tells its own agent's callbacks and the calling run's, each callback once."""
        if not other.by_hook:
            return self
        combined = Callbacks({k: list(v) for k, v in self.by_hook.items()})
        for hook, funcs in other.by_hook.items():
            present = combined.by_hook.setdefault(hook, [])
            present.extend(f for f in funcs if f not in present)
        return combined

    def merged(self, other: Callbacks) -> Callbacks:
        """These listeners, then ``other``'s; ``self`` itself when ``other`` has none (so its
        cached routes are kept: a run that passes no callbacks builds none)."""
        if not other.by_hook:
            return self
        combined = Callbacks({k: list(v) for k, v in self.by_hook.items()})
        for hook, funcs in other.by_hook.items():
            combined.by_hook.setdefault(hook, []).extend(funcs)
        return combined


def _callables(value: Any) -> list[Callback] | None:
    """``value`` as a list of callables, or ``None`` when it is not an iterable of them."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        return None
    funcs = list(value)
    return funcs if all(callable(f) for f in funcs) else None


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {bounded_repr(value)}"[:80]


class Recorder(Protocol):
    """What the emitter tells first about every event: the run's trace builder.

    ``handlers`` maps a hook to the function that records its events, called as
    ``handler(recorder, event)``: the emitter looks it up itself, which saves a call per event.
    """

    @property
    def handlers(self) -> Mapping[str, Callable[[Any, Any], None]]: ...


_NO_HANDLERS: Mapping[str, Callable[[Any, Any], None]] = {}


class _Done:
    """An awaitable that is already finished, shared: what :meth:`Emitter.emit` returns when
    no callback needs awaiting. ``await`` on it runs no Python code (its ``__await__`` is an
    empty tuple's iterator), where an ``async def`` would build and run a coroutine per event:
    four per iteration on the loop's hot path."""

    __slots__ = ()
    __await__ = ().__iter__


DONE: Awaitable[None] = _Done()  # type: ignore[assignment]


class Emitter:
    """Delivers events of one run to its recorder, then its callbacks and, when streaming, a
    sink. The recorder hears each event first, so a callback reads a trace that includes it.

    :meth:`emit` is a plain function that returns an awaitable: :data:`DONE` when every
    callback was synchronous (the common case, and free), or a coroutine that awaits the first
    callback that returned an awaitable and then goes on with the rest, in order. Either way
    the caller writes ``await emitter.emit(event)``.
    """

    __slots__ = ("_recorder", "_routes", "_sink", "errors")

    def __init__(self, callbacks: Callbacks, sink: Callable[[Event], None] | None = None,
                 recorder: Recorder | None = None) -> None:
        self._recorder = recorder
        self._routes = callbacks.routes(_NO_HANDLERS if recorder is None else recorder.handlers)
        self._sink = sink
        self.errors: list[CallbackError] = []

    @property
    def sink(self) -> Callable[[Event], None] | None:
        """The stream's sink (a streaming run's queue), which a team member's run shares."""
        return self._sink

    def notify(self, event: Event) -> Awaitable[None]:
        """Deliver to the callbacks and the stream only: the recorder has it already."""
        return self.emit(event, recorded=True)

    def emit(self, event: Event, recorded: bool = False) -> Awaitable[None]:
        route = self._routes.get(event.hook)
        if route is None:  # neither recorded nor listened to
            if self._sink is not None:
                self._sink(event)
            return DONE
        handler, funcs = route
        if handler is not None and not recorded:
            handler(self._recorder, event)
        if self._sink is not None:
            self._sink(event)
        if not funcs:
            return DONE
        index = 0
        for func in funcs:  # _call(event, funcs, 0) inline: a call less
            try:
                outcome = func(event)
            except Exception as exc:  # a callback must never break the run
                self._failed(event, func, exc)
            else:
                # cheap check first: inspect.isawaitable goes through an ABC check
                if outcome is not None and inspect.isawaitable(outcome):
                    return self._awaiting(event, funcs, index, outcome)
            index += 1  # noqa: SIM113 (enumerate allocates per event, on the hot path)
        return DONE

    def _call(self, event: Event, funcs: list[Callback], start: int) -> Awaitable[None]:
        """Call ``funcs[start:]`` in order until one returns an awaitable; from there on, a
        coroutine awaits it and calls the rest (:meth:`emit` does the same from 0, inline)."""
        for index in range(start, len(funcs)):
            func = funcs[index]
            try:
                outcome = func(event)
            except Exception as exc:  # a callback must never break the run
                self._failed(event, func, exc)
                continue
            # cheap check first: inspect.isawaitable goes through an ABC check
            if outcome is not None and inspect.isawaitable(outcome):
                return self._awaiting(event, funcs, index, outcome)
        return DONE

    async def _awaiting(self, event: Event, funcs: list[Callback], index: int,
                        outcome: Awaitable[Any]) -> None:
        try:
            await outcome
        except Exception as exc:
            self._failed(event, funcs[index], exc)
        await self._call(event, funcs, index + 1)

    def _failed(self, event: Event, func: Callback, exc: Exception) -> None:
        name = getattr(func, "__qualname__", repr(func))
        self.errors.append(CallbackError(event.hook, name, exc))

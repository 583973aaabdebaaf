"""OpenTelemetry spans for runs, iterations, model requests and tool calls (``toolcycle[otel]``).

This is a callbacks object, not part of the loop: ``Agent(..., callbacks=OTelCallbacks())``
subscribes to the events of :mod:`toolcycle.events` and turns them into spans, so the loop
stays unaware of telemetry and costs nothing when it is not used. Attribute names follow the
current OpenTelemetry GenAI semantic conventions (``gen_ai.*``, now kept in the
``semantic-conventions-genai`` repository), so runs appear in any OTel backend that understands
agent traces:

- ``invoke_agent {agent}`` (INTERNAL): the run (``gen_ai.provider.name``, ``gen_ai.agent.name``,
  total usage, termination reason);
- ``iteration {n}``: one iteration (``toolcycle.attempt``, ``toolcycle.iteration``);
- ``chat {model}`` (CLIENT): the model request (``gen_ai.provider.name``,
  ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` / ``output_tokens``, finish
  reasons). Its start time is the response time minus the request's measured duration, since
  the event arrives afterwards;
- ``execute_tool {tool}`` (INTERNAL): one tool call (``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, error status and ``error.type`` when the observation is an error).

``gen_ai.provider.name`` replaced ``gen_ai.system`` (semantic conventions 1.37). The old
attribute is still written beside it by default, with its old values, because backends and
dashboards built on the 1.36 conventions or earlier group model calls by it; set
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` (the conventions' own switch) or
pass ``legacy_attributes=False`` to write the current names only.

Prompt and tool contents are off by default (they may hold personal data); pass
``capture_content=True`` to add arguments and observations. Spans are parented explicitly
rather than through the ambient context, because callbacks of concurrent tool calls interleave.
"""

from __future__ import annotations

import contextvars
import os
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from ..events import (
    AttemptEnd,
    GuardrailEvent,
    HandoffEvent,
    IterationStart,
    LoopGuardEvent,
    ModelResponseEvent,
    RunFailure,
    RunPaused,
    RunResumed,
    RunStart,
    RunSuccess,
    ToolCallEvent,
    ToolResultEvent,
    ValidationFailure,
)
from ..status import is_success
from ..usage import Usage

#: How ``provider:model`` prefixes map to ``gen_ai.provider.name`` (the conventions' well-known
#: values; ``llama_cpp`` is our own, for the in-process local model). A server that merely
#: speaks the OpenAI protocol (``openai-compatible:``) is not OpenAI: it gets ``_OTHER``.
PROVIDER_NAMES = {
    "openai": "openai",
    "openai-functions": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "azure": "azure.ai.openai",
    "bedrock": "aws.bedrock",
    "gemini": "gcp.gemini",
    "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "mistral": "mistral_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "cohere": "cohere",
    "xai": "x_ai",
    "local": "llama_cpp",
}
UNKNOWN_PROVIDER = "_OTHER"
#: ``gen_ai.system`` values that differ from the ``gen_ai.provider.name`` that replaced them.
_LEGACY_SYSTEM_VALUES = {"azure.ai.openai": "az.ai.openai"}
_OPT_IN_LATEST = "gen_ai_latest_experimental"
_MAX_ATTRIBUTE_CHARS = 4000


@dataclass(frozen=True, slots=True)
class _Target:
    """Who serves a model: provider name, model name and, when known, the server."""

    provider: str
    model: str
    address: str | None = None
    port: int | None = None


@dataclass(slots=True)
class _RunSpans:
    run: Span
    target: _Target
    iteration: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    #: A team member's run: the calling run's spans, current again once this run ends.
    outer: _RunSpans | None = None


_CURRENT: contextvars.ContextVar[_RunSpans | None] = contextvars.ContextVar(
    "toolcycle_otel_run", default=None
)


class OTelCallbacks:
    """Callbacks that emit OpenTelemetry spans.

    ``model`` is the model as given to the agent (``"openai:gpt-4o-mini"``); it names the
    requested model and ``gen_ai.provider.name`` (``provider`` overrides the latter). Without it
    both are taken from the model name on each response. ``legacy_attributes``: also write the
    deprecated ``gen_ai.system``; by default yes, unless ``OTEL_SEMCONV_STABILITY_OPT_IN``
    lists ``gen_ai_latest_experimental``. ``tracer_provider`` defaults to the global one.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        provider: str | None = None,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool = False,
        legacy_attributes: bool | None = None,
    ) -> None:
        from .. import __version__

        self._tracer: Tracer = trace.get_tracer("toolcycle", __version__, tracer_provider)
        self._model = model
        self._provider = provider
        self.capture_content = capture_content
        if legacy_attributes is None:
            opted_in = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "")
            legacy_attributes = _OPT_IN_LATEST not in {v.strip() for v in opted_in.split(",")}
        self.legacy_attributes = legacy_attributes

    def _provider_attributes(self, target: _Target) -> dict[str, Any]:
        attributes: dict[str, Any] = {"gen_ai.provider.name": target.provider}
        if self.legacy_attributes:
            system = _LEGACY_SYSTEM_VALUES.get(target.provider, target.provider)
            attributes["gen_ai.system"] = system
        if target.address:
            attributes["server.address"] = target.address
            if target.port is not None:
                attributes["server.port"] = target.port
        return attributes

    # -- run ------------------------------------------------------------------------------

    def on_run_start(self, event: RunStart) -> None:
        # The adapter knows its provider even when its name is a bare model ("gpt-4o").
        provider = self._provider or PROVIDER_NAMES.get(event.model_system)
        outer = _CURRENT.get() if event.parent_call_id is not None else None
        self._start_run(event.run_id, event.agent_name, event.model_name, provider, False,
                        outer, event.parent_call_id)

    def _start_run(self, run_id: str, agent_name: str, model_name: str, provider: str | None,
                   resumed: bool, outer: _RunSpans | None = None,
                   parent_call_id: str | None = None) -> None:
        """The run's span; a team member's is a child of the call that started it."""
        target = _split_model(self._model or model_name, provider)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            **self._provider_attributes(target),  # required, even when the model is unknown
            "gen_ai.agent.name": agent_name,
            "gen_ai.conversation.id": run_id,
            "toolcycle.run_id": run_id,
        }
        if target.model:
            attributes["gen_ai.request.model"] = target.model
        if resumed:
            attributes["toolcycle.resumed"] = True
        context = None
        if outer is not None:
            parent = outer.tools.get(parent_call_id or "") or outer.run
            context = trace.set_span_in_context(parent)
            attributes["toolcycle.parent_call_id"] = parent_call_id or ""
        span = self._tracer.start_span(
            f"invoke_agent {agent_name}", context=context, kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        _CURRENT.set(_RunSpans(span, target, outer=outer))

    def on_pause(self, event: RunPaused) -> None:
        """A paused run's span ends here (unset status: neither success nor failure); the
        resumed run gets a span of its own with the same ``gen_ai.conversation.id``."""
        state = _CURRENT.get()
        if state is None:
            return
        self._end_children(state, None)
        _set_run_outcome(state.run, event.result)
        state.run.set_attribute("toolcycle.pending_approvals",
                                [r.call_id for r in event.pending])
        state.run.end()
        _CURRENT.set(state.outer)

    def on_resume(self, event: RunResumed) -> None:
        trace_ = event.trace
        self._start_run(event.run_id, getattr(trace_, "agent_name", "agent"),
                        getattr(trace_, "model_name", ""), self._provider, True)

    def on_success(self, event: RunSuccess) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        self._end_children(state, None)
        _set_run_outcome(state.run, event.result)
        state.run.set_attribute("toolcycle.run.status", event.status)
        if is_success(event.status):
            state.run.set_status(Status(StatusCode.OK))
        else:  # returned, but forced, partial or a tool's error passed through: docs/status.md
            state.run.set_attribute("error.type", event.status)
            state.run.set_status(Status(StatusCode.ERROR, f"the run ended {event.status}"))
        state.run.end()
        _CURRENT.set(state.outer)

    def on_failure(self, event: RunFailure) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        code = str(getattr(event.error, "code", type(event.error).__name__))
        self._end_children(state, f"run ended ({code}) before this span finished")
        _set_run_outcome(state.run, event.result)
        state.run.record_exception(event.error)
        state.run.set_attribute("toolcycle.run.status", event.status)
        state.run.set_attribute("error.type", code)
        state.run.set_status(Status(StatusCode.ERROR, str(event.error)[:_MAX_ATTRIBUTE_CHARS]))
        state.run.end()
        _CURRENT.set(state.outer)

    def _end_children(self, state: _RunSpans, error: str | None) -> None:
        for span in state.tools.values():
            span.set_status(Status(StatusCode.ERROR, error or "tool call never returned"))
            span.set_attribute("error.type", "unfinished")
            span.end()
        state.tools.clear()
        if state.iteration is not None:
            if error is not None:
                state.iteration.set_status(Status(StatusCode.ERROR, error))
            state.iteration.end()
            state.iteration = None

    # -- iterations and attempts ----------------------------------------------------------

    def on_iteration_start(self, event: IterationStart) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        if state.iteration is not None:
            state.iteration.end()
        state.iteration = self._tracer.start_span(
            f"iteration {event.iteration}",
            context=trace.set_span_in_context(state.run),
            attributes={
                "toolcycle.attempt": event.attempt,
                "toolcycle.iteration": event.iteration,
                "toolcycle.forced_final_answer": event.forced,
                "toolcycle.tool_choice": event.tool_choice or "auto",
            },
        )

    def on_attempt_end(self, event: AttemptEnd) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        state.run.add_event(
            "attempt_end", {"toolcycle.attempt": event.attempt, "toolcycle.success": event.success}
        )
        if state.iteration is not None:
            state.iteration.end()
            state.iteration = None

    def on_validation_failure(self, event: ValidationFailure) -> None:
        state = _CURRENT.get()
        if state is not None:
            state.run.add_event(
                "validation_failure",
                {
                    "toolcycle.attempt": event.attempt,
                    "toolcycle.validator": event.validator or "",
                    "toolcycle.errors": [e[:_MAX_ATTRIBUTE_CHARS] for e in event.errors],
                    "error.type": event.code,
                },
            )

    def on_guardrail(self, event: GuardrailEvent) -> None:
        """A guardrail tripped: an event on the run's span (docs/guardrails.md)."""
        self._run_event("guardrail", {
            "toolcycle.guardrail.kind": event.kind, "toolcycle.guardrail.name": event.name,
            "toolcycle.guardrail.reason": event.reason[:_MAX_ATTRIBUTE_CHARS],
            "toolcycle.guardrail.halted": event.halted,
            "gen_ai.tool.call.id": event.call_id or ""})

    def on_loop_guard(self, event: LoopGuardEvent) -> None:
        self._run_event("loop_guard", {
            "toolcycle.loop_guard.action": event.action, "gen_ai.tool.name": event.call.name,
            "gen_ai.tool.call.id": event.call.id, "toolcycle.loop_guard.repeats": event.repeats})

    def on_handoff(self, event: HandoffEvent) -> None:
        self._run_event("handoff", {"toolcycle.handoff.from": event.from_agent,
                                    "toolcycle.handoff.to": event.to_agent,
                                    "toolcycle.iteration": event.iteration})

    def _run_event(self, name: str, attributes: dict[str, Any]) -> None:
        state = _CURRENT.get()
        if state is not None:
            state.run.add_event(name, attributes)

    # -- model requests and tool calls ----------------------------------------------------

    def on_model_response(self, event: ModelResponseEvent) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        response_model = event.message.model_name or ""
        target = state.target
        if not target.model:
            target = _split_model(response_model, self._provider)
        requested = target.model
        end = time.time_ns()
        start = end - int(event.duration_ms * 1_000_000)
        usage = event.usage
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            **self._provider_attributes(target),
            "gen_ai.request.model": requested or "unknown",
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "toolcycle.attempt": event.attempt,
            "toolcycle.iteration": event.iteration,
            "toolcycle.tool_calls": len(event.message.tool_calls),
        }
        if response_model:
            attributes["gen_ai.response.model"] = _split_model(response_model, None).model
        if usage.cache_read_tokens:
            attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
        if usage.cache_write_tokens:
            attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
        if usage.reasoning_tokens:  # no GenAI convention for them yet: our own namespace
            attributes["toolcycle.usage.reasoning_tokens"] = usage.reasoning_tokens
        attributes.update(_cost_attributes(usage))
        if event.message.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [event.message.finish_reason]
        parent = state.iteration or state.run
        span = self._tracer.start_span(
            f"chat {requested or 'model'}",
            context=trace.set_span_in_context(parent),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        span.end(end_time=end)

    def on_tool_call(self, event: ToolCallEvent) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        call = event.call
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "toolcycle.attempt": event.attempt,
            "toolcycle.iteration": event.iteration,
        }
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call.raw_arguments[:_MAX_ATTRIBUTE_CHARS]
        parent = state.iteration or state.run
        state.tools[call.id] = self._tracer.start_span(
            f"execute_tool {call.name}",
            context=trace.set_span_in_context(parent),
            attributes=attributes,
        )

    def on_tool_result(self, event: ToolResultEvent) -> None:
        state = _CURRENT.get()
        if state is None:
            return
        span = state.tools.pop(event.call.id, None)
        if span is None:  # the call event was not seen (e.g. callbacks added mid-run)
            self.on_tool_call(ToolCallEvent(event.attempt, event.iteration, event.call))
            span = state.tools.pop(event.call.id)
        result = event.result
        if self.capture_content and not result.is_error:  # the result of a successful call
            span.set_attribute("gen_ai.tool.call.result", result.content[:_MAX_ATTRIBUTE_CHARS])
        if result.is_error:
            # the kind of failure, as execution named it (low cardinality, as asked)
            span.set_attribute("error.type", event.error_type or "tool_error")
            span.set_status(Status(StatusCode.ERROR, result.content[:_MAX_ATTRIBUTE_CHARS]))
        span.end()


def _split_model(model: str, provider: str | None) -> _Target:
    """``"openai:gpt-4o"`` -> ``openai``, ``gpt-4o``; unknown providers -> ``_OTHER``.

    ``openai-compatible:qwen@http://host:8080/v1`` names its server after the ``@``: the model
    is ``qwen`` and the server goes to ``server.address`` / ``server.port``.
    """
    prefix, sep, name = model.partition(":")
    if not sep or (prefix not in PROVIDER_NAMES and prefix != "openai-compatible"):
        return _Target(provider or UNKNOWN_PROVIDER, model)
    address: str | None = None
    port: int | None = None
    base, at, url = name.rpartition("@")
    if at and "://" in url:
        name = base
        parts = urlsplit(url)
        address = parts.hostname
        try:
            port = parts.port
        except ValueError:
            port = None
    return _Target(provider or PROVIDER_NAMES.get(prefix, UNKNOWN_PROVIDER), name, address, port)


def _cost_attributes(usage: Usage) -> dict[str, Any]:
    """The cost in USD (no GenAI convention names it yet: our own namespace), as a float since
    attributes hold no decimals; an unknown cost is said so, never written as 0."""
    if usage.cost is None:
        return {"toolcycle.usage.cost_unknown": True}
    return {"toolcycle.usage.cost_usd": float(usage.cost)}


def _set_run_outcome(span: Span, result: Any) -> None:
    usage = getattr(result, "usage", None)
    if usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("toolcycle.requests", usage.requests)
        span.set_attribute("toolcycle.tool_calls", usage.tool_calls)
        span.set_attributes(_cost_attributes(usage))
    termination = getattr(result, "termination", None)
    if termination is not None:
        span.set_attribute("toolcycle.termination.reason", str(termination.reason))
        span.set_attribute("toolcycle.termination.action", str(termination.action))

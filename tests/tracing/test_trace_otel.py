"""OpenTelemetry spans of real runs, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolcycle import Agent, Limits, MaxIterationsExceeded, tool
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.otel import OTelCallbacks


@tool
def lookup(city: str) -> str:
    """Find a city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return f"{city}: found"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _callbacks(exporter: InMemorySpanExporter, **kwargs: object) -> OTelCallbacks:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OTelCallbacks(tracer_provider=provider, **kwargs)  # type: ignore[arg-type]


def _by_name(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


async def test_spans_for_run_iterations_requests_and_tools(
    exporter: InMemorySpanExporter,
) -> None:
    both = [call("lookup", {"city": "Paris"}), call("lookup", {"city": "Atlantis"})]
    model = ScriptedModel([both, "Paris exists"])
    callbacks = _callbacks(exporter, model="openai:gpt-4o-mini")
    result = await Agent(model, tools=[lookup], name="geo", callbacks=callbacks).run("find")
    spans = exporter.get_finished_spans()

    [run] = _by_name(spans, "invoke_agent")
    assert run.name == "invoke_agent geo"
    assert run.attributes is not None
    assert run.attributes["gen_ai.agent.name"] == "geo"
    assert run.attributes["gen_ai.system"] == "openai"
    assert run.attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    assert run.attributes["toolcycle.termination.reason"] == "completed"
    assert run.status.status_code == StatusCode.OK
    assert run.parent is None

    iterations = _by_name(spans, "iteration")
    assert [s.name for s in iterations] == ["iteration 1", "iteration 2"]
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id
               for s in iterations)

    chats = _by_name(spans, "chat")
    assert len(chats) == 2
    for chat, iteration, step in zip(chats, iterations, result.trace.steps, strict=True):
        assert chat.kind == SpanKind.CLIENT
        assert chat.parent is not None and chat.parent.span_id == iteration.context.span_id
        assert chat.attributes is not None
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.system"] == "openai"
        assert chat.attributes["gen_ai.request.model"] == "gpt-4o-mini"
        assert chat.attributes["gen_ai.response.model"] == "scripted"
        assert chat.attributes["gen_ai.usage.input_tokens"] == step.usage.input_tokens
        assert chat.attributes["gen_ai.usage.output_tokens"] == step.usage.output_tokens
        assert chat.start_time is not None and chat.end_time is not None
        assert chat.end_time >= chat.start_time

    tools = _by_name(spans, "execute_tool")
    assert [s.name for s in tools] == ["execute_tool lookup", "execute_tool lookup"]
    ok, failed = sorted(tools, key=lambda s: s.status.status_code == StatusCode.ERROR)
    assert ok.attributes is not None and failed.attributes is not None
    assert ok.attributes["gen_ai.tool.name"] == "lookup"
    assert ok.attributes["gen_ai.tool.call.id"] == result.tool_calls[0].call_id
    assert failed.attributes["gen_ai.tool.call.id"] == result.tool_calls[1].call_id
    assert ok.status.status_code == StatusCode.UNSET
    assert failed.status.status_code == StatusCode.ERROR
    assert "no such city" in (failed.status.description or "")
    assert "gen_ai.tool.call.arguments" not in ok.attributes  # content capture is off
    assert all(t.parent is not None and t.parent.span_id == iterations[0].context.span_id
               for t in tools)


async def test_content_capture_and_model_from_the_response(
    exporter: InMemorySpanExporter,
) -> None:
    model = ScriptedModel([call("lookup", {"city": "Rome"}), "ok"])
    await Agent(model, tools=[lookup], callbacks=_callbacks(exporter, capture_content=True)).run(
        "find")
    spans = exporter.get_finished_spans()
    [tool_span] = _by_name(spans, "execute_tool")
    assert tool_span.attributes is not None
    assert tool_span.attributes["gen_ai.tool.call.arguments"] == '{"city": "Rome"}'
    assert tool_span.attributes["gen_ai.tool.call.result"] == "Rome: found"
    chat = _by_name(spans, "chat")[0]
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.request.model"] == "scripted"
    assert chat.attributes["gen_ai.system"] == "_OTHER"


async def test_a_failed_run_marks_the_run_span_as_error(exporter: InMemorySpanExporter) -> None:
    model = ScriptedModel([call("lookup", {"city": "Oslo"})] * 3)
    agent = Agent(model, tools=[lookup], callbacks=_callbacks(exporter),
                  limits=Limits(max_iterations=2, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded):
        await agent.run("loop")
    spans = exporter.get_finished_spans()
    [run] = _by_name(spans, "invoke_agent")
    assert run.status.status_code == StatusCode.ERROR
    assert run.attributes is not None and run.attributes["error.type"] == "MAX_ITERATIONS"
    assert any(e.name == "exception" for e in run.events)
    assert len(_by_name(spans, "iteration")) == 2
    # every span that started also ended (nothing leaks when a run fails)
    assert all(s.end_time is not None for s in spans)


async def test_concurrent_runs_sharing_one_callbacks_object_keep_their_own_spans(
    exporter: InMemorySpanExporter,
) -> None:
    callbacks = _callbacks(exporter)

    def agent(name: str) -> Agent[None, str]:
        model = ScriptedModel([call("lookup", {"city": name}), call("lookup", {"city": name}),
                               "done"])
        return Agent(model, tools=[lookup], name=name, callbacks=callbacks)

    await asyncio.gather(agent("Paris").run("a"), agent("Rome").run("b"))
    spans = exporter.get_finished_spans()
    runs = {s.attributes["gen_ai.agent.name"]: s for s in _by_name(spans, "invoke_agent")
            if s.attributes is not None}
    assert set(runs) == {"Paris", "Rome"}
    for name, run in runs.items():
        members = [s for s in spans if s.context.trace_id == run.context.trace_id]
        tool_spans = _by_name(tuple(members), "execute_tool")
        assert len(tool_spans) == 2
        assert len(_by_name(tuple(members), "iteration")) == 3
        # each tool span sits in its own run's tree, under an iteration of that run
        iteration_ids = {s.context.span_id for s in _by_name(tuple(members), "iteration")}
        assert all(t.parent is not None and t.parent.span_id in iteration_ids
                   for t in tool_spans), name

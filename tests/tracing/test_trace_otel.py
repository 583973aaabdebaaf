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
from toolcycle.tracing.otel import OTelCallbacks


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
    assert run.kind == SpanKind.INTERNAL
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "geo"
    assert run.attributes["gen_ai.provider.name"] == "openai"
    assert run.attributes["gen_ai.request.model"] == "gpt-4o-mini"
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
        assert chat.attributes["gen_ai.provider.name"] == "openai"
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
    assert {t.kind for t in tools} == {SpanKind.INTERNAL}
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["gen_ai.tool.name"] == "lookup"
    assert ok.attributes["gen_ai.tool.type"] == "function"
    assert failed.attributes["error.type"] == "LookupError"
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
    assert chat.attributes["gen_ai.provider.name"] == "_OTHER"
    # the provider is required on the run span even when no model string was given
    [run] = _by_name(spans, "invoke_agent")
    assert run.attributes is not None and run.attributes["gen_ai.provider.name"] == "_OTHER"


async def test_a_failed_tool_call_records_no_result_even_with_content_capture(
    exporter: InMemorySpanExporter,
) -> None:
    """The conventions record ``gen_ai.tool.call.result`` for successful calls only; the
    error goes to the span status and ``error.type``."""
    model = ScriptedModel([call("lookup", {"city": "Atlantis"}), "no"])
    await Agent(model, tools=[lookup], callbacks=_callbacks(exporter, capture_content=True)).run(
        "find")
    [tool_span] = _by_name(exporter.get_finished_spans(), "execute_tool")
    assert tool_span.attributes is not None
    assert tool_span.attributes["gen_ai.tool.call.arguments"] == '{"city": "Atlantis"}'
    assert "gen_ai.tool.call.result" not in tool_span.attributes
    assert tool_span.attributes["error.type"] == "LookupError"
    assert "no such city" in (tool_span.status.description or "")


@pytest.mark.parametrize(
    ("model", "provider", "legacy", "request_model"),
    [
        ("openai:gpt-4o-mini", "openai", "openai", "gpt-4o-mini"),
        ("openai-functions:gpt-3.5-turbo", "openai", "openai", "gpt-3.5-turbo"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "anthropic", "claude-sonnet-4-5"),
        ("azure:gpt-4o", "azure.ai.openai", "az.ai.openai", "gpt-4o"),  # renamed value
        ("local:qwen2.5-coder-1.5b", "llama_cpp", "llama_cpp", "qwen2.5-coder-1.5b"),
        ("openai-compatible:qwen@http://127.0.0.1:8080/v1", "_OTHER", "_OTHER", "qwen"),
    ],
)
async def test_provider_name_and_the_legacy_system_attribute(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch,
    model: str, provider: str, legacy: str, request_model: str,
) -> None:
    """``gen_ai.provider.name`` (current conventions) on the run and model-request spans; the
    deprecated ``gen_ai.system`` beside it, with its old value, until the user opts in to the
    latest conventions only."""
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    await Agent(ScriptedModel(["ok"]), callbacks=_callbacks(exporter, model=model)).run("hi")
    for span in (*_by_name(exporter.get_finished_spans(), "invoke_agent"),
                 *_by_name(exporter.get_finished_spans(), "chat")):
        assert span.attributes is not None
        assert span.attributes["gen_ai.provider.name"] == provider
        assert span.attributes["gen_ai.system"] == legacy
        assert span.attributes["gen_ai.request.model"] == request_model
    [chat] = _by_name(exporter.get_finished_spans(), "chat")
    assert chat.name == f"chat {request_model}"
    assert chat.attributes is not None
    if model.startswith("openai-compatible:"):
        assert (chat.attributes["server.address"], chat.attributes["server.port"]) == (
            "127.0.0.1", 8080)
    else:
        assert "server.address" not in chat.attributes


@pytest.mark.parametrize(
    ("env", "argument", "legacy"),
    [
        (None, None, True),
        ("gen_ai_latest_experimental", None, False),
        ("http, gen_ai_latest_experimental", None, False),
        ("http", None, True),
        ("gen_ai_latest_experimental", True, True),  # the argument wins
        (None, False, False),
    ],
)
async def test_the_legacy_attribute_follows_the_conventions_opt_in(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch,
    env: str | None, argument: bool | None, legacy: bool,
) -> None:
    if env is None:
        monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    else:
        monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", env)
    callbacks = _callbacks(exporter, model="openai:gpt-4o", legacy_attributes=argument)
    await Agent(ScriptedModel(["ok"]), callbacks=callbacks).run("hi")
    spans = exporter.get_finished_spans()
    assert len(spans) == 3  # run, iteration, chat
    for span in spans:
        assert span.attributes is not None
        if span.name.startswith(("invoke_agent", "chat")):
            assert span.attributes["gen_ai.provider.name"] == "openai"
        assert ("gen_ai.system" in span.attributes) is (
            legacy and not span.name.startswith("iteration"))


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


async def test_a_forced_answer_is_no_ok_span(exporter: InMemorySpanExporter) -> None:
    """A run a limit forced to answer returned, but did not succeed (docs/status.md): its span
    is not OK, and says the status; a success's span is OK and says so."""
    model = ScriptedModel(lambda _m, s: "a guess" if s.tool_choice == "none"
                          else call("lookup", {"city": "Oslo"}))
    agent = Agent(model, tools=[lookup], callbacks=_callbacks(exporter),
                  limits=Limits(max_iterations=1))
    assert (await agent.run("loop")).status == "forced"
    await Agent(ScriptedModel(["fine"]), callbacks=_callbacks(exporter)).run("hi")
    forced, fine = _by_name(exporter.get_finished_spans(), "invoke_agent")
    assert forced.status.status_code == StatusCode.ERROR
    assert forced.attributes is not None and forced.attributes["toolcycle.run.status"] == "forced"
    assert forced.attributes["error.type"] == "forced"
    assert fine.status.status_code == StatusCode.OK
    assert fine.attributes is not None and fine.attributes["toolcycle.run.status"] == "success"


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


async def test_error_type_names_what_went_wrong_in_each_failed_call(
    exporter: InMemorySpanExporter,
) -> None:
    """``error.type`` is the kind of failure the loop names when it answers each call: the
    class of a raised exception, else a short kind."""

    @tool(timeout=0.05)
    async def slow(city: str) -> str:
        """Takes too long."""
        await asyncio.sleep(5)
        return city

    turn = [
        call("lookup", {"city": "Atlantis"}),  # raises LookupError
        call("lookup", {"town": "Paris"}),  # invalid arguments
        call("lookup", raw='{"city": '),  # arguments that are not JSON
        call("nowhere", {}),  # unknown tool
        call("slow", {"city": "Rome"}),  # timeout
        call("lookup", {"city": "Paris"}),  # fine
    ]
    model = ScriptedModel([turn, "done"])
    result = await Agent(model, tools=[lookup, slow], callbacks=_callbacks(exporter)).run("go")
    spans = {s.attributes["gen_ai.tool.call.id"]: s
             for s in _by_name(exporter.get_finished_spans(), "execute_tool")
             if s.attributes is not None}
    kinds = [spans[r.call_id].attributes.get("error.type")  # type: ignore[union-attr]
             for r in result.messages[2].results]
    assert kinds == ["LookupError", "invalid_arguments", "invalid_arguments", "unknown_tool",
                     "timeout", None]


async def test_the_provider_comes_from_the_adapter_when_no_model_is_named(
    exporter: InMemorySpanExporter,
) -> None:
    """Adapters name the bare model (``gpt-4o``); their ``system`` still gives the provider."""

    model = ScriptedModel(["ok"], name="claude-sonnet-4-5", system="anthropic")
    await Agent(model, callbacks=_callbacks(exporter)).run("hi")
    for span in (*_by_name(exporter.get_finished_spans(), "invoke_agent"),
                 *_by_name(exporter.get_finished_spans(), "chat")):
        assert span.attributes is not None
        assert span.attributes["gen_ai.provider.name"] == "anthropic"
        assert span.attributes["gen_ai.request.model"] == "claude-sonnet-4-5"

"""A paused and resumed run seen by the callback-based recorders: OpenTelemetry spans and
``TraceStore.recorder()`` (for agents not given ``trace_store=``)."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from toolcycle import Agent, tool
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.otel import OTelCallbacks
from toolcycle.tracing.store import TraceStore


@tool(requires_approval=True)
def publish(post: str) -> str:
    """Publish a post.

    Args:
        post: The text.
    """
    return "published"


def test_spans_of_a_paused_then_resumed_run() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel = OTelCallbacks(tracer_provider=provider)
    agent = Agent(ScriptedModel([call("publish", {"post": "hi"}), "done"]), tools=[publish],
                  callbacks=otel)
    paused = agent.run_sync("post it")
    final = agent.resume_sync(paused.snapshot or {}, {paused.pending_approvals[0].call_id: True})
    runs = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert len(runs) == 2  # the paused part ended; the resumed part has its own span
    first, second = runs
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["toolcycle.termination.reason"] == "paused"
    assert first.status.status_code == StatusCode.UNSET
    assert tuple(first.attributes["toolcycle.pending_approvals"]) == ("call_1",)  # type: ignore[arg-type]
    assert second.attributes["toolcycle.resumed"] is True
    assert second.attributes["gen_ai.conversation.id"] == final.run_id == paused.run_id
    assert second.status.status_code == StatusCode.OK
    tools = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert len(tools) == 1 and tools[0].parent is not None
    assert tools[0].parent.span_id == second.context.span_id  # type: ignore[union-attr]


def test_callback_recorder_stores_the_pause_and_the_rest(tmp_path: Path) -> None:
    with TraceStore(tmp_path / "t.db") as store:
        agent = Agent(ScriptedModel([call("publish", {"post": "hi"}), "done"]),
                      tools=[publish], callbacks=store.recorder())
        paused = agent.run_sync("post it")
        stored = store.get(paused.run_id)
        assert stored is not None and stored.status == "paused"
        agent.resume_sync(paused.snapshot or {}, {paused.pending_approvals[0].call_id: True})
        stored = store.get(paused.run_id)
    assert stored is not None and stored.status == "success"
    assert [r.approval for r in stored.tool_calls] == [{"decision": "approved", "by": "person"}]
    assert len(stored.steps) == 2 and stored.pauses[0]["resumed_at"] is not None

"""answer_with_rag(_stream) over the real Agent loop, driven by the protocol-enforcing model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic
import pytest

from toolcycle import ConfigurationError, Message, ToolResult
from toolcycle.errors import AgentError
from toolcycle.events import (
    FinalResult,
    IterationStart,
    RunStart,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.rag import (
    MAX_TOOL_CYCLES_CAP,
    AnswerEvent,
    Document,
    KnowledgeBase,
    RagTelemetry,
    RetrievalEvent,
    answer_with_rag,
    answer_with_rag_stream,
)

DOCS = [
    Document("refunds", "Refunds are issued to the original card within 14 days of a return.",
             "Refund policy"),
    Document("shipping", "Express shipping arrives the next business day.", "Shipping"),
    Document("warranty", "Every laptop carries a two-year warranty.", "Warranty"),
]


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase(tmp_path / "kb.sqlite")
    base.add_many(DOCS)
    return base


def last_observation(messages: Sequence[Message]) -> dict[str, Any]:
    result = messages[-1].parts[-1]
    assert isinstance(result, ToolResult)
    data: dict[str, Any] = json.loads(result.content)
    return data


async def test_direct_answer_from_the_first_retrieval_cites_chunks(kb: KnowledgeBase) -> None:
    seen: list[RagTelemetry] = []

    def reply(messages: Sequence[Message], settings: ModelSettings) -> str:
        prompt = messages[-1].text
        assert "[shipping#0] (Shipping) Express shipping" in prompt
        assert [t.name for t in settings.tools] == ["search_knowledge_base"]
        return "Next business day [shipping#0], not [made-up#3]."

    answer = await answer_with_rag("How fast is express shipping?", kb, ScriptedModel(reply),
                                   on_telemetry=seen.append)
    assert answer.output.startswith("Next business day")
    assert answer.citations == ["shipping#0"]  # the invented id is not a citation
    t = answer.telemetry
    assert seen == [t]
    assert t.path == "direct" and t.tool_calls == [] and t.iterations == 1
    assert t.retrieved[0].chunk_id == "shipping#0" and t.retrieved[0].score > 0
    assert t.searches[0].source == "retrieval" and t.searches[0].iteration == 0
    assert answer.run.trace.metadata["rag"]["path"] == "direct"


async def test_empty_result_leads_the_model_to_search_again_with_other_words(
    kb: KnowledgeBase,
) -> None:
    def reply(messages: Sequence[Message], settings: ModelSettings) -> Any:
        last = messages[-1]
        if last.role == "user":
            assert "No passages matched" in last.text
            return call("search_knowledge_base", {"query": "cash back"})
        observation = last_observation(messages)
        if not observation["results"]:
            assert "no passages matched 'cash back'" in observation["note"]
            return call("search_knowledge_base", {"query": "refund card"})
        chunk = observation["results"][0]
        return f"You get it within 14 days [{chunk['chunk_id']}]."

    answer = await answer_with_rag("How do I get my cash back?", kb, ScriptedModel(reply))
    t = answer.telemetry
    assert answer.citations == ["refunds#0"]
    assert t.path == "tools" and t.retrieved == []
    assert [(s.source, s.query, s.iteration) for s in t.searches] == [
        ("retrieval", "How do I get my cash back?", 0),
        ("tool", "cash back", 1),
        ("tool", "refund card", 2),
    ]
    assert [s.hits[0].chunk_id for s in t.searches if s.hits] == ["refunds#0"]
    assert [(c["name"], c["args"], c["iteration"], c["error"]) for c in t.tool_calls] == [
        ("search_knowledge_base", {"query": "cash back"}, 1, None),
        ("search_knowledge_base", {"query": "refund card"}, 2, None),
    ]
    assert "refunds#0" in t.tool_calls[1]["result"]
    assert set(answer.sources) == {"refunds#0"}


def always_search(messages: Sequence[Message], settings: ModelSettings) -> Any:
    """A model that never stops searching unless tools are taken away."""
    if settings.tool_choice == "none":
        return "Best effort: warranty is two years [warranty#0]."
    return call("search_knowledge_base", {"query": f"warranty {len(messages)}"})


async def test_forced_final_answer_when_tool_cycles_run_out(kb: KnowledgeBase) -> None:
    model = ScriptedModel(always_search)
    answer = await answer_with_rag("Warranty length?", kb, model, max_tool_cycles=2)
    assert [r.settings.tool_choice for r in model.requests] == ["auto", "auto", "none"]
    assert answer.run.termination.action == "final_answer"
    assert answer.run.termination.reason == "max_iterations"
    t = answer.telemetry
    assert t.path == "forced_final_answer" and t.iterations == 3
    assert [c["iteration"] for c in t.tool_calls] == [1, 2]
    assert answer.citations == ["warranty#0"]


async def test_max_tool_cycles_is_validated_and_clamped(kb: KnowledgeBase) -> None:
    for bad in (-1, True, 2.5, "3"):
        with pytest.raises(ConfigurationError, match="max_tool_cycles"):
            await answer_with_rag("q", kb, ScriptedModel(["x"]), max_tool_cycles=bad)  # type: ignore[arg-type]
    model = ScriptedModel(always_search)
    with pytest.warns(UserWarning, match="clamped"):
        answer = await answer_with_rag("Warranty?", kb, model, max_tool_cycles=1000)
    assert answer.telemetry.max_tool_cycles == MAX_TOOL_CYCLES_CAP == 16  # docs/rag.md says 16
    assert len(answer.telemetry.tool_calls) == MAX_TOOL_CYCLES_CAP
    assert len(model.requests) == MAX_TOOL_CYCLES_CAP + 1


async def test_zero_tool_cycles_answers_from_retrieval_only(kb: KnowledgeBase) -> None:
    model = ScriptedModel(["Two years [warranty#0]."])
    answer = await answer_with_rag("laptop warranty", kb, model, max_tool_cycles=0)
    assert model.requests[0].settings.tools == ()
    assert answer.telemetry.path == "direct" and answer.citations == ["warranty#0"]


class Cited(pydantic.BaseModel):
    answer: str
    chunk_ids: list[str]


async def test_structured_output_after_tool_cycles(kb: KnowledgeBase) -> None:
    model = ScriptedModel([
        call("search_knowledge_base", {"query": "laptop warranty", "k": 2}),
        call("final_result", {"answer": "two years"}),  # invalid: chunk_ids missing
        call("final_result", {"answer": "two years", "chunk_ids": ["warranty#0"]}),
    ])
    answer = await answer_with_rag("How long is the warranty?", kb, model, output=Cited)
    assert answer.output == Cited(answer="two years", chunk_ids=["warranty#0"])
    assert answer.citations == ["warranty#0"]  # a string field that is exactly a chunk id
    assert answer.run.attempts == 2
    kinds = [c["kind"] for c in answer.telemetry.tool_calls]
    assert kinds == ["tool", "output", "output"]
    assert answer.telemetry.tool_calls[1]["error"] is not None


async def test_structured_output_is_forced_when_cycles_run_out(kb: KnowledgeBase) -> None:
    def reply(messages: Sequence[Message], settings: ModelSettings) -> Any:
        if settings.tool_choice == "final_result":
            return call("final_result", {"answer": "two years [warranty#0]",
                                         "chunk_ids": ["warranty#0"]})
        return call("search_knowledge_base", {"query": "warranty"})

    model = ScriptedModel(reply)
    answer = await answer_with_rag("Warranty?", kb, model, output=Cited, max_tool_cycles=1)
    assert [r.settings.tool_choice for r in model.requests] == ["required", "final_result"]
    assert answer.telemetry.path == "forced_final_answer"
    assert answer.citations == ["warranty#0"]


async def test_tool_errors_are_recorded_and_failures_still_report(kb: KnowledgeBase) -> None:
    def stock(sku: str) -> int:
        """Units in stock."""
        raise LookupError(f"unknown sku {sku}")

    model = ScriptedModel([call("stock", {"sku": "X1"}), "Unknown product."])
    answer = await answer_with_rag("Is X1 in stock?", kb, model, tools=[stock])
    [record] = answer.telemetry.tool_calls
    assert record["name"] == "stock" and "unknown sku X1" in record["error"]

    seen: list[RagTelemetry] = []
    with pytest.raises(AgentError) as info:
        await answer_with_rag("Is X1 in stock?", kb, ScriptedModel([call("stock", {"sku": "X"})]),
                              tools=[stock], on_telemetry=seen.append)
    assert seen[0].path == "failed" and seen[0].error_code == info.value.code
    assert info.value.result is not None
    assert info.value.result.trace.metadata["rag"]["path"] == "failed"


async def test_streaming_order_retrieval_loop_events_then_answer_tokens(
    kb: KnowledgeBase,
) -> None:
    final = "Express shipping arrives the next business day [shipping#0]."
    model = ScriptedModel([call("search_knowledge_base", {"query": "express"}), final],
                          chunk_size=5)
    stream = answer_with_rag_stream("express shipping?", kb, model)
    events = [event async for event in stream]
    assert isinstance(events[0], RetrievalEvent)
    assert events[0].hits[0].chunk_id == "shipping#0"
    assert isinstance(events[1], RunStart)
    assert isinstance(events[-1], AnswerEvent) and events[-1].answer is stream.answer
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallEvent") < kinds.index("ToolResultEvent")
    last_tool = max(i for i, e in enumerate(events) if isinstance(e, ToolResultEvent))
    second = next(i for i, e in enumerate(events)
                  if isinstance(e, IterationStart) and e.iteration == 2)
    deltas = [i for i, e in enumerate(events) if isinstance(e, TextDeltaEvent)]
    assert last_tool < second < deltas[0]
    assert "".join(e.text for e in events if isinstance(e, TextDeltaEvent)) == final
    final_index = next(i for i, e in enumerate(events) if isinstance(e, FinalResult))
    assert deltas[-1] < final_index < len(events) - 1
    assert any(isinstance(e, ToolCallEvent) for e in events)
    assert stream.answer is not None and stream.answer.citations == ["shipping#0"]
    assert stream.answer.telemetry.path == "tools"


async def test_telemetry_contents(kb: KnowledgeBase) -> None:
    seen: list[RagTelemetry] = []
    model = ScriptedModel([call("search_knowledge_base", {"query": "laptop"}), "Two years."])
    answer = await answer_with_rag("warranty?", kb, model, on_telemetry=seen.append, k=2)
    t = seen[0]
    data = t.to_dict()
    assert set(data) >= {"path", "retrieval_ms", "generation_ms", "total_ms", "retrieved",
                         "tool_calls", "searches", "termination", "run_id"}
    assert t.run_id == answer.run.run_id
    assert t.retrieval_ms >= 0 and t.generation_ms >= 0
    assert t.total_ms == pytest.approx(t.retrieval_ms + t.generation_ms)
    assert [r.chunk_id for r in t.retrieved] == ["warranty#0"]
    # chunk ids with their scores, as the knowledge base ranked them
    [hit] = kb.search("warranty?", k=2)
    assert data["retrieved"] == [{"chunk_id": "warranty#0", "score": hit.score}]
    assert hit.score > 0
    # the tool-call record, values and all
    [record] = data["tool_calls"]
    assert set(record) >= {"name", "args", "result", "error", "iteration"}
    assert (record["name"], record["args"], record["error"], record["iteration"]) == (
        "search_knowledge_base", {"query": "laptop"}, None, 1)
    assert record["result"] == answer.run.tool_calls[0].result
    assert "warranty#0" in record["result"]
    assert [s["source"] for s in data["searches"]] == ["retrieval", "tool"]
    assert data["searches"][1]["hits"][0]["chunk_id"] == "warranty#0"
    assert data["path"] == "tools"
    assert t.input_tokens == answer.run.usage.input_tokens > 0
    assert t.termination == {"reason": "completed", "action": "answered", "detail": "",
                             "limit": None}
    json.dumps(data)  # plain data


async def test_invalid_arguments_are_reported_together(kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigurationError) as info:
        answer_with_rag_stream("  ", kb, ScriptedModel(["x"]), k=0, search_mode="vector")
    assert len(info.value.problems) == 3
    assert "needs a knowledge base with an embedder" in info.value.problems[2]

    def search_knowledge_base(query: str) -> str:
        """A clashing tool."""
        return query

    model = ScriptedModel(["x"])
    with pytest.raises(ConfigurationError, match="two tools are named"):
        answer_with_rag_stream("q", kb, model, tools=[search_knowledge_base])
    with pytest.raises(ConfigurationError, match="two tools are named"):
        await answer_with_rag("q", kb, model, tools=[search_knowledge_base])
    assert model.requests == []


def test_find_citations_in_text_and_structured_output() -> None:
    from toolcycle.rag import find_citations

    known = {"a#0", "b#1", "c#2"}.__contains__
    assert find_citations("see [b#1] and [a#0, c#2]; [zz#9] [not an id]", known) == [
        "b#1", "a#0", "c#2"]
    assert find_citations(Cited(answer="x [c#2]", chunk_ids=["a#0", "zz#1"]), known) == [
        "c#2", "a#0"]
    assert find_citations({"items": [{"source": "b#1"}]}, known) == ["b#1"]

"""The multi-database scenario end to end with a real local model (the real-model tier).

A guest customer exists only in the sales database. The real model must use the read-only
query tools, and the facts in its answer (quantity 3, date 2026-09-11, which it may write out
as "September 11, 2026") can only come from the row the sales tool returned. Observed with
Qwen2.5-Coder-1.5B: it usually queries sales first (its instructions say guests are there);
the scripted test covers the "empty in the first database, then the second" path. Kept to one
short run: two or three requests of a small local model (about a minute on a busy 2-core box).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from toolcycle.models import resolve_model

MODEL = "local:qwen2.5-coder-1.5b"


@pytest.mark.real_model
async def test_local_model_finds_the_guest_order_in_the_second_database(
    tmp_path: Path, multi_db: ModuleType
) -> None:
    example = multi_db
    agent = example.build_agent(resolve_model(MODEL), tmp_path)
    result = await agent.run(example.QUESTION)
    trace = result.trace.render(max_chars=300)
    sales_rows = [c.result or "" for c in result.tool_calls
                  if c.name == "query_sales" and c.error is None]
    assert any("2026-09-11" in rows for rows in sales_rows), trace
    answer = str(result.output)
    assert "3" in answer, trace
    assert any(date in answer for date in ("2026-09-11", "September 11", "11 September")), trace


@pytest.mark.real_model
async def test_local_model_answers_from_a_passage_and_the_answer_is_attributed_to_it(
    tmp_path: Path,
) -> None:
    """A RAG answer on the real 1.5B, from the first retrieval: the fact comes from the
    passage that holds it, which ``attributed`` names first whether or not the model wrote
    its id (it seldom does: bench/runs/2026-12-07/rag/)."""
    from toolcycle.rag import Document, HashingEmbedder, KnowledgeBase, answer_with_rag

    kb = KnowledgeBase(tmp_path / "kb.sqlite", embedder=HashingEmbedder())
    kb.add_many([
        Document("tours", "Guided tours start every hour and last 75 minutes. Groups are "
                 "limited to 15 people.", title="Guided tours"),
        Document("admission", "Adult admission is 18 euros; visitors under 12 enter free.",
                 title="Admission"),
        Document("hours", "The museum is open from 9:30 to 17:30 and closed on Mondays.",
                 title="Opening hours"),
    ])
    answer = await answer_with_rag("How long does a guided tour last?", kb,
                                   resolve_model(MODEL), max_tool_cycles=0, k=3)
    assert "75" in str(answer.output), answer.output
    assert answer.attributed[:1] == ["tours#0"], (answer.output, answer.attributed)
    assert set(answer.citations) <= {"tours#0"}, answer.citations

"""Two heldout3 answers with the search tool offered: seconds, tokens in and out, the text.

    .venv/bin/python bench/runs/2026-12-07/rag/one_answer.py   # from the repository root

Run on b03c485 (no directive: 8 and 12 output tokens) and on 0d843f1's directive (79 and 85
output tokens for the same answers): where the directive's time went.
"""

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from bench.rag_sets import heldout3
from toolcycle.models import resolve_model
from toolcycle.rag import HashingEmbedder, KnowledgeBase, answer_with_rag


async def main() -> None:
    kb = KnowledgeBase(Path(tempfile.mkdtemp()) / "kb.sqlite", embedder=HashingEmbedder())
    kb.add_many(heldout3.DOCS)
    model = resolve_model("local:qwen2.5-coder-1.5b")
    await answer_with_rag("warm up", kb, model, max_tool_cycles=4, k=3)
    for question in ["How much does an adult ticket cost?", "Which loaf is vegan?"]:
        started = time.perf_counter()
        answer = await answer_with_rag(question, kb, model, max_tool_cycles=4, k=3)
        t = answer.telemetry
        print(round(time.perf_counter() - started, 1), t.input_tokens, t.output_tokens,
              t.iterations, repr(str(answer.output)[:60]))


asyncio.run(main())

"""RAG answers on a real model: right, citing the passage they come from, and how fast.

    .venv/bin/python bench/rag_citations.py --set heldout --model local:qwen2.5-coder-1.5b \
        --cycles 0 --k 3 --log bench/runs/DATE/rag-cite.jsonl

Each set (:mod:`bench.rag_sets`) is a handful of short documents, one chunk each, and
questions whose fact sits in one of them (graded by the fact's text in the answer, by the
chunk ids the model cited, :attr:`RagAnswer.citations`, and by the first chunk the answer is
attributed to, :attr:`RagAnswer.attributed`), plus questions the base does not answer (their
answers are printed, not graded). ``--cycles`` is ``answer_with_rag``'s ``max_tool_cycles``
(0: one generation from the first retrieval; 4: the default, the search tool offered).
Seconds are whole answers (retrieval, generation, any tool cycles), after one warm-up answer
that loads the model: SC-004 asks for p95 under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolcycle.models import resolve_model
from toolcycle.rag import HashingEmbedder, KnowledgeBase, answer_with_rag


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(set_name: str, model_name: str, cycles: int, k: int, log: Path | None) -> None:
    data = importlib.import_module(f"bench.rag_sets.{set_name}")
    folder = Path(tempfile.mkdtemp())
    kb = KnowledgeBase(folder / "kb.sqlite", embedder=HashingEmbedder())
    kb.add_many(data.DOCS)
    model = resolve_model(model_name)
    await answer_with_rag(data.QUESTIONS[0][0], kb, model, max_tool_cycles=cycles, k=k)
    seconds: list[float] = []
    right = cited_right = cited_any = answerable = attributed_right = attributed_none = 0
    for question, fact, chunk in data.QUESTIONS:
        started = time.perf_counter()
        answer = await answer_with_rag(question, kb, model, max_tool_cycles=cycles, k=k)
        took = time.perf_counter() - started
        seconds.append(took)
        text = str(answer.output)
        line = {"set": set_name, "model": model_name, "cycles": cycles, "k": k,
                "question": question, "seconds": round(took, 2), "path": answer.telemetry.path,
                "input_tokens": answer.telemetry.input_tokens, "citations": answer.citations,
                "attributed": answer.attributed, "answer": text}
        if fact is not None:
            answerable += 1
            line["right"] = fact in text
            line["cites_its_passage"] = chunk in answer.citations
            right += line["right"]
            cited_right += line["cites_its_passage"]
            cited_any += bool(answer.citations)
            line["attributed_to_its_passage"] = answer.attributed[:1] == [chunk]
            attributed_right += line["attributed_to_its_passage"]
        else:
            attributed_none += not answer.attributed
        print(f"{took:5.1f} s  {line.get('right', '-')!s:5}  {answer.citations}  "
              f"{answer.attributed}  {text[:110]!r}")
        if log is not None:
            with log.open("a") as out:
                out.write(json.dumps(line) + "\n")
    kb.close()
    print(f"\n{set_name}, {model_name}, max_tool_cycles={cycles}, k={k}: right {right} of "
          f"{answerable}; citing the passage {cited_right} of {answerable} (any citation "
          f"{cited_any}); attributed first to its passage {attributed_right} of {answerable}, "
          f"unanswered ones attributed to none {attributed_none} of "
          f"{len(data.QUESTIONS) - answerable}; seconds p50 {percentile(seconds, 0.5):.1f} · p95 "
          f"{percentile(seconds, 0.95):.1f} · max {max(seconds):.1f}; "
          f"{sum(s < 10 for s in seconds)} of {len(seconds)} under 10 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="dev", choices=("dev", "heldout", "heldout2", "heldout3"))
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--cycles", type=int, default=0, help="max_tool_cycles")
    parser.add_argument("--k", type=int, default=3, help="chunks per retrieval")
    parser.add_argument("--log", type=Path, help="append one JSON line per answer")
    args = parser.parse_args()
    asyncio.run(run(args.set, args.model, args.cycles, args.k, args.log))


if __name__ == "__main__":
    main()

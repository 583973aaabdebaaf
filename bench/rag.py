"""Knowledge base benchmark: indexing throughput and search latency at 10k and 100k chunks.

    .venv/bin/python bench/rag.py             # 10k and 100k chunks, FTS and hashing vectors
    .venv/bin/python bench/rag.py --sizes 10000 --queries 100

The corpus is synthetic but shaped like text: words drawn from a Zipf distribution over a
20k-word vocabulary, about 60 words (~400 characters) per chunk, one chunk per document. Each
configuration indexes into a fresh SQLite file on disk (WAL, one transaction per 1000
documents), then runs two sets of 3-word queries: "typical" draws content words uniformly
from frequency ranks 50-5000 (the head of a Zipf vocabulary behaves like stopwords, which the
query builder drops in real text); "worst" draws from the Zipf distribution itself, so queries
contain the most frequent words and match most of the corpus (BM25 cost grows with matches).
Figures are printed as a Markdown table; they depend on the machine, so compare runs on the
same one.

``--answer N`` measures whole answers instead (the seed spec's SC-004: a RAG answer with the
1.5B local model in under 10 s for 95 % of queries): the first ``--sizes`` corpus is indexed,
then ``answer_with_rag`` answers N of its typical queries (as "What do the documents say about
<query>?") with ``--model`` (default ``local:qwen2.5-coder-1.5b``, greedy), after one warm-up
answer that loads the model. Prints p50/p95/max of the whole answer, of retrieval and of
generation, and how the answers ended (``direct``, ``tools``, ``forced_final_answer``).

    nice .venv/bin/python bench/rag.py --sizes 10000 --answer 20
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolcycle.rag import Document, HashingEmbedder, KnowledgeBase

VOCABULARY = 20_000
WORDS_PER_CHUNK = 60
BATCH = 1000


def make_vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def sampler(words: list[str], rng: random.Random) -> tuple[list[str], list[float]]:
    """The words in a random frequency order and their cumulative Zipf (s = 1) weights."""
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    shuffled = words[:]
    rng.shuffle(shuffled)
    return shuffled, cumulative


def corpus(n: int, seed: int = 7) -> tuple[list[Document], dict[str, list[str]]]:
    rng = random.Random(seed)
    vocab, cumulative = sampler(make_vocabulary(rng), rng)
    docs = []
    for i in range(n):
        words = rng.choices(vocab, cum_weights=cumulative, k=WORDS_PER_CHUNK)
        sentences = [" ".join(words[j:j + 12]).capitalize() + "." for j in range(0, 60, 12)]
        docs.append(Document(f"d{i}", " ".join(sentences), metadata={"shard": i % 10}))
    queries = {
        "typical": [" ".join(rng.choices(vocab[50:5000], k=3)) for _ in range(1000)],
        "worst": [" ".join(rng.choices(vocab, cum_weights=cumulative, k=3)) for _ in range(1000)],
    }
    return docs, queries


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(size: int, n_queries: int, vectors: bool, folder: Path) -> list[str]:
    docs, queries = corpus(size)
    embedder = HashingEmbedder() if vectors else None
    kb = KnowledgeBase(folder / f"kb-{size}-{int(vectors)}.sqlite", embedder=embedder)
    start = time.perf_counter()
    for i in range(0, size, BATCH):
        kb.add_many(docs[i:i + BATCH])
    elapsed = time.perf_counter() - start
    chunks = kb.count_chunks()
    size_mb = Path(kb.path).stat().st_size / 1e6
    label = "fts + hashing vectors" if vectors else "fts only"
    rows = [f"| {chunks:,} | {label} | indexing | {chunks / elapsed:,.0f} chunks/s "
            f"({elapsed:.1f} s, file {size_mb:.0f} MB) |"]
    modes = ["fts", "vector", "hybrid"] if vectors else ["fts"]
    for mode in modes:
        for kind, texts in queries.items():
            if kind == "worst" and mode == "vector":
                continue  # vector search cost does not depend on the words
            kb.search(texts[0], mode=mode)  # type: ignore[arg-type]  # warm: loads the vectors
            times = []
            for query in texts[:n_queries]:
                t0 = time.perf_counter()
                kb.search(query, k=5, mode=mode)  # type: ignore[arg-type]
                times.append((time.perf_counter() - t0) * 1000)
            rows.append(
                f"| {chunks:,} | {label} | search {mode}, {kind} queries (k=5) | "
                f"p50 {percentile(times, 0.5):.2f} ms · p95 {percentile(times, 0.95):.2f} ms |"
            )
    kb.close()
    return rows


def answers(size: int, n_answers: int, model_name: str, cycles: int, k: int,
            folder: Path) -> list[str]:
    """Whole RAG answers with a real model: latency percentiles and how the answers ended."""
    import asyncio
    from collections import Counter

    from toolcycle.models import resolve_model
    from toolcycle.rag import answer_with_rag

    docs, queries = corpus(size)
    kb = KnowledgeBase(folder / f"kb-answer-{size}.sqlite", embedder=HashingEmbedder())
    for i in range(0, size, BATCH):
        kb.add_many(docs[i:i + BATCH])
    model = resolve_model(model_name)
    questions = [f"What do the documents say about {q}?" for q in queries["typical"]]
    total, retrieval, generation, tokens = [], [], [], []
    paths: Counter[str] = Counter()
    cited: list[bool] = []  # per answer: cites at least one chunk id the base holds

    seen: list[Any] = []  # each answer's RagTelemetry, failed ones too (on_telemetry)

    async def answer_all() -> None:
        await answer_with_rag(questions[-1], kb, model, max_tool_cycles=cycles, k=k)  # loads it
        for number, question in enumerate(questions[:n_answers], 1):
            with contextlib.suppress(Exception):  # a failed answer still counts, with its time
                await answer_with_rag(question, kb, model, max_tool_cycles=cycles, k=k,
                                      on_telemetry=seen.append)
            telemetry = seen[-1]
            total.append(telemetry.total_ms / 1000)
            retrieval.append(telemetry.retrieval_ms)
            generation.append(telemetry.generation_ms / 1000)
            tokens.append(telemetry.input_tokens)
            paths[telemetry.path] += 1
            cited.append(bool(telemetry.cited_chunk_ids))
            print(f"\r{number}/{n_answers}", end="", file=sys.stderr, flush=True)

    asyncio.run(answer_all())
    kb.close()
    under = sum(t < 10 for t in total) / len(total)

    def spread(values: list[float], unit: str) -> str:
        return (f"p50 {percentile(values, 0.5):.2f} {unit} · p95 {percentile(values, 0.95):.2f}"
                f" {unit} · max {max(values):.2f} {unit}")

    return [
        f"| {size:,} | {model_name}, {n_answers} answers, k={k}, "
        f"max_tool_cycles={cycles} | whole answer | "
        f"{spread(total, 's')} · {under:.0%} under 10 s |",
        f"| {size:,} | | first retrieval | {spread(retrieval, 'ms')} |",
        f"| {size:,} | | generation (the agent run) | {spread(generation, 's')} |",
        f"| {size:,} | | input tokens per answer | p50 {percentile(tokens, 0.5):.0f} · "
        f"p95 {percentile(tokens, 0.95):.0f} |",
        f"| {size:,} | | how answers ended | "
        + ", ".join(f"{path} {count}" for path, count in paths.most_common()) + " |",
        f"| {size:,} | | answers citing a chunk | {sum(cited)} of {len(cited)} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-vectors", action="store_true", help="FTS only")
    parser.add_argument("--answer", type=int, default=0, metavar="N",
                        help="time N whole answers with --model instead of searches")
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--max-tool-cycles", type=int, default=4)
    parser.add_argument("--k", type=int, default=5, help="chunks per retrieval (--answer)")
    args = parser.parse_args()
    print("| chunks | index | measure | figure |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        if args.answer:
            for row in answers(args.sizes[0], args.answer, args.model, args.max_tool_cycles,
                               args.k, Path(tmp)):
                print(row, flush=True)
            return
        for size in args.sizes:
            for vectors in ([False] if args.no_vectors else [False, True]):
                for row in run(size, args.queries, vectors, Path(tmp)):
                    print(row, flush=True)


if __name__ == "__main__":
    main()

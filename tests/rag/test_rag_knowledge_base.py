"""The SQLite knowledge base on real files: indexing, ranking, updates, deletes, reopening."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolcycle.rag import (
    ChunkingPolicy,
    Document,
    Embedder,
    HashingEmbedder,
    KnowledgeBase,
    fts_query,
    split_text,
)

CORPUS = [
    Document("refunds", "Refunds are issued to the original card within 14 days of a return. "
             "Start a refund from the Orders page.", "Refund policy", {"team": "billing"}),
    Document("shipping", "Standard shipping takes 3 to 5 business days. Express shipping "
             "arrives the next business day for orders placed before noon.", "Shipping",
             {"team": "logistics"}),
    Document("warranty", "Every laptop carries a two-year warranty covering hardware faults. "
             "Batteries are covered for one year.", "Warranty", {"team": "support"}),
    Document("passwords", "To reset your password, open Settings, choose Security and click "
             "'Forgot password'. A reset link is emailed within minutes.", "Account security",
             {"team": "support"}),
    Document("office", "Our headquarters are in Lisbon. The office is open Monday to Friday "
             "from 9:00 to 18:00.", "Offices", {"team": "people"}),
    Document("gift-cards", "Gift cards never expire and can be combined with discount codes. "
             "They cannot be refunded or exchanged for cash.", "Gift cards", {"team": "billing"}),
]


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase(tmp_path / "kb.sqlite", embedder=HashingEmbedder())
    base.add_many(CORPUS)
    return base


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how long does express shipping take", "shipping#0"),
        ("reset password link", "passwords#0"),
        ("battery warranty", "warranty#0"),
        ("where is the headquarters", "office#0"),
        ("refund to my card", "refunds#0"),
    ],
)
@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_expected_top_hit(kb: KnowledgeBase, query: str, expected: str, mode: str) -> None:
    hits = kb.search(query, k=3, mode=mode)  # type: ignore[arg-type]
    assert hits[0].chunk_id == expected
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_stemming_matches_other_word_forms(kb: KnowledgeBase) -> None:
    hits = kb.search("refunded", mode="fts")
    assert {h.doc_id for h in hits} == {"refunds", "gift-cards"}


def test_snippet_highlights_matched_words(kb: KnowledgeBase) -> None:
    [hit, *_] = kb.search("warranty", mode="fts")
    assert "[warranty]" in hit.snippet
    assert hit.title == "Warranty"
    assert hit.metadata == {"team": "support"}


def test_vector_search_finds_word_variants_fts_cannot(kb: KnowledgeBase) -> None:
    # "laptops" and "batteries" share trigrams with the warranty text; no exact term "warrant"
    hits = kb.search("laptops batteries", mode="vector", k=1)
    assert hits[0].doc_id == "warranty"
    assert 0.0 < hits[0].score <= 1.0


def test_hybrid_records_both_ranks(kb: KnowledgeBase) -> None:
    [hit, *_] = kb.search("express shipping", mode="hybrid")
    assert hit.ranks == {"fts": 1, "vector": 1}


def test_metadata_filter(kb: KnowledgeBase) -> None:
    hits = kb.search("refund cards", where={"team": "billing"}, mode="fts")
    assert {h.doc_id for h in hits} == {"refunds", "gift-cards"}
    assert kb.search("password", where={"team": "billing"}, mode="fts") == []
    hits = kb.search("password", where={"team": "support"}, mode="vector")
    assert {h.doc_id for h in hits} <= {"warranty", "passwords"}


def test_no_match_is_an_empty_list(kb: KnowledgeBase) -> None:
    assert kb.search("zeppelin", mode="fts") == []
    assert kb.search("???", mode="fts") == []


def test_query_syntax_from_a_model_cannot_break_search(kb: KnowledgeBase) -> None:
    for text in ['"unbalanced', "NEAR(a b)", "shipping AND OR NOT", "col:shipping", "*"]:
        kb.search(text, mode="fts")
    assert fts_query('shipping" OR x') == '"shipping" OR "x"'


def test_update_reindexes_and_drops_old_chunks(kb: KnowledgeBase) -> None:
    kb.update("office", text="We moved: the headquarters are now in Porto.")
    assert kb.search("Lisbon", mode="fts") == []
    assert all("Lisbon" not in h.text for h in kb.search("Lisbon", mode="hybrid"))
    assert kb.search("Porto", mode="fts")[0].chunk_id == "office#0"
    doc = kb.get("office")
    assert doc is not None and doc.title == "Offices" and doc.metadata == {"team": "people"}
    kb.update("office", metadata={"team": "facilities"})
    assert kb.search("Porto", where={"team": "facilities"}, mode="fts")[0].doc_id == "office"
    with pytest.raises(KeyError):
        kb.update("nope", text="x")


def test_delete_removes_from_every_index(kb: KnowledgeBase) -> None:
    chunks = kb.count_chunks()
    assert kb.delete("warranty") is True
    assert kb.delete("warranty") is False
    assert kb.get("warranty") is None
    assert kb.count_chunks() == chunks - 1
    for mode in ("fts", "vector", "hybrid"):
        assert all(h.doc_id != "warranty" for h in kb.search("warranty laptop", mode=mode))  # type: ignore[arg-type]


def test_reopen_existing_file_and_settings_checks(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    with KnowledgeBase(path, embedder=HashingEmbedder(64),
                       chunking=ChunkingPolicy(200, 20)) as kb:
        kb.add_many(CORPUS)
    with KnowledgeBase.open(path, embedder=HashingEmbedder(64)) as again:
        assert again.count_documents() == len(CORPUS)
        assert again.chunking == ChunkingPolicy(200, 20)
        assert again.search("express", mode="vector")[0].doc_id == "shipping"
    with pytest.raises(ValueError, match="cannot be searched"):
        KnowledgeBase.open(path, embedder=HashingEmbedder(128))
    with pytest.raises(ValueError, match="chunked with"):
        KnowledgeBase(path, chunking=ChunkingPolicy(300, 20))
    with pytest.raises(FileNotFoundError):
        KnowledgeBase.open(tmp_path / "missing.sqlite")


def test_read_only_open_refuses_writes(kb: KnowledgeBase) -> None:
    reader = KnowledgeBase.open(kb.path, embedder=HashingEmbedder(), read_only=True)
    assert reader.search("shipping")[0].doc_id == "shipping"
    with pytest.raises(PermissionError):
        reader.add("new text")
    reader.close()


def test_a_failed_batch_leaves_nothing_behind(kb: KnowledgeBase) -> None:
    before = (kb.count_documents(), kb.count_chunks())
    with pytest.raises(TypeError):
        kb.add_many([Document("ok", "fine text"), Document("bad", 42)])  # type: ignore[arg-type]
    assert (kb.count_documents(), kb.count_chunks()) == before
    # fails inside the transaction, after "ok" was written: rolled back
    with pytest.raises(TypeError):
        kb.add_many([Document("ok", "fine text"), Document("bad", "x", metadata={"o": object()})])
    assert (kb.count_documents(), kb.count_chunks()) == before
    assert kb.search("fine", mode="fts") == []
    with pytest.raises(KeyError):
        kb.update("missing", text="x")
    kb.add("still writable", id="after")
    assert kb.get("after") is not None


def test_opening_a_foreign_sqlite_file_read_only_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not a toolcycle knowledge base"):
        KnowledgeBase.open(path, read_only=True)


def test_wal_lets_readers_search_while_a_writer_indexes(kb: KnowledgeBase) -> None:
    assert sqlite3.connect(kb.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = KnowledgeBase.open(kb.path, embedder=HashingEmbedder())
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                reader.search("shipping", mode="hybrid")
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for i in range(30):
            kb.add(f"Pallet {i} ships by sea freight.", id=f"pallet-{i}")
    finally:
        stop.set()
        thread.join()
    assert errors == []
    # the reader sees the writer's commits, in both indexes (vector cache is refreshed)
    assert reader.search("sea freight pallet", mode="fts", k=50).__len__() == 30
    assert any(h.doc_id.startswith("pallet") for h in reader.search("pallet", mode="vector"))
    reader.close()


@pytest.mark.parametrize("mode", ["fts", "hybrid"])
def test_concurrent_readers_while_another_connection_adds_and_deletes(
    kb: KnowledgeBase, mode: str
) -> None:
    """Readers in threads (two sharing one instance, two with their own, one read-only) search
    while a writer adds and deletes documents. A search runs several statements (FTS, vectors,
    rows); each must see the same state, or a hit deleted in between has no row (a KeyError
    before searches ran in one read transaction)."""
    shared = KnowledgeBase.open(kb.path, embedder=HashingEmbedder())
    readers = [shared, shared, KnowledgeBase.open(kb.path, embedder=HashingEmbedder()),
               KnowledgeBase.open(kb.path, embedder=HashingEmbedder(), read_only=True)]
    errors: list[BaseException] = []
    counts = [0] * len(readers)
    stop = threading.Event()

    def read(n: int) -> None:
        try:
            while not stop.is_set():
                hits = readers[n].search("sea freight pallet", k=5, mode=mode)  # type: ignore[arg-type]
                # a hit is whole: its text belongs to the chunk id it names
                assert all(h.text.startswith(f"Pallet {h.doc_id[7:]} ") for h in hits
                           if h.doc_id.startswith("pallet-")), hits
                counts[n] += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(len(readers))]
    for thread in threads:
        thread.start()
    try:
        for i in range(120):
            kb.add(f"Pallet {i} ships by sea freight.", id=f"pallet-{i}")
            kb.delete(f"pallet-{i}")
            if errors:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert errors == []
    assert all(counts), counts  # every reader really searched while the writer wrote
    # every pallet is gone again, for the shared instance too
    assert not [h for h in shared.search("pallet", mode=mode)  # type: ignore[arg-type]
                if h.doc_id.startswith("pallet-")]
    for reader in readers[1:]:
        reader.close()


def test_generated_ids_and_iteration(tmp_path: Path) -> None:
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    first = kb.add("alpha")
    second = kb.add("beta")
    assert first != second and first.startswith("doc-")
    assert [d.id for d in kb] == sorted([first, second])
    with pytest.raises(ValueError, match="needs an embedder"):
        kb.search("alpha", mode="vector")


def test_long_document_is_chunked_with_stable_ids(tmp_path: Path) -> None:
    kb = KnowledgeBase(tmp_path / "kb.sqlite", chunking=ChunkingPolicy(120, 30))
    sentences = [f"Sentence {i} mentions topic{i}." for i in range(40)]
    kb.add(" ".join(sentences), id="long")
    doc = kb.get("long")
    assert doc is not None and len(doc.chunk_ids) > 5
    assert doc.chunk_ids[:2] == ["long#0", "long#1"]
    hit = kb.search("topic37", mode="fts")[0]
    assert "topic37" in hit.text
    chunk = kb.chunk(hit.chunk_id)
    assert chunk is not None and chunk.text == hit.text


def test_split_text_respects_size_and_overlap() -> None:
    text = "\n\n".join(
        " ".join(f"Word{p}_{i} is here." for i in range(25)) for p in range(3)
    ) + " " + "x" * 500
    policy = ChunkingPolicy(200, 40)
    chunks = split_text(text, policy)
    assert all(0 < len(c) <= 200 for c in chunks)
    assert chunks[0].split(". ")[-1] in chunks[1]  # the last sentence is repeated
    assert "".join(chunks).count("x") >= 500
    assert split_text("   ") == []
    with pytest.raises(ValueError):
        ChunkingPolicy(100, 60)


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    embedder = HashingEmbedder(64)
    [a, b] = embedder.embed(["Refund my card", "Refund my card"])
    assert a == b and len(a) == 64
    assert abs(sum(v * v for v in a) - 1.0) < 1e-9
    assert embedder.embed([""])[0] == [0.0] * 64
    with pytest.raises(ValueError):
        HashingEmbedder(4)


class LetterCounts:
    """A custom embedder through the protocol: counts of a few letters (dimension 8)."""

    name = "letters-v1"
    dimensions = 8

    def __init__(self, broken: bool = False) -> None:
        self.broken = broken

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        size = 7 if self.broken else 8
        return [[float(t.lower().count(c)) for c in "aeioustr"[:size]] for t in texts]


def test_custom_embedders_plug_in_through_the_protocol(tmp_path: Path) -> None:
    assert isinstance(LetterCounts(), Embedder)
    kb = KnowledgeBase(tmp_path / "kb.sqlite", embedder=LetterCounts())
    kb.add("aaaa aaaa", id="a-heavy")
    kb.add("uuuu ssss", id="u-heavy")
    assert kb.search("aaa", mode="vector")[0].doc_id == "a-heavy"
    assert kb.search("uus", mode="vector")[0].doc_id == "u-heavy"
    broken = KnowledgeBase(tmp_path / "broken.sqlite", embedder=LetterCounts(broken=True))
    with pytest.raises(ValueError, match="7 dimensions, expected 8"):
        broken.add("text")
    assert broken.count_documents() == 0


def test_full_text_search_works_without_numpy() -> None:
    """numpy is the ``rag`` extra, needed for vectors only: without it FTS still works and a
    vector knowledge base says what to install."""
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['numpy'] = None\n"
        "from toolcycle.rag import KnowledgeBase, HashingEmbedder\n"
        "kb = KnowledgeBase(); kb.add('plain words here', id='p')\n"
        "assert kb.search('words')[0].chunk_id == 'p#0'\n"
        "try:\n"
        "    KnowledgeBase(embedder=HashingEmbedder())\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert "pip install 'toolcycle[rag]'" in done.stdout


def test_conjunctive_first_keeps_bm25_scores_and_falls_back_to_any_word(tmp_path: Path) -> None:
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    kb.add_many([Document(f"both-{i}", f"alpha beta filler {'alpha ' * i}") for i in range(6)]
                + [Document("alpha-only", "alpha alpha alpha alpha alpha alpha alpha alpha")]
                + [Document("gamma", "gamma ray")])
    with sqlite3.connect(kb.path) as conn:  # pure BM25 over "alpha OR beta", straight from FTS5
        pure = {pk: -rank for pk, rank in conn.execute(
            "SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH '\"alpha\" OR \"beta\"'")}
        pk_of = dict(conn.execute("SELECT id, pk FROM chunks"))
    hits = kb.search("alpha beta", k=5, mode="fts")
    assert len(hits) == 5 and all(h.doc_id.startswith("both-") for h in hits)
    assert [h.score for h in hits] == pytest.approx([pure[pk_of[h.chunk_id]] for h in hits])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # fewer than k chunks hold every word: the any-word query runs, with full recall
    assert {h.doc_id for h in kb.search("alpha gamma", k=5, mode="fts")} >= {"gamma",
                                                                              "alpha-only"}

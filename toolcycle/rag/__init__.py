"""Retrieval-augmented generation: a SQLite knowledge base, embedders, read-only SQL tools and
the ``answer_with_rag`` helpers (a thin layer over :class:`toolcycle.Agent`)."""

from __future__ import annotations

from .answer import (
    DEFAULT_INSTRUCTIONS,
    MAX_TOOL_CYCLES_CAP,
    AnswerEvent,
    RagAnswer,
    RagStream,
    RetrievalEvent,
    answer_with_rag,
    answer_with_rag_stream,
    find_citations,
)
from .chunking import ChunkingPolicy, split_text
from .embedders import Embedder, HashingEmbedder
from .knowledge_base import Document, KnowledgeBase, SearchHit
from .sql_tools import ReadOnlyViolation, SQLiteDatabase, sql_tools
from .storage import fts_query
from .telemetry import RagTelemetry, RetrievedChunk, SearchRecord

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "MAX_TOOL_CYCLES_CAP",
    "AnswerEvent",
    "ChunkingPolicy",
    "Document",
    "Embedder",
    "HashingEmbedder",
    "KnowledgeBase",
    "RagAnswer",
    "RagStream",
    "RagTelemetry",
    "ReadOnlyViolation",
    "RetrievalEvent",
    "RetrievedChunk",
    "SQLiteDatabase",
    "SearchHit",
    "SearchRecord",
    "answer_with_rag",
    "answer_with_rag_stream",
    "find_citations",
    "fts_query",
    "split_text",
    "sql_tools",
]

"""Retrieval-augmented generation: a SQLite knowledge base, embedders, read-only SQL tools and
the ``answer_with_rag`` helpers (a thin layer over :class:`toolcycle.Agent`)."""

from __future__ import annotations

from .chunking import ChunkingPolicy, split_text
from .embedders import Embedder, HashingEmbedder
from .knowledge_base import Document, KnowledgeBase, SearchHit, fts_query
from .sql_tools import ReadOnlyViolation, SQLiteDatabase, sql_tools

__all__ = [
    "ChunkingPolicy",
    "Document",
    "Embedder",
    "HashingEmbedder",
    "KnowledgeBase",
    "ReadOnlyViolation",
    "SQLiteDatabase",
    "SearchHit",
    "fts_query",
    "split_text",
    "sql_tools",
]

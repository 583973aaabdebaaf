"""Splitting documents into chunks: the unit that is indexed, retrieved and cited.

Chunks follow the text's own boundaries where they can (paragraphs, then sentences, then
words) so that a retrieved chunk reads as a passage rather than a cut-off fragment, and
consecutive chunks overlap a little so that a fact straddling a boundary is found from either
side. Sizes are in characters: that is what a context window budget is roughly made of, and
it needs no tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class ChunkingPolicy:
    """``size``: the most characters in a chunk; ``overlap``: characters repeated from the end
    of the previous chunk (whole sentences or words, never more than ``overlap``)."""

    size: int = 1000
    overlap: int = 150

    def __post_init__(self) -> None:
        problems = []
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 50:
            problems.append(f"chunk size must be an integer >= 50, got {self.size!r}")
        elif (
            isinstance(self.overlap, bool)
            or not isinstance(self.overlap, int)
            or not 0 <= self.overlap < self.size // 2
        ):
            problems.append(
                f"chunk overlap must be an integer in [0, size/2), got {self.overlap!r}"
            )
        if problems:
            raise ValueError("; ".join(problems))


def split_text(text: str, policy: ChunkingPolicy = ChunkingPolicy()) -> list[str]:
    """The chunks of ``text``: never empty strings, each at most ``policy.size`` characters."""
    units = _units(text, policy.size)
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for unit in units:
        extra = len(unit) + (1 if current else 0)
        if current and length + extra > policy.size:
            chunks.append(" ".join(current))
            current = _tail(current, policy.overlap, room=policy.size - len(unit) - 1)
            length = len(" ".join(current))
            extra = len(unit) + (1 if current else 0)
        current.append(unit)
        length += extra
    if current:
        chunks.append(" ".join(current))
    return chunks


def _units(text: str, size: int) -> list[str]:
    """Sentences (within paragraphs), with any sentence longer than ``size`` split by words."""
    units: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        for sentence in _SENTENCE.split(paragraph):
            sentence = " ".join(sentence.split())
            if not sentence:
                continue
            if len(sentence) <= size:
                units.append(sentence)
            else:
                units.extend(_split_long(sentence, size))
    return units


def _split_long(sentence: str, size: int) -> list[str]:
    pieces: list[str] = []
    current = ""
    for word in sentence.split(" "):
        while len(word) > size:  # a single enormous "word" (a URL, base64): hard cut
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:size])
            word = word[size:]
        if current and len(current) + 1 + len(word) > size:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def _tail(units: list[str], overlap: int, room: int) -> list[str]:
    """The last units of a finished chunk that fit in ``overlap`` (and in ``room``)."""
    budget = min(overlap, room)
    kept: list[str] = []
    used = 0
    for unit in reversed(units):
        cost = len(unit) + (1 if kept else 0)
        if used + cost > budget:
            break
        kept.append(unit)
        used += cost
    kept.reverse()
    return kept

"""Which of the passages an answer saw its content comes from, read from the text itself.

A model asked to cite chunk ids may not (the 1.5B wrote one in 5 of 26 answers that had their
passage, bench/runs/2026-12-07/rag/), and asked harder it starts to write ids instead of
answers. Provenance need not wait on the model: what an answer adds to its question (the
figures, and the words the question does not have) is found in the passages that hold it.
``RagAnswer.attributed`` lists those passages; ``RagAnswer.citations`` stays what the model
itself cited.

The reading: an answer's *marks* are its figures (compared as :func:`~toolcycle.run.figures.
figure_key` writes them, so "1,200" is "1200") and the roots of its content words
(:func:`~toolcycle.words.root`), less the question's own and the words answers use to talk
about passages ("the passage states", "not mentioned"). When the answer adds figures, a
passage is attributed when it holds one of them (a figure names a fact more surely than a
word) and a word of the answer or the question; otherwise when it holds at least half of the
added words. An answer that adds nothing ("No, the gym has no pool" to "Does the gym have a
pool?") is attributed to nothing, as is one no passage supports: attribution is evidence of
where words come from, not a check that the answer is right.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from ..run.figures import FIGURE, figure_key
from ..words import keywords, root

#: Words answers use to talk about the passages rather than from them.
_ABOUT_PASSAGES = ("passage", "passages", "chunk", "knowledge", "base", "document",
                   "documents", "states", "stated", "mentioned", "provided", "according",
                   "information", "answer", "question", "says", "based", "retrieved")


@functools.cache
def _about_passages() -> frozenset[str]:
    """:data:`_ABOUT_PASSAGES`' roots, made at the first answer read (the stemmer loads at
    its first word: :func:`toolcycle.words.root`)."""
    return frozenset(root(w) for w in _ABOUT_PASSAGES)


#: A bracketed citation ("[refunds#0]", "[a#0, b#1]"): the model's own, read apart
#: (``RagAnswer.citations``); its digits are no figure of the answer.
CITATION_GROUP = re.compile(r"\[([^\[\]]+)\]")


def _figures(text: str) -> set[str]:
    return {figure_key(f) for f in FIGURE.findall(text)}


def _words(text: str) -> set[str]:
    return {root(w) for w in keywords(text) if not w.isdigit()} - _about_passages()


def attributed(answer: str, question: str, passages: Mapping[str, str]) -> list[str]:
    """The ids of ``passages`` (chunk id to text) that hold what ``answer`` adds to
    ``question``, best supported first (more shared figures, then more shared words)."""
    said = CITATION_GROUP.sub(" ", answer)
    figures = _figures(said) - _figures(question)
    asked = _words(question)
    every_word = _words(said) | asked
    words = every_word - asked
    ranked: list[tuple[int, int, int, str]] = []
    for chunk_id, text in passages.items():
        held = _words(text)
        shared_figures = len(figures & _figures(text))
        shared_words = len(words & held)
        # A figure alone is no evidence: "5" is also in "05:00". With a word of the answer
        # or of the question beside it, the passage is about what was asked (a bare "80%"
        # has no word of its own).
        if (shared_figures > 0 and bool(every_word & held) if figures
                else bool(words) and shared_words * 2 >= len(words)):
            ranked.append((shared_figures, shared_words, len(every_word & held), chunk_id))
    ranked.sort(key=lambda entry: (-entry[0], -entry[1], -entry[2]))
    return [entry[3] for entry in ranked]

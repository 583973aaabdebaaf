"""The context windows (input tokens per request) of well-known models, by name prefix.

A run compacts its history before it outgrows its model's window (:mod:`toolcycle.run.compaction`);
this table is how a cloud adapter knows the window of the model it was given. A model missing
here has no known window: set ``model.context_window`` or ``Limits(max_context_tokens=...)``.
Longest prefix wins, so ``gpt-4o-mini`` can differ from ``gpt-4o``.
"""

from __future__ import annotations

WINDOWS: dict[str, int] = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude-": 200_000,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "gemini-3": 1_048_576,
}


def known_window(model_name: str) -> int | None:
    """The window of ``model_name`` by its longest known prefix, or ``None``."""
    name = model_name.lower().rsplit("/", 1)[-1]
    best = max((p for p in WINDOWS if name.startswith(p)), key=len, default=None)
    return None if best is None else WINDOWS[best]

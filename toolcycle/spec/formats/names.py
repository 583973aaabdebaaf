"""Reversible safe names for tools whose names a provider would reject.

A provider accepts only names matching its :class:`NamePolicy`. :func:`safe_name` turns any
name into an allowed one *readably* (``math.factorial`` -> ``math_factorial``), because the
model reads tool names and a readable name is chosen more reliably than an encoded one. That
readability costs injectivity (``a.b`` and ``a_b`` would meet), so reversal goes through a
:class:`NameMap`: it remembers every name it mapped, resolves collisions with a short hash
suffix and maps a model's call back to the original name. A map round-trips through JSON, so
it can be stored beside an exported tool list.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class NamePolicy:
    """Which tool names a provider accepts: characters from ``allowed`` (a regex character
    class) and at most ``max_length`` of them."""

    provider: str
    allowed: str
    max_length: int

    def allows(self, name: str) -> bool:
        return _full_pattern(self.allowed, self.max_length).fullmatch(name) is not None

    @property
    def pattern(self) -> str:
        """The whole-name regular expression, as the provider documents it."""
        return f"^{self.allowed}{{1,{self.max_length}}}$"


#: OpenAI Chat Completions / Responses function names.
OPENAI_NAMES = NamePolicy("openai", "[a-zA-Z0-9_-]", 64)
#: Anthropic Messages API tool names.
ANTHROPIC_NAMES = NamePolicy("anthropic", "[a-zA-Z0-9_-]", 64)
#: MCP tool names (the specification's recommended character set and length).
MCP_NAMES = NamePolicy("mcp", "[A-Za-z0-9_.-]", 128)

POLICIES: dict[str, NamePolicy] = {
    p.provider: p for p in (OPENAI_NAMES, ANTHROPIC_NAMES, MCP_NAMES)
}

_HASH_CHARS = 8


def safe_name(name: str, policy: NamePolicy = OPENAI_NAMES) -> str:
    """A name ``policy`` accepts, derived readably from ``name``; ``name`` itself if allowed.

    Each run of disallowed characters becomes one ``_``; an empty result becomes ``tool``; a
    result that had to be shortened ends with ``_`` and a hash of the original, so that long
    names sharing a prefix stay distinct. Deterministic, but not injective: use
    :class:`NameMap` to reverse it.
    """
    if policy.allows(name):
        return name
    allowed = re.compile(policy.allowed)
    chars: list[str] = []
    for char in name:
        if allowed.fullmatch(char):
            chars.append(char)
        elif not chars or chars[-1] != "_":
            chars.append("_")
    candidate = "".join(chars).strip("_") or "tool"
    if len(candidate) > policy.max_length:
        candidate = _with_hash(candidate, name, policy.max_length)
    return candidate


class NameMap:
    """A two-way mapping between original tool names and the safe names sent to a provider.

    ``safe(name)`` assigns (once) and returns the provider name; ``original(provider_name)``
    reverses it. Unknown provider names come back unchanged, so a model's call to a tool that
    does not exist still reaches the loop, which answers it with an "unknown tool" observation.
    """

    def __init__(self, policy: NamePolicy = OPENAI_NAMES, names: Iterable[str] = ()) -> None:
        self.policy = policy
        self._to_safe: dict[str, str] = {}
        self._to_original: dict[str, str] = {}
        # Allowed names are claimed first: they must keep their own name, and a mapped name
        # that would collide with one of them takes the hashed form instead.
        names = list(names)
        for name in names:
            if policy.allows(name):
                self.safe(name)
        for name in names:
            self.safe(name)

    def safe(self, name: str) -> str:
        """The provider name for ``name``, assigning one on first use."""
        known = self._to_safe.get(name)
        if known is not None:
            return known
        candidate = safe_name(name, self.policy)
        if candidate in self._to_original and self._to_original[candidate] != name:
            candidate = _with_hash(candidate, name, self.policy.max_length)
        self._to_safe[name] = candidate
        self._to_original[candidate] = name
        return candidate

    def original(self, provider_name: str) -> str:
        """The original name behind ``provider_name`` (unchanged when it was never mapped)."""
        return self._to_original.get(provider_name, provider_name)

    def renamed(self) -> dict[str, str]:
        """Only the names that changed: ``{original: safe}``."""
        return {o: s for o, s in self._to_safe.items() if o != s}

    def __contains__(self, name: object) -> bool:
        return name in self._to_safe

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._to_safe.items())

    def __len__(self) -> int:
        return len(self._to_safe)

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.policy.provider, "names": dict(self._to_safe)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NameMap:
        """Rebuild a stored map exactly (assignments are restored, not recomputed)."""
        mapping = cls(POLICIES[data["provider"]])
        for original, safe in data["names"].items():
            mapping._to_safe[original] = safe
            mapping._to_original[safe] = original
        return mapping


def _with_hash(candidate: str, original: str, max_length: int) -> str:
    digest = hashlib.sha1(original.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    head = candidate[: max_length - _HASH_CHARS - 1].rstrip("_") or "tool"
    return f"{head}_{digest}"


_PATTERN_CACHE: dict[tuple[str, int], re.Pattern[str]] = {}


def _full_pattern(allowed: str, max_length: int) -> re.Pattern[str]:
    key = (allowed, max_length)
    pattern = _PATTERN_CACHE.get(key)
    if pattern is None:
        pattern = _PATTERN_CACHE[key] = re.compile(f"{allowed}{{1,{max_length}}}")
    return pattern

"""The wire form of already-converted messages, shared by the provider adapters.

Adapters convert the neutral history at the edge; without a cache, iteration ``n`` of a run
would convert all ``n`` earlier messages again. Messages are mutable dataclasses without a
stable hash, so the cache is keyed by object identity, and the loop never edits a message once
it is in the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import Message


class MessageCache:
    """Wire form of already-converted messages, keyed by object identity.

    The message object is kept in the entry so its ``id`` cannot be reused by a new object
    while the entry lives. Entries of messages no longer sent are dropped once the cache grows
    well past the size of the current request, which bounds memory across runs.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Message, Any]] = {}

    def get(self, message: Message) -> Any | None:
        entry = self._entries.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        return None

    def put(self, message: Message, wire: Any) -> None:
        self._entries[id(message)] = (message, wire)

    def prune(self, keep: Sequence[Message]) -> None:
        if len(self._entries) > 2 * len(keep) + 64:
            kept = {id(m) for m in keep}
            self._entries = {k: v for k, v in self._entries.items() if k in kept}

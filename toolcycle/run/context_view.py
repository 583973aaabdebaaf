"""The compacted view of a run's history (:mod:`.compaction`), kept on the run's state."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..messages import Message


@dataclass(slots=True)
class ContextView:
    """What a request sends in place of the run's whole history: ``prefix`` then
    ``messages[view_from:]``. ``prefix_chars`` and ``replaced_chars`` keep the estimate O(1);
    ``summary`` covers ``messages[:summary_upto]`` (after the task), rolled forward from the
    full messages, never from their stubs."""

    prefix: list[Message] = field(default_factory=list)
    view_from: int = 0
    prefix_chars: int = 0
    replaced_chars: int = 0
    summary: str = ""
    summary_upto: int = 0

    @property
    def saved_chars(self) -> int:
        return self.replaced_chars - self.prefix_chars

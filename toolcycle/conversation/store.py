"""What a conversation store must do, and the context budget over a stored history.

A store keeps, per conversation id, an append-only list of messages and a version that grows
by one with every append. Runs never interleave: a run *claims* the conversation before it
loads it (a second claim while the first is held raises :class:`ConversationBusy`), and its
*append* checks both the claim and the version in one transaction, then releases the claim.
A claim is a lease: a run whose process died holds it only until ``lease_s`` passes, and a run
that outlived its lease finds its append refused (:class:`ConversationConflict`) instead of
writing over a history another run has extended.

Backends implement :class:`ConversationStore` (``sqlite.py``; ``postgres.py`` for a database
shared by many machines).
Stores deal in neutral :class:`~toolcycle.messages.Message` objects; each backend serialises
them with ``Message.to_dict`` / ``from_dict`` and redacts secrets before writing (the trace
store's :class:`~toolcycle.tracing.redaction.Redactor`, see docs/security.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..errors import ConversationBusy, ConversationConflict
from ..messages import Message
from ..result import ContextSummary
from ..run.state import message_chars
from ..tracing.redaction import Redactor


@runtime_checkable
class ConversationStore(Protocol):
    """Persistent conversations; every method is atomic and safe across threads and processes.

    - ``claim(conversation_id, holder, lease_s)`` creates the conversation if it is new, takes
      it for ``holder`` (a run id) until ``lease_s`` seconds from now, and returns its current
      version. Raises :class:`~toolcycle.errors.ConversationBusy` while another holder's lease
      is live. Claiming again with the same holder renews the lease.
    - ``load(conversation_id)`` returns ``(messages, version)`` read in one snapshot (``([],
      0)`` for an unknown id). Reading needs no claim.
    - ``append(conversation_id, holder, messages, expected_version)`` appends ``messages`` in
      order, increments the version and releases the claim, all in one transaction; returns
      the new version. Raises :class:`~toolcycle.errors.ConversationConflict` (and writes
      nothing) when the version is not ``expected_version`` or ``holder`` no longer holds the
      claim.
    - ``release(conversation_id, holder)`` drops ``holder``'s claim (no-op if not held by it).
    - ``list_conversations()`` returns every conversation id, oldest first.
    """

    def claim(self, conversation_id: str, holder: str, lease_s: float) -> int: ...
    def load(self, conversation_id: str) -> tuple[list[Message], int]: ...
    def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
               expected_version: int) -> int: ...
    def release(self, conversation_id: str, holder: str) -> None: ...
    def list_conversations(self) -> list[str]: ...


@runtime_checkable
class SummaryStore(Protocol):
    """A conversation store that also keeps the conversation's summary (both built-in
    backends do; a store of your own without these methods keeps working, its runs compacting
    the loaded history again, as before).

    - ``load_summary(conversation_id)``: the stored :class:`~toolcycle.result.ContextSummary`
      (indices into the stored messages), or ``None``.
    - ``save_summary(conversation_id, summary)``: keep ``summary`` unless the stored one
      already reaches as far (``upto``); atomic. The text is redacted as messages are.
    """

    def load_summary(self, conversation_id: str) -> ContextSummary | None: ...
    def save_summary(self, conversation_id: str, summary: ContextSummary) -> None: ...


def summary_text(summary: ContextSummary, redactor: Redactor | None) -> str:
    """How a backend stores a summary's text: redacted like the messages it stands for."""
    return summary.text if redactor is None else redactor.text(summary.text)


def usable_summary(summary: ContextSummary | None, stored: Sequence[Message]
                   ) -> ContextSummary | None:
    """``summary`` if it still fits the stored history, else ``None`` (read from a store, it
    is untrusted: a damaged or foreign one is ignored, never a crash): it merges into a user
    message and ends before an assistant message, so no call is cut from its result."""
    if summary is None or not summary.text:
        return None
    start, upto = summary.start, summary.upto
    if not (0 <= start < upto < len(stored)):
        return None
    if stored[start].role != "user" or stored[upto].role != "assistant":
        return None
    return summary


def message_text(message: Message, redactor: Redactor | None) -> str:
    """How a backend stores ``message``: its JSON, secrets redacted unless ``redactor`` is None."""
    data = message.to_dict()
    if redactor is not None:
        return redactor.dumps(data)
    return json.dumps(data, ensure_ascii=False)


def busy(conversation_id: str, holder: str, seconds_left: float) -> ConversationBusy:
    """The error of a claim made while another run's lease is live (every backend's words)."""
    return ConversationBusy(
        f"conversation {conversation_id!r} is in use by run {holder!r} "
        f"(for up to {seconds_left:.0f} s more); concurrent runs are refused")


def conflict(conversation_id: str, holder: str) -> ConversationConflict:
    """The error of an append whose claim or version no longer holds."""
    return ConversationConflict(
        f"conversation {conversation_id!r} changed since run {holder!r} loaded it "
        f"(its claim expired and another run took it); nothing was appended")


def fit_budget(messages: Sequence[Message], max_tokens: int | None) -> list[Message]:
    """The newest whole turns of ``messages`` that fit in ``max_tokens`` (estimated as the
    engine's token budget estimates a request: about four characters a token).

    A turn starts at a user message and holds the assistant's calls and their results that
    follow it, so cutting only before user messages never separates a tool call from its
    result and never leaves a tool result first. When even the newest turn is over budget it is
    kept whole (a run needs its latest context; the run's own token limit then decides); an
    older history with no user message at all is kept as it is.
    """
    if max_tokens is None or not messages:
        return list(messages)
    budget = max_tokens * 4
    sizes = [message_chars(m) for m in messages]
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if not starts:
        return list(messages)
    total = sum(sizes[starts[0]:])
    chosen = starts[-1]
    for start, following in zip(starts, [*starts[1:], len(messages)], strict=True):
        if total <= budget:
            chosen = start
            break
        total -= sum(sizes[start:following])
    return list(messages[chosen:])

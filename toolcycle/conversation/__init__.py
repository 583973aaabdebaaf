"""Persistent conversations: ``agent.run(prompt, conversation=Conversation(store, id))``.

A run on a conversation claims it, loads its history (the newest whole turns within
``max_tokens``, see :func:`fit_budget`), runs, and appends the messages it added (the user
prompt and everything after it; never the instructions, which each run adds itself).

Decisions (docs/conversations.md):

- **Concurrent runs are refused**, not queued: a second run on a conversation another run holds
  raises :class:`~toolcycle.errors.ConversationBusy` before it calls the model. Queuing would
  make the second run answer a history its caller never saw.
- **Only a run that returned is appended.** A run that raised (a model error, a limit that
  raises, cancellation) leaves the conversation exactly as it was and releases it; so does a
  returned result whose messages would leave a tool call unanswered (the engine answers every
  call, so this is a guard, not a path). A stored history is therefore always one a provider
  accepts. A returned run joins whatever its status (docs/status.md): a forced or partial
  answer is what the caller was shown, and the next turn may correct it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, ConversationConflict
from ..messages import Message
from ..result import ContextSummary, RunResult
from .store import ConversationStore, SummaryStore, fit_budget, usable_summary

if TYPE_CHECKING:
    from .postgres import PostgresConversationStore
    from .sqlite import SQLiteConversationStore

__all__ = [
    "Conversation", "ConversationStore", "PostgresConversationStore", "SQLiteConversationStore",
    "SummaryStore", "check_run_conversation", "fit_budget",
]

#: How long a run may hold a conversation before another run may take it (seconds).
DEFAULT_LEASE_S = 3600.0


class Conversation:
    """One conversation in a store. ``store`` is a :class:`ConversationStore`, a SQLite path or a
    ``postgresql://`` URL (conversations continued from many machines, docs/postgres.md).

    ``max_tokens`` bounds the history a run is given (oldest turns dropped first; the store
    keeps everything). ``lease_s`` is how long a run may hold the conversation: a run that
    takes longer loses its claim, and its messages are refused rather than interleaved.
    """

    def __init__(self, store: ConversationStore | str | os.PathLike[str], conversation_id: str,
                 *, max_tokens: int | None = None, lease_s: float = DEFAULT_LEASE_S) -> None:
        problems: list[str] = []
        if not isinstance(conversation_id, str) or not conversation_id:
            problems.append("conversation_id must be a non-empty string")
        if max_tokens is not None and (type(max_tokens) is not int or max_tokens <= 0):
            problems.append(f"max_tokens must be a positive integer or None, got {max_tokens!r}")
        if not isinstance(lease_s, int | float) or lease_s <= 0:
            problems.append(f"lease_s must be a positive number of seconds, got {lease_s!r}")
        if not isinstance(store, str | os.PathLike | ConversationStore):
            problems.append("store must be a ConversationStore, a SQLite path or a "
                            f"postgresql:// URL, got {type(store).__name__}")
        if problems:
            raise ConfigurationError(problems, subject="conversation")
        if isinstance(store, str | os.PathLike):
            from ..stores.location import store_location  # not with every import

            where = store_location(store)
            if where.engine == "postgresql":
                from .postgres import PostgresConversationStore  # psycopg loads only when used

                store = PostgresConversationStore(where.target)
            else:
                from .sqlite import SQLiteConversationStore  # sqlite3 loads only when used

                store = SQLiteConversationStore(where.target)
        self.store: ConversationStore = store
        self.id = conversation_id
        self.max_tokens = max_tokens
        self.lease_s = float(lease_s)

    @property
    def messages(self) -> list[Message]:
        """The whole stored history (no budget applied)."""
        return self.store.load(self.id)[0]

    async def run(self, run_id: str, start: Callable[[list[Message], ContextSummary | None],
                                                     Awaitable[RunResult[Any]]],
                  ) -> RunResult[Any]:
        """Claim, load, ``start(history, summary)``, append the run's new messages (and keep
        the summary its compaction ended with); release on failure. ``summary`` is the stored
        summary the run starts from (indices into ``history``), or ``None``.

        The store is called in a worker thread: a busy SQLite file or a remote database must
        not stall the event loop's other runs.
        """
        return await self._held(run_id, start)

    async def resume(self, run_id: str, history: Sequence[Message],
                     start: Callable[[], Awaitable[RunResult[Any]]]) -> RunResult[Any]:
        """:meth:`run` for a paused run resumed: its messages join the conversation when it
        ends, as if it had never paused. ``history`` is what the run was given when it started;
        a conversation that moved on meanwhile (another run appended to it while this one was
        paused) refuses the resume with :class:`ConversationConflict` rather than interleave.
        """
        def check(given: list[Message], summary: ContextSummary | None
                  ) -> Awaitable[RunResult[Any]]:
            if _dicts(given) != _dicts(history):
                raise ConversationConflict(
                    f"conversation {self.id!r} changed while run {run_id!r} was paused (another "
                    "run added to it): the paused run cannot continue it without interleaving")
            return start()

        return await self._held(run_id, check)

    def history_for_run(self, stored: Sequence[Message], summary: ContextSummary | None
                        ) -> tuple[list[Message], ContextSummary | None]:
        """What a run is given: with a usable stored summary, the history from the user
        message it merges into (the run starts from the summary and the turns after it, not
        from the whole history compacted again; ``max_tokens`` then applies to nothing: the
        summary is the bound), else the newest whole turns within ``max_tokens``."""
        usable = usable_summary(summary, stored)
        if usable is None:
            return fit_budget(stored, self.max_tokens), None
        return list(stored[usable.start:]), ContextSummary(usable.text, 0,
                                                           usable.upto - usable.start)

    async def _held(self, run_id: str, body: Callable[[list[Message], ContextSummary | None],
                                                      Awaitable[RunResult[Any]]]
                    ) -> RunResult[Any]:
        version = await asyncio.to_thread(self.store.claim, self.id, run_id, self.lease_s)
        try:
            stored, version = await asyncio.to_thread(self.store.load, self.id)
            summary = (await asyncio.to_thread(self.store.load_summary, self.id)
                       if isinstance(self.store, SummaryStore) else None)
            given, starting = self.history_for_run(stored, summary)
            result = await body(given, starting)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(self.store.release, self.id, run_id))
            raise
        new = result.new_messages
        if not _all_answered(new):  # paused: nothing joins the conversation until it ends
            await asyncio.to_thread(self.store.release, self.id, run_id)
            return result
        try:
            await asyncio.to_thread(self.store.append, self.id, run_id, new, version)
        except ConversationConflict as exc:
            exc.result = result  # the run's work is not lost with its messages
            raise
        kept = _in_store(result, len(stored) - len(given), len(given))
        if kept is not None and isinstance(self.store, SummaryStore):
            await asyncio.to_thread(self.store.save_summary, self.id, kept)
        return result

    def __repr__(self) -> str:
        return f"Conversation({self.id!r}, store={type(self.store).__name__})"


def check_run_conversation(conversation: object, message_history: object) -> None:
    problems = [] if isinstance(conversation, Conversation) else [
        f"conversation must be a Conversation, got {type(conversation).__name__}"]
    if message_history is not None:
        problems.append("give conversation= or message_history=, not both (the conversation "
                        "holds the history)")
    if problems:
        raise ConfigurationError(problems, subject="run")


def __getattr__(name: str) -> Any:
    if name == "SQLiteConversationStore":
        from .sqlite import SQLiteConversationStore

        return SQLiteConversationStore
    if name == "PostgresConversationStore":
        from .postgres import PostgresConversationStore

        return PostgresConversationStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _in_store(result: RunResult[Any], first: int, given: int) -> ContextSummary | None:
    """The run's summary in the stored messages' indices (``first``: where the ``given``
    messages of history start in the store), or ``None``: none, or one that merges into a
    message before the history (not the conversation's to keep)."""
    summary = result.context_summary
    offset = result.new_message_index - given  # where the history starts in the run's messages
    if summary is None or summary.start < offset:
        return None
    return ContextSummary(summary.text, first + summary.start - offset,
                          first + summary.upto - offset)


def _dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


def _all_answered(messages: Sequence[Message]) -> bool:
    """Whether every tool call in ``messages`` has its result among them."""
    calls = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls}
    answered = {r.call_id for m in messages if m.role == "tool" for r in m.results}
    return calls <= answered

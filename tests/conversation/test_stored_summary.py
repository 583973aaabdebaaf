"""A conversation keeps the summary its runs' compaction wrote, and its next run starts from it.

On SQLite and PostgreSQL alike: the summary a run wrote when the conversation's history
outgrew its budget is stored with the conversation (redacted as its messages are); the next run
is sent that summary and the turns after it, instead of compacting the whole history again
(no summary request), with the system message first and every call beside its result (the
protocol-checking ScriptedModel refuses anything else); its trace says it started from a
stored summary. A stored summary that no longer fits the history is ignored, never a crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcycle import Agent, Conversation, Limits
from toolcycle.conversation import SummaryStore
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.protocol import HistoryChecker
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.result import ContextSummary

WINDOW = 2000


def read_page(page: int) -> str:
    """Read one page of the archive."""
    head = "The vault code is 4711. " if page == 1 else f"Page {page} has no code. "
    return head + "lorem ipsum " * 300


class Archivist:
    """Reads ``pages`` pages, then answers from what its request holds; asked for a summary
    (the compaction prompt), it keeps the code (and a secret-looking key) if the transcript
    holds the code."""

    def __init__(self, pages: int) -> None:
        self.pages, self.read = pages, 0
        self.sent: list[list[Message]] = []
        self.summaries = 0

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> Any:
        text = " ".join(m.text + "".join(r.content for r in m.results) for m in messages)
        if messages[0].text.startswith("You compact"):
            self.summaries += 1
            return ("Pages read. The vault code is 4711. Key: sk-abcdefghijklmnopqrstuvwx"
                    if "4711" in text else "Pages read.")
        self.sent.append(list(messages))
        if self.read < self.pages:
            self.read += 1
            return call("read_page", {"page": self.read})
        return "The code is 4711." if "4711" in text else "I do not know."


def archivist_agent(archivist: Archivist) -> Agent[None, str]:
    return Agent(ScriptedModel(archivist, context_window=WINDOW), "Be exact.",
                 tools=[read_page], limits=Limits(max_context_tokens=WINDOW, max_iterations=20))


def test_the_next_run_starts_from_the_stored_summary(db_location: str) -> None:
    chat = Conversation(db_location, "user-1")
    first = Archivist(pages=8)
    archivist_agent(first).run_sync("Read pages 1 to 8.", conversation=chat)
    assert first.summaries >= 1
    store = chat.store
    assert isinstance(store, SummaryStore)
    kept = store.load_summary("user-1")
    stored = chat.messages
    assert kept is not None and "4711" in kept.text
    assert "sk-abcdefghijklmnopqrstuvwx" not in kept.text  # redacted as the messages are
    assert stored[kept.start] == Message.user("Read pages 1 to 8.")
    assert stored[kept.upto].role == "assistant" and kept.upto < len(stored)

    second = Archivist(pages=0)
    result = archivist_agent(second).run_sync("So what is the vault code?", conversation=chat)
    assert result.output == "The code is 4711."
    assert second.summaries == 0  # nothing compacted again: the stored summary was the start
    assert result.trace.compactions[0]["step"] == "stored summary"
    assert result.trace.compactions[0]["tokens_saved"] > 0
    sent = second.sent[0]
    assert sent[0] == Message.system("Be exact.")  # the system message, never dropped
    assert sent[1].parts[0] == Message.user("Read pages 1 to 8.").parts[0]
    assert kept.text in sent[1].text  # merged into the conversation's task
    assert sent[-1] == Message.user("So what is the vault code?")
    HistoryChecker("both").check(sent)  # every call beside its result
    # the turns the summary stands for are not sent; those after it are, whole
    assert sent[2:-1] == stored[kept.upto:]
    # the record stays whole: every stored message, then the run's two
    assert len(chat.messages) == len(stored) + 2
    assert result.messages[1:len(stored) + 1] == stored


def test_a_summary_that_no_longer_fits_the_history_is_ignored(db_location: str) -> None:
    chat = Conversation(db_location, "user-2")
    archivist_agent(Archivist(pages=2)).run_sync("Read pages 1 and 2.", conversation=chat)
    store = chat.store
    assert isinstance(store, SummaryStore)
    stored = chat.messages
    for start, upto in ((0, len(stored) + 5), (1, 2), (-1, 1)):  # past the end, not a user
        store.save_summary("user-2", ContextSummary("bogus", start, upto))  # message, < 0
    second = Archivist(pages=0)
    result = archivist_agent(second).run_sync("The code?", conversation=chat)
    assert result.output == "The code is 4711."
    assert all(c["step"] != "stored summary" for c in result.trace.compactions)
    assert "bogus" not in " ".join(m.text for m in second.sent[0])


def test_a_store_without_summaries_still_works() -> None:
    """A ConversationStore of one's own that predates summaries: runs load the history and
    compact it themselves, as before."""

    class Plain:
        def __init__(self) -> None:
            self.messages: list[Message] = []
            self.version = 0

        def claim(self, conversation_id: str, holder: str, lease_s: float) -> int:
            return self.version

        def load(self, conversation_id: str) -> tuple[list[Message], int]:
            return list(self.messages), self.version

        def append(self, conversation_id: str, holder: str, messages: Sequence[Message],
                   expected_version: int) -> int:
            self.messages += messages
            self.version += 1
            return self.version

        def release(self, conversation_id: str, holder: str) -> None:
            pass

        def list_conversations(self) -> list[str]:
            return ["x"]

    chat = Conversation(Plain(), "x")
    assert not isinstance(chat.store, SummaryStore)
    archivist_agent(Archivist(pages=8)).run_sync("Read pages 1 to 8.", conversation=chat)
    second = Archivist(pages=0)
    result = archivist_agent(second).run_sync("The code?", conversation=chat)
    assert result.output == "The code is 4711."
    steps = [c["step"] for c in result.trace.compactions]
    assert steps and "stored summary" not in steps  # compacted by the run itself

"""Context compaction with the protocol-checking ScriptedModel: every request fits the model's
window and is a valid history (the model refuses either otherwise), the system message, the
task and the last turn are never compacted, the record stays whole, a fact from the first turn
survives in the summary, and a conversation's next run starts from the summary its last run
wrote."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, Conversation, Limits
from toolcycle.errors import ConfigurationError
from toolcycle.messages import Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.protocol import HistoryChecker
from toolcycle.models.scripted import ScriptedModel, call

WINDOW = 2000


def read_page(page: int) -> str:
    """Read one page of the archive."""
    head = "The vault code is 4711. " if page == 1 else f"Page {page} has no code. "
    return head + "lorem ipsum " * 300


class Archivist:
    """Reads ``pages`` pages, then answers from what its request holds. Asked for a summary
    (the compaction prompt), it keeps the code if the transcript holds it."""

    def __init__(self, pages: int) -> None:
        self.pages, self.read = pages, 0
        self.sent: list[list[Message]] = []  # every request of the run, as sent
        self.summaries = 0

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> Any:
        text = " ".join(m.text + "".join(r.content for r in m.results) for m in messages)
        if messages[0].text.startswith("You compact"):
            self.summaries += 1
            return "Pages read. " + ("The vault code is 4711." if "4711" in text else "")
        self.sent.append(list(messages))
        if self.read < self.pages:
            self.read += 1
            return call("read_page", {"page": self.read})
        return "The code is 4711." if "4711" in text else "I do not know."


def test_a_run_three_windows_long_completes_and_its_answer_needs_the_first_page() -> None:
    archivist = Archivist(pages=12)
    model = ScriptedModel(archivist, context_window=WINDOW)  # refuses an oversized request
    agent = Agent(model, "Be exact.", tools=[read_page], limits=Limits(max_iterations=20))
    result = agent.run_sync("Read pages 1 to 12, then tell me the vault code.",
                            limits=Limits(max_context_tokens=WINDOW))
    assert result.output == "The code is 4711."
    tool_chars = sum(len(r.content) for m in result.messages for r in m.results)
    assert tool_chars // 4 > 3 * WINDOW
    # the record is whole: every page and every call, valid as one history
    assert sum(1 for m in result.messages if m.role == "tool") == 12
    HistoryChecker("both").check(result.messages[:-1])
    for sent in archivist.sent:  # each request: the instructions and the task first, verbatim
        assert sent[0] == Message.system("Be exact.")
        assert sent[1].parts[0] == result.messages[1].parts[0]
        assert sent[1].role == "user"
    last = archivist.sent[-1]
    assert last[-2].tool_calls and last[-1].results  # the last turn whole: a call, its result
    assert last[-2].tool_calls[0].id == last[-1].results[0].call_id
    assert archivist.summaries >= 1
    compactions = result.trace.compactions
    assert compactions and all(c["tokens_saved"] > 0 and c["tokens_after"] < WINDOW
                               for c in compactions)
    assert result.trace.to_dict()["compactions"] == compactions
    assert result.trace.own_usage == result.usage  # the summaries are in the steps' usage
    assert result.usage.requests == len(archivist.sent) + archivist.summaries


def test_stubs_alone_when_they_are_enough() -> None:
    """Results cut to stubs bring the request under the target: no summary is written."""
    archivist = Archivist(pages=3)
    model = ScriptedModel(archivist)
    result = Agent(model, tools=[read_page]).run_sync(
        "Read pages 1 to 3.", limits=Limits(max_context_tokens=3000))
    assert archivist.summaries == 0
    assert [c["step"] for c in result.trace.compactions] == ["stubs"]
    stubbed = archivist.sent[-1][2:-2]  # the older turns, as the last request sent them
    assert any("[compacted:" in r.content for m in stubbed for r in m.results)
    assert all("[compacted:" not in r.content for m in result.messages for r in m.results)


def test_a_cheaper_model_writes_the_summary_and_a_failing_one_leaves_a_digest() -> None:
    writer = ScriptedModel(["Pages 1 and 2 read; the vault code is 4711."] * 20)
    archivist = Archivist(pages=8)
    agent = Agent(ScriptedModel(archivist, context_window=WINDOW), tools=[read_page],
                  compaction_model=writer, limits=Limits(max_context_tokens=WINDOW))
    assert agent.run_sync("Read pages 1 to 8, then the code?").output == "The code is 4711."
    assert archivist.summaries == 0 and writer.requests

    def broken(messages: Sequence[Message], settings: ModelSettings) -> str:
        raise RuntimeError("the summariser is down")

    archivist = Archivist(pages=8)
    agent = Agent(ScriptedModel(archivist, context_window=WINDOW), tools=[read_page],
                  compaction_model=ScriptedModel(broken),
                  limits=Limits(max_context_tokens=WINDOW))
    result = agent.run_sync("Read pages 1 to 8, then the code?")
    assert result.output == "The code is 4711."  # the digest keeps the first page's head
    assert all(c["step"] == "summary (0 request(s))" for c in result.trace.compactions
               if c["step"] != "stubs")


def test_a_conversation_s_next_run_starts_from_the_summary_its_last_run_wrote(
        tmp_path: Path) -> None:
    chat = Conversation(str(tmp_path / "chat.db"), "user-1")
    first = Archivist(pages=8)
    agent = Agent(ScriptedModel(first, context_window=WINDOW), tools=[read_page],
                  limits=Limits(max_context_tokens=WINDOW, max_iterations=20))
    agent.run_sync("Read pages 1 to 8.", conversation=chat)
    stored = chat.messages
    assert sum(1 for m in stored if m.role == "tool") == 8  # the store keeps every message
    second = Archivist(pages=0)
    agent = Agent(ScriptedModel(second, context_window=WINDOW), tools=[read_page],
                  limits=Limits(max_context_tokens=WINDOW))
    result = agent.run_sync("So what is the vault code?", conversation=chat)
    assert result.output == "The code is 4711."
    sent = second.sent[0]
    # the conversation's task, with the summary the first run wrote and the store kept
    # (tests/conversation/test_stored_summary.py): its old turns are not compacted again
    assert sent[0].parts[0] == Message.user("Read pages 1 to 8.").parts[0]
    assert "The vault code is 4711." in sent[0].text and second.summaries == 0
    assert sent[-1] == Message.user("So what is the vault code?")  # the prompt, whole
    assert result.trace.compactions[0]["step"] == "stored summary"
    assert len(chat.messages) == len(stored) + 2


@pytest.mark.parametrize("value", [0, -5, 1.5, True])
def test_a_bad_budget_is_a_configuration_error(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="max_context_tokens"):
        Limits(max_context_tokens=value)

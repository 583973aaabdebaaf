"""Context compaction over every wire: a run that reads three times the model's window of
tool results completes, each request fits (the server refuses a larger one, and any history
with a call split from its result, as the providers do), and the answer needs a fact from the
first result, which only the model-written summary still holds by the end."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.models.base import Model
from toolcycle.models.protocol import HistoryChecker

from .conftest import anthropic_model, gemini_model, openai_model, responses_model
from .script import Call, Reply
from .server import ProviderServer

ADAPTERS: dict[str, Callable[..., Model]] = {
    "openai": openai_model, "responses": responses_model, "anthropic": anthropic_model,
    "gemini": gemini_model,
}
WINDOW = 3000  # tokens, ≈ 12000 characters
PAGES = 15  # ≈ 600 tokens each: three times the window in all


def read_page(page: int) -> str:
    """Read one page of the archive."""
    head = "The vault code is 4711. " if page == 1 else f"Page {page} has no code. "
    return head + "lorem ipsum dolor " * 140


def archivist() -> Callable[[dict[str, Any]], Reply]:
    """The model: reads the pages one by one, then answers from what its request holds; asked
    for a summary, it keeps the code if the transcript it was given holds it."""
    pages = iter(range(1, PAGES + 1))

    def reply(body: dict[str, Any]) -> Reply:
        sent = json.dumps(body)
        if "You compact an agent" in sent:
            return Reply(text="Read pages so far. " + (
                "The vault code is 4711." if "4711" in sent else "No code seen."))
        page = next(pages, None)
        if page is not None:
            return Reply(calls=[Call("read_page", {"page": page})])
        return Reply(text="The vault code is 4711." if "4711" in sent else "I do not know.")

    return reply


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_a_run_three_windows_long_completes_and_keeps_the_early_fact(
        server: ProviderServer, provider: str) -> None:
    server.context_window = WINDOW
    respond = archivist()
    server.script([respond] * 60)
    model = ADAPTERS[provider](server)
    model.context_window = WINDOW
    agent = Agent(model, tools=[read_page], limits=Limits(max_iterations=PAGES + 2))
    result = await agent.run("Read pages 1 to 15 of the archive one by one, then tell me the "
                             "vault code.")
    assert result.output == "The vault code is 4711."
    read = sum(len(r.content) for m in result.messages if m.role == "tool" for r in m.results)
    assert read // 4 > 3 * WINDOW
    assert all(r.status == 200 for r in server.requests)  # none over the window
    HistoryChecker("both").check(result.messages[:-1])  # the record stays whole and valid
    compactions = result.trace.compactions
    assert compactions and all(c["tokens_saved"] > 0 for c in compactions)
    assert any(c["step"].startswith("summary") for c in compactions)
    assert result.usage.requests == len(server.requests)  # summaries are paid for too


async def test_without_compaction_the_server_refuses_the_oversized_request(
        server: ProviderServer) -> None:
    """The fake server's window is real: the same run with no budget known fails."""
    server.context_window = WINDOW
    server.script([archivist()] * 60)
    agent = Agent(openai_model(server), tools=[read_page],
                  limits=Limits(max_iterations=PAGES + 2))
    with pytest.raises(Exception, match="maximum context length"):
        await agent.run("Read pages 1 to 15, then tell me the vault code.")
    assert server.take_rejections()

"""The prompt-caching run shared by ``test_prompt_caching.py`` and ``bench/prompt_caching.py``:
an agent with a realistic system prompt and two tools, ten iterations through the official
``anthropic`` SDK against the test server, and the server's usage of every request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolcycle import Agent, tool
from toolcycle.result import RunResult

from .conftest import anthropic_model
from .script import Call, Reply
from .server import ProviderServer

#: About 1,500 tokens (as the server counts them): over Sonnet's 1,024-token minimum, so the
#: system prompt alone is cacheable from the first request.
INSTRUCTIONS = "You are a careful bookkeeper. " + " ".join(
    f"Rule {n}: check every figure twice and write down each intermediate sum." for n in range(80)
)
ITERATIONS = 10


@tool
def ledger(account: str, month: int) -> str:
    """Read one month of an account's ledger.

    Args:
        account: The account's name.
        month: The month, 1 to 12.
    """
    return f"{account} {month:02d}: " + ", ".join(f"entry {i} = {i * month}" for i in range(12))


@tool
def total(values: list[int]) -> int:
    """Sum a list of integers.

    Args:
        values: The numbers to add.
    """
    return sum(values)


@dataclass(frozen=True, slots=True)
class Row:
    """One request's input as the server accounted it."""

    iteration: int
    uncached: int  # usage.input_tokens: after the last breakpoint
    written: int  # usage.cache_creation_input_tokens
    read: int  # usage.cache_read_input_tokens

    @property
    def prompt(self) -> int:
        return self.uncached + self.written + self.read


def script(calls_per_iteration: int = 1) -> list[Reply]:
    """Nine iterations of ledger calls, then the answer."""
    replies = [
        Reply(
            calls=[
                Call("ledger", {"account": f"cash-{c}", "month": m})
                for c in range(calls_per_iteration)
            ]
        )
        for m in range(1, ITERATIONS)
    ]
    return [*replies, Reply(text="The year adds up.")]


async def run(
    server: ProviderServer,
    *,
    stream: bool = False,
    calls_per_iteration: int = 1,
    instructions: str = INSTRUCTIONS,
) -> tuple[RunResult[Any], list[Row]]:
    """Run the agent; return its result and the server's accounting of each request."""
    server.script(script(calls_per_iteration))
    agent = Agent(
        anthropic_model(server), instructions=instructions, tools=[ledger, total],
        parallel_tools=calls_per_iteration > 1,
    )
    if stream:
        events = agent.stream("Check the cash ledger month by month.")
        async for _ in events:
            pass
        assert events.result is not None
        result = events.result
    else:
        result = await agent.run("Check the cash ledger month by month.")
    rows = [
        Row(
            n,
            r.usage["input_tokens"],
            r.usage["cache_creation_input_tokens"],
            r.usage["cache_read_input_tokens"],
        )
        for n, r in enumerate(server.requests, start=1)
    ]
    return result, rows

"""Prompt caching over a 10-iteration Anthropic run: every request carries the breakpoints
(tools, system prompt, last message), and usage separates cache writes, cache reads and
uncached input. The server's cache accounting is deterministic (see ``anthropic_wire``), so the
figures printed here are reproducible:

    .venv/bin/pytest tests/providers/test_prompt_caching.py -s -q
"""

from __future__ import annotations

import itertools
from typing import Any

from toolcycle import Agent, tool
from toolcycle.messages import Usage

from .conftest import anthropic_model
from .script import Call, Reply
from .server import ProviderServer

INSTRUCTIONS = "You are a careful bookkeeper. " + " ".join(
    f"Rule {n}: check every figure twice and write down each intermediate sum." for n in range(40)
)
EPHEMERAL = {"type": "ephemeral"}


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


def _breakpoints(body: dict[str, Any]) -> list[str]:
    where = [f"tools[{i}]" for i, t in enumerate(body["tools"]) if "cache_control" in t]
    where += [f"system[{i}]" for i, b in enumerate(body["system"]) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        where += [
            f"messages[{i}][{j}]" for j, b in enumerate(message["content"]) if "cache_control" in b
        ]
    return where


async def test_ten_iterations_read_the_cached_prefix(server: ProviderServer) -> None:
    server.script(
        [Reply(calls=[Call("ledger", {"account": "cash", "month": m})]) for m in range(1, 10)]
        + [Reply(text="The year adds up.")]
    )
    agent = Agent(anthropic_model(server), instructions=INSTRUCTIONS, tools=[ledger, total])
    result = await agent.run("Check the cash ledger month by month.")
    assert result.iterations == 10 and result.output == "The year adds up."

    rows = []
    for n, request in enumerate(server.requests, start=1):
        body = request.body
        last = len(body["messages"]) - 1
        last_block = len(body["messages"][last]["content"]) - 1
        assert body["tools"][-1]["cache_control"] == EPHEMERAL
        assert body["system"][-1]["cache_control"] == EPHEMERAL
        assert _breakpoints(body) == ["tools[1]", "system[0]", f"messages[{last}][{last_block}]"]
        raw = request.usage
        rows.append(
            (
                n,
                raw["input_tokens"],
                raw["cache_creation_input_tokens"],
                raw["cache_read_input_tokens"],
            )
        )

    # Request 1 writes the whole prompt; each later one reads everything the one before wrote
    # and writes only the new turn (the previous call and its result).
    assert rows[0][3] == 0 and rows[0][2] > 0
    for (_, _, written_before, read_before), (_, _, written, read) in itertools.pairwise(rows):
        assert read == read_before + written_before
        assert 0 < written < read
    # The loop's usage keeps the three apart and adds them up.
    usage: Usage = result.usage
    assert usage.cache_read_tokens == sum(r[3] for r in rows)
    assert usage.cache_write_tokens == sum(r[2] for r in rows)
    assert usage.input_tokens == sum(r[1] + r[2] + r[3] for r in rows)
    steps = [s.usage for s in result.trace.steps]
    assert [(s.cache_write_tokens, s.cache_read_tokens) for s in steps] == [
        (r[2], r[3]) for r in rows
    ]

    uncached = sum(r[1] for r in rows)
    written, read = usage.cache_write_tokens, usage.cache_read_tokens
    # Relative prices of Anthropic's prompt caching: writes 1.25x, reads 0.1x of base input.
    with_cache = uncached + 1.25 * written + 0.1 * read
    print("\nrequest  uncached  cache_write  cache_read")
    for n, plain, w, r in rows:
        print(f"{n:7d}  {plain:8d}  {w:11d}  {r:10d}")
    print(
        f"total input {usage.input_tokens}: uncached {uncached}, written {written}, "
        f"read {read}; cost in base-input-token units {with_cache:.0f} with caching vs "
        f"{usage.input_tokens} without ({with_cache / usage.input_tokens:.0%})"
    )
    assert with_cache < 0.5 * usage.input_tokens

"""Prompt caching over a 10-iteration Anthropic run: every request carries the breakpoints
(tools, system prompt, the last message, and the message the previous request ended with), and
usage separates cache writes, cache reads and uncached input. The server's cache accounting
follows Anthropic's rules (prefix up to a breakpoint, 20-block lookback, 1,024-token minimum;
see ``anthropic_wire``) and is deterministic. The figures of the run:

    .venv/bin/python bench/prompt_caching.py
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from toolcycle.messages import Usage

from . import caching_run
from .caching_run import Row
from .server import ProviderServer

EPHEMERAL = {"type": "ephemeral"}


def _breakpoints(body: dict[str, Any]) -> list[str]:
    where = [f"tools[{i}]" for i, t in enumerate(body["tools"]) if "cache_control" in t]
    where += [f"system[{i}]" for i, b in enumerate(body["system"]) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        where += [
            f"messages[{i}][{j}]" for j, b in enumerate(message["content"]) if "cache_control" in b
        ]
    return where


def _expected_breakpoints(body: dict[str, Any]) -> list[str]:
    messages = body["messages"]
    last = len(messages) - 1
    where = ["tools[1]", "system[0]"]
    if last >= 2:  # the previous request ended with the user message before the last reply
        where.append(f"messages[{last - 2}][{len(messages[last - 2]['content']) - 1}]")
    return [*where, f"messages[{last}][{len(messages[last]['content']) - 1}]"]


def _check_reads_previous_prompt(rows: list[Row]) -> None:
    """Request 1 writes its whole prompt; each later one reads all of the previous prompt and
    writes only the new turn (the previous call and its result); nothing is left uncached."""
    assert rows[0].read == 0 and rows[0].written == rows[0].prompt
    for before, row in itertools.pairwise(rows):
        assert row.read == before.prompt, (before, row)
        assert 0 < row.written < row.read
    assert all(row.uncached == 0 for row in rows)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_ten_iterations_read_the_cached_prefix(server: ProviderServer, stream: bool) -> None:
    result, rows = await caching_run.run(server, stream=stream)
    assert result.iterations == 10 and result.output == "The year adds up."
    assert len(rows) == 10

    for request in server.requests:
        body = request.body
        assert body["tools"][-1]["cache_control"] == EPHEMERAL
        assert body["system"][-1]["cache_control"] == EPHEMERAL
        assert _breakpoints(body) == _expected_breakpoints(body)
    _check_reads_previous_prompt(rows)

    # The loop's usage keeps the three apart and adds them up, per step and per run.
    usage: Usage = result.usage
    assert usage.cache_read_tokens == sum(r.read for r in rows)
    assert usage.cache_write_tokens == sum(r.written for r in rows)
    assert usage.input_tokens == sum(r.prompt for r in rows)
    steps = [s.usage for s in result.trace.steps]
    assert [(s.input_tokens, s.cache_write_tokens, s.cache_read_tokens) for s in steps] == [
        (r.prompt, r.written, r.read) for r in rows
    ]
    # Relative prices of Anthropic's prompt caching: writes 1.25x, reads 0.1x of base input.
    uncached = sum(r.uncached for r in rows)
    with_cache = uncached + 1.25 * usage.cache_write_tokens + 0.1 * usage.cache_read_tokens
    assert with_cache < 0.3 * usage.input_tokens


async def test_a_turn_longer_than_the_lookback_still_reads_the_previous_prompt(
    server: ProviderServer,
) -> None:
    """12 parallel calls add 24 blocks per iteration, more than the service's 20-block
    lookback from the last breakpoint: the breakpoint on the previous request's last message
    is what finds the entry (with only the last-message breakpoint, every iteration re-read
    just tools and system and wrote the whole conversation again)."""
    result, rows = await caching_run.run(server, calls_per_iteration=12)
    assert result.iterations == 10 and len(result.tool_calls) == 9 * 12
    assert all(len(_breakpoints(r.body)) <= 4 for r in server.requests)
    _check_reads_previous_prompt(rows)


async def test_a_prompt_below_the_minimum_is_cached_once_the_conversation_is_long_enough(
    server: ProviderServer,
) -> None:
    result, rows = await caching_run.run(
        server, instructions="You are a careful bookkeeper.", calls_per_iteration=3
    )
    assert result.iterations == 10
    cold = [r for r in rows if r.written == 0 and r.read == 0]
    assert cold and all(r.prompt < 1024 for r in cold)  # below the minimum: plain input
    assert rows[: len(cold)] == cold  # then caching starts and stays on
    warm = rows[len(cold) :]
    assert warm and warm[0].written == warm[0].prompt >= 1024
    _check_reads_previous_prompt(warm)

"""Prompt-caching figures of a 10-iteration agent run on Anthropic's wire.

The agent (a ~1,500-token system prompt, two tools, one tool call per iteration) runs through
the official ``anthropic`` SDK against the repository's protocol-checking test server
(``tests/providers/server.py``), whose cache accounting follows Anthropic's documented rules:
a cache entry is the prefix up to a ``cache_control`` breakpoint, read back when a later
request finds it at a breakpoint or up to 20 blocks before one, and only prefixes of 1,024
tokens or more are cached. Tokens are counted as four characters of canonical JSON, so the
figures are deterministic and show the shape of the accounting, not a real tokenizer's
counts. Per iteration: the input tokens of the request and how the server split them into
uncached input (``input_tokens``), cache writes (``cache_creation_input_tokens``) and cache
reads (``cache_read_input_tokens``); then the totals and the relative cost at Anthropic's
multipliers (writes 1.25x, reads 0.1x the base input price).

    .venv/bin/python bench/prompt_caching.py [--stream] [--calls N] [--short-prompt]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.providers import caching_run
from tests.providers.caching_run import Row
from tests.providers.server import ProviderServer

WRITE_PRICE, READ_PRICE = 1.25, 0.1


def table(rows: list[Row]) -> str:
    lines = [
        "iteration  input tokens  uncached (input_tokens)  cache_creation  cache_read",
    ]
    for r in rows:
        lines.append(
            f"{r.iteration:9d}  {r.prompt:12d}  {r.uncached:23d}  {r.written:14d}  {r.read:10d}"
        )
    prompt = sum(r.prompt for r in rows)
    uncached = sum(r.uncached for r in rows)
    written = sum(r.written for r in rows)
    read = sum(r.read for r in rows)
    lines.append(f"{'total':>9}  {prompt:12d}  {uncached:23d}  {written:14d}  {read:10d}")
    cost = uncached + WRITE_PRICE * written + READ_PRICE * read
    lines.append(
        f"cost in base input tokens: {cost:.0f} with caching vs {prompt} without "
        f"({cost / prompt:.0%}); {read / prompt:.0%} of all input tokens read from the cache"
    )
    return "\n".join(lines)


async def main(stream: bool, calls: int, short: bool) -> None:
    server = ProviderServer()
    server.start()
    try:
        instructions = "You are a careful bookkeeper." if short else caching_run.INSTRUCTIONS
        result, rows = await caching_run.run(
            server, stream=stream, calls_per_iteration=calls, instructions=instructions
        )
        rejected = server.take_rejections()
        if rejected:
            raise SystemExit(f"the server rejected requests: {rejected}")
    finally:
        server.stop()
    usage = result.usage
    mode = "streaming" if stream else "non-streaming"
    print(
        f"{result.iterations} iterations, {calls} call(s) per iteration, {mode}, "
        f"system prompt {'short' if short else '~1,500 tokens'}"
    )
    print(table(rows))
    print(
        f"toolcycle's Usage for the run: input_tokens {usage.input_tokens} "
        f"(uncached + written + read), cache_write_tokens {usage.cache_write_tokens}, "
        f"cache_read_tokens {usage.cache_read_tokens}, output_tokens {usage.output_tokens}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", action="store_true", help="stream the responses (SSE)")
    parser.add_argument("--calls", type=int, default=1, help="tool calls per iteration")
    parser.add_argument(
        "--short-prompt", action="store_true", help="a system prompt below the 1,024 minimum"
    )
    args = parser.parse_args()
    asyncio.run(main(args.stream, args.calls, args.short_prompt))

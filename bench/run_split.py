"""The loop's cost split into a per-run and a per-iteration part, for comparing two trees.

Times runs of 1, 21 and 101 iterations (``LastResultModel``, an async ``add`` tool, the
listener of ``bench/overhead.py`` on every hook; agents built before the clock starts), CPU
time, best of seven rounds. The per-run figure is the 1-iteration run; the per-iteration ones
are the slopes between the lengths. Run it from the root of each tree, interleaved, so both see
the same machine (the figures on a shared 2-core host move by 10 % from minute to minute):

    for i in 1 2 3; do (cd /tmp/before && python /path/to/bench/run_split.py); \
        .venv/bin/python bench/run_split.py; done

``--concurrent`` also times ``bench/overhead.py``'s S3 shape (200 runs of 6 iterations on one
event loop, 25 repeats): CPU per run, median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.getcwd())  # the tree being measured, not the installed one

from bench.overhead import LastResultModel, add_async, make_agent
from toolcycle import Agent, Tool

TOOL = Tool.from_function(add_async, name="add")


async def _best_per_run(iterations: int, runs: int, rounds: int = 7) -> float:
    best = float("inf")
    for _ in range(rounds):
        agents = [make_agent(LastResultModel(iterations - 1), TOOL) for _ in range(runs)]
        start = time.process_time()
        for agent in agents:
            await agent.run("go")
        best = min(best, (time.process_time() - start) / runs * 1e6)
    return best


def _concurrent() -> float:
    cpu = []
    for _ in range(25):
        agents = [make_agent(LastResultModel(5), TOOL) for _ in range(200)]

        async def many(agents: list[Agent[Any, str]] = agents) -> None:
            await asyncio.gather(*(a.run("count") for a in agents))

        start = time.process_time()
        asyncio.run(many())
        cpu.append((time.process_time() - start) / 200 * 1e6)
    return statistics.median(cpu)


async def _split(runs: int) -> str:
    await _best_per_run(21, 200, rounds=1)  # warm up
    one = await _best_per_run(1, runs)
    short = await _best_per_run(21, runs // 4)
    long = await _best_per_run(101, runs // 20)
    return (f"per run {one:.1f} us; per iteration 1-21 {(short - one) / 20:.2f} us, "
            f"21-101 {(long - short) / 80:.2f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--concurrent", action="store_true")
    args = parser.parse_args()
    line = asyncio.run(_split(args.runs))
    if args.concurrent:
        line += f"; 200 concurrent x 6: {_concurrent():.0f} us CPU per run"
    print(f"{os.getcwd()}: {line}", flush=True)


if __name__ == "__main__":
    main()

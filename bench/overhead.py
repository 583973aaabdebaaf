"""Framework overhead of the loop, measured with a scripted model (no LLM, no network).

Prints one line per figure. Run: `.venv/bin/python bench/overhead.py [--quick] [--json]`.

Figures (targets from the loop-core issue in brackets):
- S1: CPU µs per iteration, N = 10, 50, 100 turns of one `add(a, b)` call, with argument
  validation, events (a callback listening to every hook) and the trace on  [<= 50 µs]
- S1 growth: late/early = mean interval between model requests in turns 91-100 over 1-10  [<= 1.15]
- S2: one turn of 8 concurrent 100 ms tool calls, async and sync tools  [<= 103 / 110 ms]
- S3: 200 concurrent runs x 6 turns (5 tool turns + final): runs/s  [>= 2,000]
- S4: building an agent with 50 tools (3 typed parameters each)  [<= 5 ms]
- import time and memory (fresh child processes).

Two models are measured: `ScriptedModel` (the public test model, which also checks the
protocol of every request) and `LastResultModel`, a minimal O(1) model like the peers'
harness uses, so the loop's own cost can be separated from the test model's checks.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from toolcycle import Agent, Limits, Message, Tool, tool
from toolcycle.messages import ToolCall, Usage
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.scripted import ScriptedModel

FIGURES: list[dict[str, Any]] = []


def report(name: str, value: float, unit: str, **params: Any) -> None:
    FIGURES.append({"figure": name, "value": round(value, 2), "unit": unit, **params})
    extra = " ".join(f"{k}={v}" for k, v in params.items())
    print(f"{name:<44} {value:>12.2f} {unit:<6} {extra}", flush=True)


class LastResultModel(Model):
    """O(1) model: reads only the last tool result and counts up to `n`."""

    name = "last-result"

    def __init__(self, n: int, stamps: list[tuple[float, float]] | None = None) -> None:
        self.n = n
        self.stamps = stamps
        self.ids = 0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        if self.stamps is not None:
            self.stamps.append((time.perf_counter(), time.process_time()))
        last = messages[-1]
        value = int(last.results[0].content) if last.role == "tool" else 0
        usage = Usage(input_tokens=10, output_tokens=5)
        if value >= self.n:
            return Message("assistant", Message.assistant(f"done {value}").parts, usage=usage)
        self.ids += 1
        call = ToolCall(f"c{self.ids}", "add", {"a": value, "b": 1}, "")
        return Message("assistant", [call], usage=usage)


def counting_script(n: int, stamps: list[tuple[float, float]] | None = None) -> Callable[..., Any]:
    """A ScriptedModel function script with the same behaviour (reads the last result only)."""

    def script(messages: Sequence[Message], _settings: ModelSettings) -> Any:
        if stamps is not None:
            stamps.append((time.perf_counter(), time.process_time()))
        last = messages[-1]
        value = int(last.results[0].content) if last.role == "tool" else 0
        if value >= n:
            return f"done {value}"
        return ToolCall.from_args("", "add", {"a": value, "b": 1})

    return script


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Listener:
    """Listens to every hook so that event delivery is part of the measured cost."""

    def __init__(self) -> None:
        self.count = 0

    def _seen(self, _event: Any) -> None:
        self.count += 1

    on_run_start = on_attempt_start = on_iteration_start = on_model_response = _seen
    on_tool_call = on_tool_result = on_attempt_end = on_success = _seen


def make_agent(model: Model, tool_obj: Tool[Any]) -> Agent[Any, str]:
    return Agent(model, "Add numbers.", [tool_obj], callbacks=Listener(),
                 limits=Limits(max_iterations=1000))


def model_for(kind: str, n: int, stamps: list[tuple[float, float]] | None = None) -> Model:
    if kind == "scripted":
        return ScriptedModel(counting_script(n, stamps))
    return LastResultModel(n, stamps)


def s1(quick: bool) -> None:
    tools = {
        "sync-thread": Tool.from_function(add, name="add"),
        "sync-inline": Tool.from_function(add, name="add", inline=True),
        "async": Tool.from_function(add_async, name="add"),
    }
    reps = 5 if quick else 15
    for kind in ("last-result", "scripted"):
        for variant, tool_obj in tools.items():
            for n in (10, 50, 100):
                cpu_per_turn, wall_per_turn = [], []
                for _ in range(reps):
                    agent = make_agent(model_for(kind, n), tool_obj)
                    w0, c0 = time.perf_counter(), time.process_time()
                    result = asyncio.run(agent.run("count"))
                    w1, c1 = time.perf_counter(), time.process_time()
                    assert result.output == f"done {n}", result.output
                    cpu_per_turn.append((c1 - c0) / (n + 1) * 1e6)
                    wall_per_turn.append((w1 - w0) / (n + 1) * 1e6)
                report("S1 CPU us/iteration (median)", statistics.median(cpu_per_turn), "us",
                       model=kind, tool=variant, N=n)
                if n == 50:
                    report("S1 CPU us/iteration (best)", min(cpu_per_turn), "us",
                           model=kind, tool=variant, N=n)
                    report("S1 wall us/iteration (median)", statistics.median(wall_per_turn),
                           "us", model=kind, tool=variant, N=n)
            # growth: intervals between model requests early vs late in one N=100 run
            ratios = []
            for _ in range(reps):
                stamps: list[tuple[float, float]] = []
                asyncio.run(make_agent(model_for(kind, 100, stamps), tool_obj).run("count"))
                wall = [b[0] - a[0] for a, b in itertools.pairwise(stamps)]
                ratios.append(statistics.mean(wall[90:100]) / statistics.mean(wall[0:10]))
            report("S1 late/early (turns 91-100 / 1-10)", statistics.median(ratios), "x",
                   model=kind, tool=variant)


def s2(quick: bool) -> None:
    @tool(concurrent=True)
    async def slow_async(i: int) -> int:
        await asyncio.sleep(0.1)
        return i

    @tool(concurrent=True)
    def slow_sync(i: int) -> int:
        time.sleep(0.1)
        return i

    for name, tool_obj in (("async", slow_async), ("sync", slow_sync)):
        walls = []
        for _ in range(3 if quick else 7):
            stamps: list[float] = []

            def script(messages: Sequence[Message], _s: ModelSettings, *, t: str = tool_obj.name,
                       stamps: list[float] = stamps) -> Any:
                stamps.append(time.perf_counter())
                if messages[-1].role == "tool":
                    return "done"
                return [ToolCall.from_args("", t, {"i": i}) for i in range(8)]

            result = asyncio.run(Agent(ScriptedModel(script), tools=[tool_obj]).run("go"))
            assert len(result.tool_calls) == 8
            walls.append((stamps[1] - stamps[0]) * 1000)
        report("S2 turn with 8 x 100 ms calls", statistics.median(walls), "ms", tool=name)


def s3(quick: bool) -> None:
    tool_obj = Tool.from_function(add_async, name="add")
    for kind in ("last-result", "scripted"):
        rates = []
        for _ in range(3 if quick else 5):
            agents = [make_agent(model_for(kind, 5), tool_obj) for _ in range(200)]

            async def many(agents: list[Agent[Any, str]] = agents) -> None:
                results = await asyncio.gather(*(a.run("count") for a in agents))
                assert all(r.output == "done 5" for r in results)

            w0 = time.perf_counter()
            asyncio.run(many())
            rates.append(200 / (time.perf_counter() - w0))
        report("S3 200 concurrent runs x 6 turns", statistics.median(rates), "runs/s",
               model=kind, tool="async")


def s4(quick: bool) -> None:
    def make(i: int) -> Callable[..., str]:
        def fn(a: int, b: str, c: float = 1.5) -> str:
            return f"{a}{b}{c}"

        fn.__name__ = f"tool_{i}"
        fn.__doc__ = f"Tool number {i}.\n\nArgs:\n    a: a number\n    b: a word\n    c: a ratio"
        return fn

    times = []
    for _ in range(5 if quick else 15):
        functions = [make(i) for i in range(50)]
        t0 = time.perf_counter()
        Agent(LastResultModel(1), "x", functions)
        times.append((time.perf_counter() - t0) * 1000)
    report("S4 build agent with 50 tools", statistics.median(times), "ms")


def import_and_memory() -> None:
    code = "import time; t=time.perf_counter(); import toolcycle; print(time.perf_counter()-t)"
    samples = [float(subprocess.check_output([sys.executable, "-c", code])) for _ in range(7)]
    report("import toolcycle", statistics.median(samples) * 1000, "ms")
    rss_code = (
        "import toolcycle\n"
        "for line in open('/proc/self/status'):\n"
        "    line.startswith('VmRSS') and print(line.split()[1])\n"
    )
    report("RSS after import", float(subprocess.check_output([sys.executable, "-c", rss_code]))
           / 1024, "MB")
    tool_obj = Tool.from_function(add, name="add", inline=True)
    for n in (50, 100):
        agent = make_agent(LastResultModel(n), tool_obj)
        tracemalloc.start()
        asyncio.run(agent.run("count"))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        report("python heap peak during run", peak / 1024, "kB", N=n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--only", default="S1,S2,S3,S4,MEM")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    chosen = args.only.split(",")
    for name, fn in (("S1", s1), ("S2", s2), ("S3", s3), ("S4", s4)):
        if name in chosen:
            fn(args.quick)
    if "MEM" in chosen:
        import_and_memory()
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(FIGURES, handle, indent=1)


if __name__ == "__main__":
    main()

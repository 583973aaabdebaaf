"""What recording a run into the SQLite trace store costs per iteration.

Prints one line per figure. Run: `.venv/bin/python bench/trace_store.py [--repeats 7]`.

- record_step: CPU µs per call on a 20-iteration run, redaction on and off (the store is
  written after every iteration, so this is the per-iteration price of `trace_store=`);
- run: CPU µs per iteration of a real `Agent.run` (ScriptedModel, one `add` call a turn) with no
  store, with a store, and with the callbacks recorder;
- get / list: reading a run back and listing 500 runs.

CPU time (``time.process_time``) rather than wall time, because the host is shared; each figure
is the median over the repeats with the min-max spread.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolcycle import Agent, tool
from toolcycle.messages import Usage
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

TURNS = 20


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def report(name: str, samples: list[float], unit: str) -> None:
    median = statistics.median(samples)
    print(f"{name:<48} {median:>10.1f} {unit}  (min {min(samples):.1f}, max {max(samples):.1f},"
          f" n={len(samples)})", flush=True)


def synthetic_trace(run_id: str) -> Trace:
    trace = Trace(run_id, agent_name="bench", model_name="scripted", started_at=time.time(),
                  user_prompt="add the numbers; my key is sk-proj-abcdefghijklmnopqrstu")
    for i in range(1, TURNS + 1):
        trace.steps.append(Step(
            i, 1, thought=f"step {i}: adding", usage=Usage(200 + 40 * i, 30, requests=1),
            tool_calls=[ToolCallRecord(f"call_{i}", "add", {"a": i, "b": i}, i, result=str(2 * i),
                                       duration_ms=0.1)],
            model_ms=300.0, tools_ms=0.1,
        ))
    return trace


def record_step_cost(directory: Path, redact: bool, repeats: int) -> list[float]:
    samples = []
    for r in range(repeats):
        store = TraceStore(directory / f"steps-{redact}-{r}.db", redact=redact)
        full = synthetic_trace(f"run-{r}")
        trace = Trace(full.run_id, agent_name="bench", started_at=full.started_at,
                      user_prompt=full.user_prompt)
        store.start(trace)
        cpu = 0.0
        for step in full.steps:
            trace.steps.append(step)
            start = time.process_time()
            store.record_step(trace)
            cpu += time.process_time() - start
        samples.append(cpu / len(full.steps) * 1e6)
        store.close()
    return samples


def run_cost(make_agent: Callable[[ScriptedModel], Agent[None, str]], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        script = [call("add", {"a": i, "b": i}) for i in range(TURNS - 1)] + ["done"]
        agent = make_agent(ScriptedModel(script))
        start = time.process_time()
        asyncio.run(agent.run("add"))
        samples.append((time.process_time() - start) / TURNS * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        report("record_step, redaction on (µs/iteration)",
               record_step_cost(directory, True, args.repeats), "µs")
        report("record_step, redaction off (µs/iteration)",
               record_step_cost(directory, False, args.repeats), "µs")

        store = TraceStore(directory / "runs.db")
        report("Agent.run without a store (CPU µs/iteration)",
               run_cost(lambda m: Agent(m, tools=[add]), args.repeats), "µs")
        report("Agent.run with trace_store= (CPU µs/iteration)",
               run_cost(lambda m: Agent(m, tools=[add], trace_store=store), args.repeats), "µs")
        report("Agent.run with store.recorder() (CPU µs/iteration)",
               run_cost(lambda m: Agent(m, tools=[add], callbacks=store.recorder()),
                        args.repeats), "µs")

        for i in range(500):
            store.save(synthetic_trace(f"listed-{i:03d}"))
        gets, lists = [], []
        for _ in range(args.repeats):
            start = time.process_time()
            store.get("listed-250")
            gets.append((time.process_time() - start) * 1e6)
            start = time.process_time()
            store.list(limit=None)
            lists.append((time.process_time() - start) * 1e3)
        report(f"get one {TURNS}-iteration run (µs)", gets, "µs")
        report("list 500+ runs (ms)", lists, "ms")


if __name__ == "__main__":
    main()

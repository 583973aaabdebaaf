"""Where the time of an agent iteration goes with a real local model.

Runs the demo agents on an in-process llama.cpp model and splits each run's wall time into

- **model time**: inside llama.cpp's chat completion (measured around the in-process call),
- **tool time**: inside the tool functions (from the trace),
- **framework time**: everything else: the loop, the text protocol (rendering the history,
  parsing the reply), validation, events, the trace, the hop to the worker thread.

It also reports llama.cpp's own counters (prompt and generation tokens per second) and the
time to load the weights. Usage::

    .venv/bin/python bench/local_model.py                      # qwen2.5-coder-0.5b, 3 runs
    .venv/bin/python bench/local_model.py --model smollm2-135m --runs 5 --append docs/benchmarks.md

Timings on shared machines vary with the load; the framework share is the stable figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolcycle.cli.demo import DEMO_RUNS
from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.local.llama import LlamaChatModel, load_llama, resolve_weights
from toolcycle.models.local.packs import PACKS
from toolcycle.models.text.protocol import JsonToolsModel


class TimedModel(Model):
    """Times the inner text model: this is the model's share of an iteration."""

    def __init__(self, inner: LlamaChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.system = inner.system
        self.seconds = 0.0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        started = time.perf_counter()
        try:
            return await self.inner.request(messages, settings)
        finally:
            self.seconds += time.perf_counter() - started


@dataclass
class Sample:
    wall: float
    model: float
    tools: float
    iterations: int
    prompt_tokens: int
    prompt_ms: float
    gen_tokens: int
    gen_ms: float
    answers: list[str] = field(default_factory=list)

    @property
    def framework(self) -> float:
        return self.wall - self.model - self.tools


def _perf(llama: object) -> tuple[int, float, int, float]:
    import llama_cpp

    data = llama_cpp.llama_perf_context(llama.ctx)  # type: ignore[attr-defined]
    return data.n_p_eval, data.t_p_eval_ms, data.n_eval, data.t_eval_ms


async def measure(
    model_name: str, runs: int, constrained: bool | None
) -> tuple[float, list[Sample]]:
    import llama_cpp

    path, name = resolve_weights(model_name)
    started = time.perf_counter()
    llama = load_llama(path)
    load_seconds = time.perf_counter() - started
    chat = LlamaChatModel(path, name=name)
    if constrained is None:
        pack = PACKS.get(model_name)
        constrained = bool(pack and pack.constrained_by_default)
    samples: list[Sample] = []
    for _ in range(runs):
        timed = TimedModel(chat)
        model = JsonToolsModel(timed, constrained=constrained)
        llama_cpp.llama_perf_context_reset(llama.ctx)
        wall = model_s = tools_s = 0.0
        iterations = 0
        answers = []
        for _title, build, prompt in DEMO_RUNS:
            agent = build(model)
            before = timed.seconds
            t0 = time.perf_counter()
            result = await agent.run(prompt)
            wall += time.perf_counter() - t0
            model_s += timed.seconds - before
            tools_s += sum(step.tools_ms for step in result.trace.steps) / 1000
            iterations += result.trace.iterations
            answers.append(str(result.output))
        n_p, t_p, n_g, t_g = _perf(llama)
        samples.append(Sample(wall, model_s, tools_s, iterations, n_p, t_p, n_g, t_g, answers))
    return load_seconds, samples


def report(model_name: str, load_seconds: float, samples: list[Sample]) -> str:
    wall = statistics.median(s.wall for s in samples)
    per_iteration = statistics.median(s.wall / s.iterations for s in samples)
    model = statistics.median(s.model / s.iterations for s in samples)
    framework = statistics.median(s.framework / s.iterations for s in samples)
    tools = statistics.median(s.tools / s.iterations for s in samples)
    share = statistics.median(s.framework / s.wall for s in samples)
    prompt_tps = statistics.median(s.prompt_tokens / (s.prompt_ms / 1000) for s in samples)
    gen_tps = statistics.median(s.gen_tokens / (s.gen_ms / 1000) for s in samples)
    lines = [
        f"### {model_name} · {len(samples)} runs of the two demo agents · "
        f"{os.cpu_count()} cores · {platform.machine()}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| load time (first load, warm page cache) | {load_seconds:.2f} s |",
        f"| wall time per run (both agents), median | {wall:.2f} s |",
        f"| iterations per run | {samples[0].iterations} |",
        f"| wall time per iteration, median | {per_iteration * 1000:.0f} ms |",
        f"| model time per iteration | {model * 1000:.0f} ms |",
        f"| tool time per iteration | {tools * 1000:.3f} ms |",
        f"| framework time per iteration | {framework * 1000:.3f} ms |",
        f"| framework share of wall time | {share * 100:.3f} % |",
        f"| prompt processing | {prompt_tps:.0f} tokens/s |",
        f"| generation | {gen_tps:.1f} tokens/s |",
        "",
        f"Answers of the last run: {samples[-1].answers}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--constrained", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--append", type=Path, help="append the figures to this markdown file")
    args = parser.parse_args()
    constrained = {"auto": None, "on": True, "off": False}[args.constrained]
    load_seconds, samples = asyncio.run(measure(args.model, args.runs, constrained))
    text = report(args.model, load_seconds, samples)
    print(text)
    if args.append:
        with args.append.open("a") as out:
            out.write(f"\n{text}\n\nCommand: `.venv/bin/python bench/local_model.py --model "
                      f"{args.model} --runs {args.runs}`\n")


if __name__ == "__main__":
    main()

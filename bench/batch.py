"""``toolcycle batch`` throughput: asyncio vs Ray with 1 and 2 workers, side by side.

Run: ``nice -n 10 .venv/bin/python bench/batch.py [--scripted 1000] [--local 100]
[--local-model local:smollm2-135m]`` (``--local 0`` skips the local model; it needs
``make local``).

Each configuration runs the same spec (one ``lookup`` tool call, then the answer;
tests/batch/batch_tools.py) over the same inputs into a fresh output file, with no trace store,
so the figures are the batch machinery's. ``bare`` is the same runs in a plain loop of
``await agent.run(...)`` in this process (no batch): overhead per run is a configuration's wall
time per run minus the bare time per run. Ray figures exclude starting Ray (printed apart) and
include starting each worker process and binding the spec there (and, for the local
model, loading it); the ``warm`` row runs the batch again on the same Ray, workers already
up (scripted only: the local model's runs are too slow to repeat). On a 2-core shared host,
2 workers cannot beat 1 by 2x; repeat runs for stable numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.batch.batch_tools import SPEC  # noqa: E402
from toolcycle.batch import BatchRecipe, run_batch  # noqa: E402
from toolcycle.batch.inputs import read_inputs  # noqa: E402
from toolcycle.batch.worker import agent_for  # noqa: E402
from toolcycle.limits import Limits  # noqa: E402

SCRIPTED = "python:tests.batch.batch_tools:model"
TOOLS = ["tests.batch.batch_tools"]


def bare(recipe: BatchRecipe, inputs: Path) -> float:
    """Seconds for the runs in a plain sequential loop, after binding."""
    agent, _ = agent_for(recipe)
    items = read_inputs(inputs)

    limits = Limits(max_iterations=recipe.max_iterations) if recipe.max_iterations else None

    async def loop() -> None:
        for item in items:
            await agent.run(item.value, limits=limits)

    start = time.perf_counter()
    asyncio.run(loop())
    return time.perf_counter() - start


def on_ray(recipe: BatchRecipe, inputs: Path, out: Path, workers: int, chunk: int,
           concurrency: int, warm: bool) -> tuple[float, float, float | None]:
    """(seconds to start Ray, seconds for the batch, seconds for it again on the warm workers)
    on a local Ray of ``workers`` CPUs."""
    import ray

    start = time.perf_counter()
    ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - start
    try:
        times: list[float | None] = []
        for target in (out, out.with_suffix(".warm")) if warm else (out,):
            start = time.perf_counter()
            run_batch(recipe, inputs, target, ray=True, chunk_size=chunk,
                      concurrency=concurrency, progress=False)
            times.append(time.perf_counter() - start)
        first = times[0]
        assert first is not None
        return started, first, times[1] if warm else None
    finally:
        ray.shutdown()


def measure(label: str, model: str, count: int, words: str, chunk: int,
            concurrency: int, warm: bool, max_iterations: int | None = None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        spec = work / "spec.json"
        spec.write_text(json.dumps(SPEC), encoding="utf-8")
        inputs = work / "in.jsonl"
        inputs.write_text("".join(json.dumps(words.format(n=n)) + "\n" for n in range(count)))
        recipe = BatchRecipe.from_files(str(spec), TOOLS, model=model, trace_store=False,
                                        max_iterations=max_iterations)
        base = bare(recipe, inputs)
        print(f"\n{label}: {count} runs, chunk {chunk}", flush=True)
        print(f"{'configuration':<28}{'seconds':>9}{'runs/s':>10}{'ms/run':>9}"
              f"{'overhead ms/run':>17}", flush=True)

        def row(name: str, seconds: float, note: str = "") -> None:
            per_run = seconds / count * 1000
            overhead = per_run - base / count * 1000
            print(f"{name:<28}{seconds:>9.2f}{count / seconds:>10.2f}{per_run:>9.1f}"
                  f"{overhead:>17.2f}  {note}", flush=True)

        row("bare loop (no batch)", base)
        start = time.perf_counter()
        run_batch(recipe, inputs, work / "asyncio.jsonl", concurrency=concurrency,
                  progress=False)
        row(f"asyncio, concurrency {concurrency}", time.perf_counter() - start)
        for workers in (1, 2):
            started, cold, again = on_ray(recipe, inputs, work / f"ray{workers}.jsonl", workers,
                                          chunk, concurrency, warm)
            name = f"Ray, {workers} worker{'s' * (workers > 1)}"
            row(name, cold, f"(+{started:.1f} s to start Ray)")
            if again is not None:
                row(f"{name}, warm", again, "(same Ray again: workers up, spec bound)")
        succeeded = [(work / f"{name}.jsonl").read_text().count('"success"')
                     for name in ("asyncio", "ray1", "ray2")]
        print(f"succeeded (asyncio, Ray 1, Ray 2): {succeeded} of {count}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripted", type=int, default=1000)
    parser.add_argument("--local", type=int, default=100)
    parser.add_argument("--local-model", default="local:smollm2-135m")
    parser.add_argument("--local-max-iterations", type=int, default=3,
                        help="bounds a local run that keeps calling tools (default 3)")
    args = parser.parse_args()
    if args.scripted:
        measure("scripted model", SCRIPTED, args.scripted, "word{n}", chunk=50,
                concurrency=8, warm=True)
    if args.local:
        measure(f"local model {args.local_model}", args.local_model, args.local,
                "Look up the word 'w{n}' with the lookup tool.", chunk=5, concurrency=1,
                warm=False, max_iterations=args.local_max_iterations)


if __name__ == "__main__":
    main()

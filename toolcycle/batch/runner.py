"""``run_batch``: every input line through the bound spec, here on asyncio or across Ray.

Why the driver alone writes the output file: workers return records, the driver appends them
in input order (:class:`~.records.OrderedWriter`) and ignores a second record for a key, so a
Ray task retried after its worker died cannot write an input twice, and a task that exhausted
its retries still gets a record per input (an error naming the lost worker): nothing is lost.
Traces and playbook lessons are written by the workers themselves, straight into the stores
the recipe names (a shared ``postgresql://`` database for a cluster).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .records import InputLine, OrderedWriter, error_record, read_done, read_inputs
from .worker import BatchRecipe, agent_for, check_tools, run_chunk, run_input

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What a batch did: inputs in the file, skipped as already done, records written.

    ``statuses``: the records written, counted by their ``status`` (docs/status.md: a run that
    returned is ``success`` only when it succeeded; ``forced``, ``partial`` and ``tool_error``
    records hold an output that is not an answer), ``error`` and ``malformed`` included."""

    inputs: int
    skipped: int
    written: int
    errors: int
    malformed: int
    seconds: float
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def succeeded(self) -> int:
        """The records written whose run succeeded."""
        return self.statuses.get("success", 0)


def run_batch(
    recipe: BatchRecipe,
    inputs: str | Path,
    out: str | Path,
    *,
    concurrency: int = 8,
    ray: str | bool | None = None,
    workers: int | None = None,
    chunk_size: int = 8,
    max_retries: int = 3,
    progress: bool | None = None,
) -> BatchReport:
    """Run ``recipe`` over every line of ``inputs``, appending one record per line to ``out``.

    ``ray``: ``None``/``False`` runs here on asyncio, ``concurrency`` inputs at a time;
    ``True`` starts a local Ray with ``workers`` CPUs (default: all), or joins the Ray this
    process already initialised; a string joins the cluster at that address. On Ray, inputs go
    out in chunks of ``chunk_size``, each task runs its chunk ``concurrency`` at a time, and a
    task whose worker dies is retried up to ``max_retries`` times elsewhere. ``progress``: a
    progress bar on stderr (default: when stderr is a terminal).
    """
    started = time.monotonic()
    items = read_inputs(inputs)
    done = read_done(out, items)
    todo = [item for item in items if item.key not in done]
    on_ray = not (ray is None or ray is False)
    if todo:  # binding problems raise here, before the output file is touched
        check_tools(recipe) if on_ray else agent_for(recipe)
    errors = malformed = 0
    statuses: Counter[str] = Counter()
    with open(out, "a", encoding="utf-8") as handle, _progress_bar(
            len(items), len(done), sys.stderr.isatty() if progress is None else progress
    ) as advance:
        writer = OrderedWriter(handle, [item.key for item in todo])

        def accept(record: dict[str, Any]) -> None:
            nonlocal errors, malformed
            before = writer.written
            if writer.add(record):
                errors += record["status"] == "error"
                malformed += record["status"] == "malformed"
                statuses[str(record["status"])] += 1
            advance(writer.written - before)

        if not todo:
            pass
        elif not on_ray:
            asyncio.run(_run_local(recipe, todo, concurrency, accept))
        else:
            _run_ray(recipe, todo, accept, address=ray if isinstance(ray, str) else None,
                     workers=workers, chunk_size=chunk_size, concurrency=concurrency,
                     max_retries=max_retries)
        _, playbook = agent_for(recipe) if recipe.playbook and todo else (None, None)
        if playbook is not None:
            playbook.flush()
        assert writer.complete, f"inputs without a record: {list(writer.missing())[:5]}"
    return BatchReport(len(items), len(done), writer.written, errors, malformed,
                       time.monotonic() - started, dict(statuses))


async def _run_local(recipe: BatchRecipe, todo: list[InputLine], concurrency: int,
                     accept: Callable[[dict[str, Any]], None]) -> None:
    """``concurrency`` runners taking the next input in order until none is left."""
    agent, _ = agent_for(recipe)
    queue = iter(todo)

    async def runner() -> None:
        for item in queue:
            accept(await run_input(agent, recipe, item))

    await asyncio.gather(*(runner() for _ in range(max(1, concurrency))))


def _run_ray(recipe: BatchRecipe, todo: list[InputLine], accept: Callable[[dict[str, Any]], None],
             *, address: str | None, workers: int | None, chunk_size: int, concurrency: int,
             max_retries: int) -> None:
    try:
        import ray
    except ImportError as exc:
        raise ConfigurationError(["--ray needs Ray: pip install 'toolcycle[ray]'"],
                                 subject="batch") from exc
    own = not ray.is_initialized()
    if own:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False)
    try:
        task = ray.remote(max_retries=max_retries)(run_chunk)
        size = max(1, chunk_size)
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        window = 2 * max(1, int(cpus))
        pending = iter(chunks)
        in_flight: dict[Any, list[InputLine]] = {}
        while True:
            while len(in_flight) < window:
                chunk = next(pending, None)
                if chunk is None:
                    break
                in_flight[task.remote(recipe, chunk, concurrency)] = chunk
            if not in_flight:
                break
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            chunk = in_flight.pop(ready[0])
            try:
                records: list[dict[str, Any]] = ray.get(ready[0])
            except ray.exceptions.RayError as exc:  # retries exhausted: record, do not lose
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                records = [error_record(item, f"Ray task failed after up to {max_retries} "
                                        f"retries: {type(exc).__name__}: {reason}")
                           for item in chunk]
            for record in records:
                accept(record)
    finally:
        if own:
            ray.shutdown()


@contextmanager
def _progress_bar(total: int, already: int, enabled: bool) -> Iterator[Progress]:
    """A rich progress bar on stderr; a no-op when not on a terminal."""
    if not enabled:
        yield lambda advance: None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True)) as bar:  # stdout stays the caller's
        task = bar.add_task("batch", total=total, completed=already)
        yield lambda advance: bar.advance(task, advance)

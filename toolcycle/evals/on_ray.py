"""An experiment's runs on Ray: chunks of (case, repeat) to workers, outcomes back as they come.

Workers bind the recipe with the batch machinery (:func:`toolcycle.batch.worker.agent_for`:
one agent per process, tool modules imported by name, the spec as text) and return outcomes;
the driver scores and logs them (:mod:`.runs` says why). A task whose worker dies is retried
by Ray; one that exhausts its retries gives each of its cases an error outcome naming the
failure, so no case is lost and the experiment still finishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..batch import BatchRecipe
from ..batch.ray_session import ray_session
from .dataset import Case
from .runs import Outcome, run_chunk


async def run_on_ray(recipe: BatchRecipe, todo: list[tuple[Case, int]],
                     accept: Callable[[Outcome], Awaitable[None]], *, address: str | bool | None,
                     workers: int | None, chunk_size: int, concurrency: int,
                     max_iterations: int | None, max_retries: int = 3) -> None:
    """Run ``todo`` on Ray (``address``: ``True`` starts a local Ray with ``workers`` CPUs or
    joins the one this process started; a string joins that cluster)."""
    with ray_session(address if isinstance(address, str) else None, workers,
                     option="ray=", subject="experiment") as ray:
        task = ray.remote(max_retries=max_retries)(run_chunk)
        chunks = [todo[i:i + chunk_size] for i in range(0, len(todo), chunk_size)]
        in_flight: dict[Any, list[tuple[Case, int]]] = {
            task.remote(recipe, chunk, concurrency, max_iterations): chunk for chunk in chunks}
        while in_flight:
            ready, _ = await asyncio.to_thread(ray.wait, list(in_flight), num_returns=1)
            chunk = in_flight.pop(ready[0])
            try:
                outcomes: list[Outcome] = await asyncio.to_thread(ray.get, ready[0])
            except ray.exceptions.RayError as exc:
                reason = (str(exc).strip().splitlines() or [""])[0]
                outcomes = [Outcome(case.name, repeat, None, "error", False,
                                    f"Ray task failed after up to {max_retries} retries: "
                                    f"{type(exc).__name__}: {reason}", None, 0.0, None)
                            for case, repeat in chunk]
            for outcome in outcomes:
                await accept(outcome)

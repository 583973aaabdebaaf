"""One run of one case, here or in a Ray worker: the agent's outcome, before any scoring.

Why outcomes travel and scores do not: evaluators may hold things that do not pickle or
that should not run on every worker (a lambda, an LLM judge with its own model), so workers
only run the agent and send back the outcome (output, status, trace); the driver scores it
and writes the log. A run that raises is an outcome too (its partial trace, its error), never
a lost case, and a crash of the agent's code in one case does not stop the others.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..errors import AgentError
from ..limits import Limits
from ..result import RunResult
from ..tracing.trace import Trace
from .dataset import Case
from .evaluators import Observed, plain


def succeeded(result: RunResult[Any]) -> bool:
    """A run's success, the one definition every eval figure uses: ``result.succeeded``
    (``status == "success"``: the model answered on its own and the answer passed; an answer
    forced at a limit, a partial one, a tool's error passed through, a paused, failed or
    cancelled run is not, docs/status.md)."""
    return result.succeeded


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one run of one case produced: output, status, trace, wall time."""

    case: str
    repeat: int
    output: Any
    status: str
    succeeded: bool
    error: str | None
    trace: Trace | None
    latency_s: float
    run_id: str | None

    def observed(self) -> Observed:
        calls = tuple(self.trace.tool_calls) if self.trace is not None else ()
        return Observed(self.output, calls, self.succeeded, self.error, self.trace)


async def run_case(agent: Any, case: Case, repeat: int, limits: Limits | None = None) -> Outcome:
    """Run ``agent`` once on ``case`` (a message, or a task input); never raises, except on
    cancellation."""
    started = time.perf_counter()
    try:
        if isinstance(case.inputs, str):
            result = await agent.run(case.inputs, limits=limits)
        else:
            result = await agent.run(input=dict(case.inputs), limits=limits)
    except AgentError as exc:
        partial = exc.result
        return Outcome(case.name, repeat, plain(partial.output) if partial else None,
                       partial.status if partial else "failure", False,
                       f"{type(exc).__name__}: {exc}", partial.trace if partial else None,
                       time.perf_counter() - started, partial.run_id if partial else None)
    except Exception as exc:  # a crash in this case must not take the experiment down
        return Outcome(case.name, repeat, None, "error", False, f"{type(exc).__name__}: {exc}",
                       None, time.perf_counter() - started, None)
    return Outcome(case.name, repeat, plain(result.output), result.status, succeeded(result),
                   None, result.trace, time.perf_counter() - started, result.run_id)


def run_chunk(recipe: Any, items: list[tuple[Case, int]], concurrency: int,
              max_iterations: int | None) -> list[Outcome]:
    """A Ray task's body: bind the recipe here (once per process) and run the chunk's cases
    ``concurrency`` at a time. A recipe that cannot be bound here gives each case an error
    outcome saying so."""
    from ..batch.worker import agent_for

    try:
        agent, playbook = agent_for(recipe)
    except Exception as exc:
        return [Outcome(case.name, repeat, None, "error", False,
                        f"cannot bind the agent here: {type(exc).__name__}: {exc}", None, 0.0,
                        None) for case, repeat in items]
    limits = Limits(max_iterations=max_iterations) if max_iterations else None

    async def run_all() -> list[Outcome]:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(case: Case, repeat: int) -> Outcome:
            async with gate:
                return await run_case(agent, case, repeat, limits)

        return list(await asyncio.gather(*(one(case, repeat) for case, repeat in items)))

    outcomes = asyncio.run(run_all())
    if playbook is not None:
        playbook.flush()
    return outcomes

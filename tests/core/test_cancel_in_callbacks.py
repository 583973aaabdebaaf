"""A cancel that lands while ``on_success`` is told (r2-16).

The caller then gets ``CancelledError`` and no result, so the stored trace, the termination and
the callbacks must say the run was cancelled, not that it succeeded: one story for everyone who
reads the run afterwards.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, Limits, tool
from toolcycle.errors import Cancelled
from toolcycle.events import RunFailure
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.store import TraceStore


async def test_a_cancel_during_async_on_success_ends_the_run_cancelled(tmp_path: Path) -> None:
    told = asyncio.Event()
    failures: list[RunFailure] = []

    async def on_success(event: Any) -> None:
        told.set()
        await asyncio.Event().wait()  # until cancelled

    with TraceStore(tmp_path / "traces.db") as store:
        agent = Agent(ScriptedModel(["done"]), "t", trace_store=store,
                      callbacks={"on_success": on_success, "on_failure": failures.append})
        task = asyncio.ensure_future(agent.run("go"))
        await told.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [stored] = store.list()
        trace = store.get(stored.run_id)
    assert stored.status == "cancelled"
    assert trace is not None and trace.status == "cancelled"
    assert trace.termination is not None and trace.termination["reason"] == "cancelled"
    [failure] = failures
    assert isinstance(failure.error, Cancelled)
    assert failure.result.termination.reason == "cancelled"


async def test_a_cancel_after_on_success_finished_changes_nothing(tmp_path: Path) -> None:
    """The run returned: its result stands and the trace says success."""
    with TraceStore(tmp_path / "traces.db") as store:
        result = await Agent(ScriptedModel(["done"]), "t", trace_store=store).run("go")
        [stored] = store.list()
    assert result.output == "done" and stored.status == "success"


async def test_a_cancel_during_async_on_failure_ends_the_run_cancelled(tmp_path: Path) -> None:
    """The run failed (no answer within its iterations), then a cancel landed in ``on_failure``:
    the caller gets CancelledError, not the error, so the trace says cancelled as well and
    keeps the failure as its error."""
    told = asyncio.Event()
    seen: list[Any] = []

    async def on_failure(event: RunFailure) -> None:
        seen.append(event)
        told.set()
        await asyncio.Event().wait()  # until cancelled

    model = ScriptedModel(lambda messages, settings: call("noop"))
    with TraceStore(tmp_path / "traces.db") as store:
        agent = Agent(model, "t", [noop], trace_store=store, callbacks={"on_failure": on_failure},
                      limits=Limits(max_iterations=2, on_limit="error"))
        task = asyncio.ensure_future(agent.run("go"))
        await told.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [stored] = store.list()
        trace = store.get(stored.run_id)
    assert stored.status == "cancelled"
    assert trace is not None and trace.termination is not None
    assert trace.termination["reason"] == "cancelled"
    assert trace.error is not None and trace.error["code"] == "MAX_ITERATIONS"
    assert len(seen) == 1  # on_failure told once


@tool
def noop() -> str:
    """Does nothing."""
    return "ok"

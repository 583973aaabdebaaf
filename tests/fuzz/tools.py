"""The tools the fuzzer's agents call, and the counters that show whether any still runs.

Every tool body runs inside :func:`_active`, which counts the sync and async bodies in
progress: after a run has ended, an async body still running is an orphaned task, and a sync
body may run on only as long as its own bounded blocking (sync tools cannot be killed; the
engine discards their late results). Sleeps are capped at 20 ms so thousands of runs fit in a
minute and no worker thread stays busy for long after a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from toolcycle import Cancelled, MaxIterationsExceeded, RunContext, Tool, tool
from toolcycle.media import MediaPart

MAX_SLEEP_S = 0.02

_lock = threading.Lock()
ACTIVE = {"sync": 0, "async": 0}
#: Tool bodies entered since the runner last cleared it, per tool: what a run's budgets
#: (``max_tool_calls``, a tool's ``max_calls``) bound, whoever made the call (the model, or a
#: playbook offer calling the agent's tools for it).
ENTERED: Counter[str] = Counter()
#: Set by the stopper tools: where the run's token was cancelled from ("loop" or "thread"),
#: and the token itself (the engine's own when the caller passed none).
STOPPED: dict[str, Any] = {"by": None, "token": None}


@contextlib.contextmanager
def _active(kind: str, name: str) -> Iterator[None]:
    with _lock:
        ACTIVE[kind] += 1
        ENTERED[name] += 1
    try:
        yield
    finally:
        with _lock:
            ACTIVE[kind] -= 1


def _seconds(ms: int) -> float:
    return max(0, min(ms, 20)) / 1000.0


class BadRepr:
    """A return value that is not JSON and whose ``repr`` raises."""

    def __repr__(self) -> str:
        raise RuntimeError("__repr__ exploded")


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


_PICTURE = MediaPart(b"\x89PNG\r\n\x1a\n fuzz", "image/png", "chart.png")


def _weird_value(kind: str) -> Any:
    values: dict[str, Any] = {
        "object": object(),
        "badrepr": BadRepr(),
        "bigint": 10**5000,
        "int400": 10**400,
        "deep": _nested(3000),
        "shallow": _nested(40),
        "set": {1, 2, 3},
        "bytes": b"\xff\x00",
        "nan": float("nan"),
        "none": None,
        "huge_text": "x" * 30_000,
        "dict_obj_keys": {(1, 2): "tuple key"},
        # what the model sees of an image (docs/media.md): sent, and named in the text
        "media": _PICTURE,
        "media_list": ["a chart:", _PICTURE, {"rows": 2}, _PICTURE],
        "nested_media": {"chart": _PICTURE},
    }
    return values.get(kind, kind)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    with _active("sync", "add"):
        return a + b


@tool(name="add")
def add_measures(a: float, b: float) -> float:
    """Add two measures: ``add`` typed ``number``, for the runs with grounding, whose calls
    over figures from no source are refused once (toolcycle/run/unsourced_call.py)."""
    with _active("sync", "add"):
        return a + b


@tool(inline=True)
def inline_add(a: int, b: int) -> int:
    """Add two integers on the event loop."""
    with _active("sync", "inline_add"):
        return a + b


@tool(concurrent=True)
async def echo(text: str) -> str:
    """Echo the text back (concurrency-safe)."""
    with _active("async", "echo"):
        await asyncio.sleep(0)
        return text


@tool
async def nap(ms: int) -> str:
    """Sleep a few milliseconds asynchronously."""
    with _active("async", "nap"):
        await asyncio.sleep(_seconds(ms))
        return f"napped {ms} ms"


@tool
def snooze(ms: int) -> str:
    """Sleep a few milliseconds on a worker thread."""
    with _active("sync", "snooze"):
        time.sleep(_seconds(ms))
        return f"snoozed {ms} ms"


@tool(concurrent=True)
async def cnap(ms: int) -> str:
    """Sleep asynchronously (concurrency-safe)."""
    with _active("async", "cnap"):
        await asyncio.sleep(_seconds(ms))
        return f"cnapped {ms} ms"


@tool(concurrent=True)
def csnooze(ms: int) -> str:
    """Sleep on a worker thread (concurrency-safe)."""
    with _active("sync", "csnooze"):
        time.sleep(_seconds(ms))
        return f"csnoozed {ms} ms"


@tool(timeout=0.004)
async def slow(ms: int) -> str:
    """Async; its 4 ms timeout fires when it sleeps longer."""
    with _active("async", "slow"):
        await asyncio.sleep(_seconds(ms))
        return "slow done"


@tool(timeout=0.004)
def slow_sync(ms: int) -> str:
    """Sync; its 4 ms timeout fires when it sleeps longer (the thread sleeps on)."""
    with _active("sync", "slow_sync"):
        time.sleep(_seconds(ms))
        return "slow_sync done"


@tool
def weird(kind: str) -> Any:
    """Return an awkward value (unserializable, huge, deep, a raising __repr__...)."""
    with _active("sync", "weird"):
        return _weird_value(kind)


@tool
async def aweird(kind: str) -> Any:
    """Async variant of weird."""
    with _active("async", "aweird"):
        return _weird_value(kind)


def _raise(kind: str) -> None:
    if kind == "value":
        raise ValueError("bad value")
    if kind == "key":
        raise KeyError("missing")
    if kind == "stop":
        raise StopIteration("stop")
    if kind == "recursion":
        raise RecursionError("too deep")
    if kind == "inner_cancelled":  # a sub-agent run inside the tool was cancelled
        raise Cancelled("inner run cancelled", phase="model_request")
    if kind == "inner_agent_error":
        raise MaxIterationsExceeded("inner run hit its limit", limit="max_iterations")
    raise RuntimeError(f"boom: {kind}")


@tool
def boom(kind: str) -> str:
    """Raise an exception of the given kind."""
    with _active("sync", "boom"):
        _raise(kind)
        return "unreachable"


@tool
async def aboom(kind: str) -> str:
    """Raise from an async tool; ``cancelled`` raises asyncio.CancelledError itself."""
    with _active("async", "aboom"):
        await asyncio.sleep(0)
        if kind == "cancelled":
            raise asyncio.CancelledError()
        _raise(kind)
        return "unreachable"


@tool(max_calls=2)
def limited(x: int) -> int:
    """May be called twice per run."""
    with _active("sync", "limited"):
        return x * 2


@tool
def probe(ctx: RunContext[Any]) -> str:
    """Report what the run context says (attempt, iteration, call id)."""
    with _active("sync", "probe"):
        return json.dumps({"attempt": ctx.attempt, "iteration": ctx.iteration,
                           "call_id": ctx.tool_call_id})


@tool
def stopper(ctx: RunContext[Any]) -> str:
    """Cancel the run through its token, from a worker thread."""
    with _active("sync", "stopper"):
        STOPPED.update(by="thread", token=ctx.cancel_token)
        ctx.cancel_token.cancel("stopper tool cancelled the run")
        return "stop requested"


@tool
async def astopper(ctx: RunContext[Any]) -> str:
    """Cancel the run through its token, from the event loop."""
    with _active("async", "astopper"):
        STOPPED.update(by="loop", token=ctx.cancel_token)
        ctx.cancel_token.cancel("astopper tool cancelled the run")
        await asyncio.sleep(0)
        return "stop requested"


ALL_TOOLS: dict[str, Tool[Any]] = {
    t.name: t
    for t in (add, inline_add, echo, nap, snooze, cnap, csnooze, slow, slow_sync, weird, aweird,
              boom, aboom, limited, probe, stopper, astopper)
}

#: Valid arguments per tool, as a function of a random integer (deterministic per seed).
WEIRD_KINDS = ["object", "badrepr", "bigint", "int400", "deep", "shallow", "set", "bytes", "nan",
               "none", "huge_text", "dict_obj_keys", "media", "media_list", "nested_media"]
BOOM_KINDS = ["value", "key", "stop", "recursion", "inner_cancelled", "inner_agent_error",
              "runtime"]


def valid_arguments(name: str, n: int) -> dict[str, Any]:
    """Arguments that pass the tool's schema."""
    if name in ("add", "inline_add"):
        return {"a": n, "b": n % 7}
    if name == "echo":
        return {"text": f"echo-{n}"}
    if name in ("nap", "snooze", "cnap", "csnooze", "slow", "slow_sync"):
        return {"ms": n % 21}
    if name in ("weird", "aweird"):
        return {"kind": WEIRD_KINDS[n % len(WEIRD_KINDS)]}
    if name == "boom":
        return {"kind": BOOM_KINDS[n % len(BOOM_KINDS)]}
    if name == "aboom":
        return {"kind": [*BOOM_KINDS, "cancelled"][n % (len(BOOM_KINDS) + 1)]}
    if name == "limited":
        return {"x": n}
    return {}


def idle_threads_busy() -> int:
    """Worker threads of the engine's pool running a job now (0 when every one is idle)."""
    from toolcycle.run import threads

    pool = threads.TOOL_THREADS
    return max(0, pool.threads - pool._idle)  # the pool's own counter

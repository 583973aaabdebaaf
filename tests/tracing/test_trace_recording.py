"""Real runs through the Agent and the ScriptedModel, recorded on every way a run can end."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolcycle import Agent, Cancelled, Limits, MaxIterationsExceeded, RunContext, tool
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.tracing.redaction import REDACTED
from toolcycle.tracing.store import ENV_VAR, TraceStore


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def flaky(x: int) -> str:
    """Fail for odd numbers."""
    if x % 2:
        raise RuntimeError(f"odd input {x}")
    return "even"


@tool
def leak() -> str:
    """Return a string that contains a credential."""
    return "connected with key sk-live-0123456789abcdefghijKLMN"


async def test_success_is_recorded_with_steps_calls_and_output(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    model = ScriptedModel([call("add", {"a": 1, "b": 2}), call("flaky", {"x": 3}), "three"])
    agent = Agent(model, tools=[add, flaky], name="adder", trace_store=str(db))
    result = await agent.run("add 1 and 2")
    stored = TraceStore(db).get(result.run_id)
    assert stored is not None
    assert stored.status == "success"
    assert stored.agent_name == "adder"
    assert stored.output == "three"
    assert stored.termination is not None and stored.termination["reason"] == "completed"
    assert [len(s.tool_calls) for s in stored.steps] == [1, 1, 0]
    first, second = stored.tool_calls
    assert (first.name, first.args, first.result) == ("add", {"a": 1, "b": 2}, "3")
    assert second.error is not None and "odd input 3" in second.error
    assert stored.usage.to_dict() == result.usage.to_dict()


async def test_failure_is_recorded_with_its_error(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    model = ScriptedModel([call("add", {"a": i, "b": i}) for i in range(5)])
    agent = Agent(model, tools=[add], trace_store=str(db),
                  limits=Limits(max_iterations=2, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as info:
        await agent.run("loop forever")
    assert info.value.result is not None
    stored = TraceStore(db).get(info.value.result.run_id)
    assert stored is not None
    assert stored.status == "failure"
    assert stored.error is not None and stored.error["code"] == "MAX_ITERATIONS"
    assert len(stored.steps) == 2
    assert TraceStore(db).list(status="failure")[0].run_id == stored.run_id


async def test_cancellation_is_recorded(tmp_path: Path) -> None:
    @tool
    def stop(ctx: RunContext[None]) -> str:
        ctx.cancel_token.cancel("enough")
        return "stopping"

    db = tmp_path / "t.db"
    model = ScriptedModel([call("stop"), "never"])
    with pytest.raises(Cancelled) as info:
        await Agent(model, tools=[stop], trace_store=str(db)).run("go")
    assert info.value.result is not None
    stored = TraceStore(db).get(info.value.result.run_id)
    assert stored is not None
    assert stored.status == "cancelled"
    assert stored.termination is not None and stored.termination["reason"] == "cancelled"
    assert stored.tool_calls[0].result == "stopping"


def test_a_run_that_crashes_mid_way_keeps_what_happened(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    script = textwrap.dedent(f"""
        import os
        from toolcycle import Agent, tool
        from toolcycle.models.scripted import ScriptedModel, call

        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

        @tool
        def die() -> str:
            "Kill the process, as a segfault in a native extension would."
            os._exit(7)

        model = ScriptedModel([call("add", {{"a": 2, "b": 3}}), call("die"), "unreachable"])
        Agent(model, tools=[add, die], name="doomed", trace_store={str(db)!r}).run_sync("go")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 7, proc.stderr
    store = TraceStore(db)
    [row] = store.list()
    assert (row.agent_name, row.status) == ("doomed", "crashed")
    trace = store.get(row.run_id)
    assert trace is not None and trace.user_prompt == "go"
    assert trace.steps[0].tool_calls[0].result == "5"
    assert trace.ended_at is None
    # usage is totalled by the loop at the end; a crashed run gets it from its steps
    assert trace.usage.input_tokens == sum(s.usage.input_tokens for s in trace.steps) > 0
    assert row.input_tokens == trace.usage.input_tokens


async def test_env_var_turns_recording_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv(ENV_VAR, str(db))
    result = await Agent(ScriptedModel(["hi"]), name="envy").run("hello")
    assert [r.run_id for r in TraceStore(db).list(agent="envy")] == [result.run_id]


async def test_secrets_are_redacted_in_storage_not_in_the_result(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    model = ScriptedModel([call("leak"), "done"])
    agent = Agent(model, tools=[leak], trace_store=str(db))
    result = await agent.run("my token is Bearer abc.def.ghi")
    stored = TraceStore(db).get(result.run_id)
    assert stored is not None
    assert stored.user_prompt == f"my token is Bearer {REDACTED}"
    assert stored.tool_calls[0].result == f"connected with key {REDACTED}"
    assert "sk-live" in (result.tool_calls[0].result or "")


async def test_recorder_callbacks_store_the_runs_own_trace(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")
    model = ScriptedModel([call("add", {"a": 1, "b": 1}), "two"])
    agent = Agent(model, tools=[add], name="cb", callbacks=store.recorder())
    result = await agent.run("1+1")
    stored = store.get(result.run_id)
    assert stored is not None
    assert stored.to_dict() == result.trace.to_dict()

    failing = Agent(ScriptedModel([call("add", {"a": 1, "b": 1})] * 3), tools=[add],
                    callbacks=store.recorder(), limits=Limits(max_iterations=1, on_limit="error"))
    with pytest.raises(MaxIterationsExceeded) as info:
        await failing.run("again")
    assert info.value.result is not None
    failed = store.get(info.value.result.run_id)
    assert failed is not None and failed.status == "failure"


async def test_recorder_keeps_steps_while_the_run_is_in_flight(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")
    seen: list[int] = []

    @tool
    def peek(ctx: RunContext[None]) -> str:
        """Look at what the store holds right now."""
        trace = store.get(ctx.run_id)
        assert trace is not None
        seen.append(len(trace.steps))
        return "ok"

    model = ScriptedModel([call("peek"), call("peek"), "done"])
    await Agent(model, tools=[peek], callbacks=store.recorder()).run("go")
    assert seen == [1, 2]  # each iteration's model response was stored before its tool ran


async def test_concurrent_and_streamed_runs_share_one_store(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")

    def agent() -> Agent[None, str]:
        model = ScriptedModel([call("add", {"a": 2, "b": 2}), "four"])
        return Agent(model, tools=[add], name="many", trace_store=store)

    results = await asyncio.gather(*(agent().run(f"run {i}") for i in range(5)))
    stream = agent().stream("streamed")
    async for _ in stream:
        pass
    assert stream.result is not None
    ids = {r.run_id for r in results} | {stream.result.run_id}
    rows = store.list(agent="many")
    assert {r.run_id for r in rows} == ids
    assert all(r.status == "success" and r.iterations == 2 for r in rows)

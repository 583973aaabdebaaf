"""The text protocols driven by real llama.cpp models writing at random, through the whole loop.

tests/local/test_protocol_fuzz.py draws the replies itself; here a real model writes them:
SmolLM2-135M (and, under ``make fuzz``, Qwen2.5-Coder-0.5B) at temperatures up to 1.6 and a
random seed, so the replies are what small models really write when they go wrong (broken
JSON, invented observations, calls to tools that do not exist, replies cut off by
``max_tokens``), under random scenarios: protocol and grammar, streaming, text or structured
output with a validator, tools that fail, time out or return nothing, parallel calls, forced
choices, every kind of limit, and a cancellation at a random moment. Each run must keep the
loop's promises: every request a provider would accept (:class:`HistoryChecker`), every call
id answered once, a stated reason, the trace whole (its JSON round trip and HTML view), and
every request the model served counted in the usage.

One scenario in four goes through ``python -m llama_cpp.server`` (Qwen2.5-Coder-0.5B in its
own chat template, started on 127.0.0.1 when first drawn) and the official ``openai`` SDK, a
text protocol over the wire (``?tools=react|json``: the supported way, docs/local-model.md;
native calls through its function-calling format are documented as unusable with the packs,
and that format's handler answers ``tool_choice="required"`` with HTTP 500).

A scenario is drawn from its seed alone; reproduce one with ``TOOLCYCLE_REAL_FUZZ=1
TOOLCYCLE_REAL_FUZZ_SEED=<seed> pytest tests/local/test_real_model_fuzz.py``.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import (
    Agent,
    AgentError,
    CancelToken,
    Limits,
    Output,
    RunResult,
    Tool,
    ValidationFailed,
)
from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelSettings, StreamItem
from toolcycle.models.local.llama import local_model
from toolcycle.models.openai import compatible_model_from_string
from toolcycle.models.text.protocol import TextProtocolModel
from toolcycle.testing import HistoryChecker
from toolcycle.tracing.html import render_html
from toolcycle.tracing.trace import Trace

from .llama_server import serve

pytestmark = pytest.mark.real_model

#: Scenarios in `make test`; `make fuzz` runs many more (TOOLCYCLE_REAL_FUZZ=<n>).
RUNS = int(os.environ.get("TOOLCYCLE_REAL_FUZZ", "8"))
FIRST_SEED = int(os.environ.get("TOOLCYCLE_REAL_FUZZ_SEED", "20261128"))
#: In-process packs, and the server (Qwen2.5-Coder-0.5B behind llama_cpp.server).
SERVER = "server"
MODELS = ("smollm2-135m", "smollm2-135m", "qwen2.5-coder-0.5b", SERVER)


# -- the tools ---------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boom(reason: str) -> str:
    """Look up a reason (this tool always fails)."""
    raise RuntimeError(f"no such reason: {reason}")


async def slow(city: str) -> str:
    """Current weather in a city (slower than its timeout)."""
    await asyncio.sleep(5)
    return f"sunny in {city}"


def lookup(order_id: str, fields: list[str] | None = None) -> list[dict[str, str]]:
    """Find an order by id; returns the matching orders (often none)."""
    return [] if not order_id.startswith("A") else [{"id": order_id, "status": "shipped"}]


class Sum(BaseModel):
    total: int
    note: str = ""


def _odd_totals_refused(output: Sum, ctx: Any) -> None:
    if output.total % 2:
        raise ValidationFailed("the total must be even")


def _tools(rng: random.Random) -> list[Tool[Any]]:
    made = [Tool.from_function(add), Tool.from_function(boom),
            Tool.from_function(slow, timeout=0.2), Tool.from_function(lookup, read_only=True)]
    return rng.sample(made, rng.randint(1, len(made)))


# -- the scenario ------------------------------------------------------------------------------


@dataclass
class Scenario:
    seed: int
    model: str
    protocol: str
    constrained: bool | str
    streamed: bool
    structured: bool
    settings: ModelSettings
    limits: Limits
    cancel_after: float | None
    tools: list[Tool[Any]] = field(default_factory=list)

    def __str__(self) -> str:
        names = [t.spec.name for t in self.tools]
        return (f"seed={self.seed} {self.model} {self.protocol} constrained={self.constrained} "
                f"streamed={self.streamed} structured={self.structured} tools={names} "
                f"choice={self.settings.tool_choice} parallel={self.settings.parallel_tool_calls} "
                f"T={self.settings.temperature} max_tokens={self.settings.max_tokens} "
                f"limits={self.limits} cancel_after={self.cancel_after}")


def draw(seed: int) -> Scenario:
    rng = random.Random(seed)
    tools = _tools(rng)
    choice = rng.choice(["auto", "auto", "required", rng.choice(tools).spec.name])
    model = rng.choice(MODELS)
    protocol = rng.choice(["react", "json"])
    limits = Limits(
        max_iterations=rng.randint(1, 4), max_attempts=rng.randint(1, 2),
        max_tool_calls=rng.choice([None, None, 1, 2]),
        max_output_tokens=rng.choice([None, None, None, 60]),
        timeout=rng.choice([None, None, None, 4.0]),
        on_limit=rng.choice(["final_answer", "final_answer", "partial", "error"]),
        max_observation_chars=rng.choice([None, 40]),
    )
    settings = ModelSettings(
        temperature=round(rng.uniform(0.6, 1.6), 2), seed=rng.randint(0, 2**31 - 1),
        max_tokens=rng.choice([24, 64, 160]), tool_choice=choice,
        parallel_tool_calls=rng.choice([None, True]),
    )
    return Scenario(
        seed=seed, model=model, protocol=protocol,
        constrained=rng.choice((False, True, "lazy")) if protocol == "json" else False,
        streamed=rng.random() < 0.4, structured=rng.random() < 0.4, settings=settings,
        limits=limits, cancel_after=rng.choice([None, None, None, rng.uniform(0.05, 3.0)]),
        tools=tools,
    )


# -- the model, checked and counted ------------------------------------------------------------


class Counted(Model):
    """The real inner model, each request it serves counted (a cancelled one too)."""

    def __init__(self, inner: Model) -> None:
        self.inner, self.name, self.system = inner, inner.name, inner.system
        self.served = 0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self.served += 1
        return await self.inner.request(messages, settings)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def stream(self, messages: Sequence[Message], settings: ModelSettings
                     ) -> AsyncIterator[StreamItem]:
        self.served += 1
        async for item in self.inner.stream(messages, settings):
            yield item


class Checked(Model):
    """The protocol model, every neutral request checked as a provider would check it."""

    def __init__(self, inner: Model) -> None:
        self.inner, self.name, self.system = inner, inner.name, inner.system
        self.checker = HistoryChecker()

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self.checker.check(messages)
        return await self.inner.request(messages, settings)

    async def stream(self, messages: Sequence[Message], settings: ModelSettings
                     ) -> AsyncIterator[StreamItem]:
        self.checker.check(messages)
        async for item in self.inner.stream(messages, settings):
            yield item


_LOADED: dict[tuple[str, str], TextProtocolModel] = {}


def _model(scenario: Scenario, server: str | None) -> tuple[Checked, Counted, Model | None]:
    """The checked model, its inner model counted, and what to close after the run."""
    if scenario.model == SERVER:
        assert server is not None, "this scenario needs the server"
        built = compatible_model_from_string(
            f"qwen2.5-coder-0.5b@{server}?tools={scenario.protocol}")
        assert isinstance(built, TextProtocolModel)
        counted = Counted(built.inner)
        built.inner = counted
        return Checked(built), counted, built
    key = (scenario.model, scenario.protocol)
    if key not in _LOADED:  # one llama.cpp instance per pack, shared by both protocols
        _LOADED[key] = local_model(scenario.model, protocol=scenario.protocol,  # type: ignore[arg-type]
                                   constrained=False)
    protocol_model = _LOADED[key]
    chat = protocol_model.inner
    counted = Counted(chat.inner if isinstance(chat, Counted) else chat)
    protocol_model.inner = counted
    return Checked(protocol_model), counted, None


# -- one run -----------------------------------------------------------------------------------


async def _run(agent: Agent[None, Any], scenario: Scenario, token: CancelToken,
               closing: Model | None) -> RunResult[Any]:
    try:
        return await _ask(agent, scenario, token)
    finally:
        if closing is not None:
            await closing.aclose()


async def _ask(agent: Agent[None, Any], scenario: Scenario, token: CancelToken) -> RunResult[Any]:
    if scenario.cancel_after is not None:
        asyncio.get_running_loop().call_later(scenario.cancel_after, token.cancel, "fuzz")
    if not scenario.streamed:
        return await agent.run("What is 2 + 3? Then check order B-7.", cancel_token=token)
    stream = agent.stream("What is 2 + 3? Then check order B-7.", cancel_token=token)
    async for _ in stream:
        pass
    assert stream.result is not None
    return stream.result


def check(seed: int, server: str | None = None) -> str:
    """Run the scenario ``seed`` draws (``server``: the base URL of the llama_cpp.server the
    scenario may need); raise AssertionError on a broken promise. Returns a line saying how
    it ended (the campaign prints them)."""
    scenario = draw(seed)
    model, counted, closing = _model(scenario, server)
    output: Any = Output(Sum, validators=[_odd_totals_refused]) if scenario.structured else None
    settings = scenario.settings
    if scenario.protocol == "json":
        settings = replace(settings, extra={"constrained": scenario.constrained})
    agent: Agent[None, Any] = Agent(model, "You add numbers and look up orders.", scenario.tools,
                                    output=output, model_settings=settings,
                                    limits=scenario.limits)
    token = CancelToken()
    started = time.perf_counter()
    try:
        result = asyncio.run(_run(agent, scenario, token, closing))
        code = "ok"
    except AgentError as exc:
        assert exc.result is not None, f"{scenario}\n{exc.code} without its partial result"
        result, code = exc.result, exc.code
        # whatever a real model writes is an observation or a retry, never a crash
        assert code not in ("AGENT_ERROR", "MODEL_ERROR"), (
            f"{scenario}\n{exc}\n{result.trace.render()}")
    seconds = time.perf_counter() - started
    trace = result.trace
    where = f"{scenario}\n{trace.render()}"
    assert result.termination.reason, where  # a stated reason
    calls = [c for s in trace.steps for c in s.tool_calls]
    ids = [c.call_id for c in calls]
    assert len(ids) == len(set(ids)), where  # every call answered once
    assert all(c.result is not None or c.error is not None for c in calls), where
    HistoryChecker().check(result.messages)  # the history a provider would accept
    answered = {r.call_id for m in result.messages if m.role == "tool" for r in m.results}
    asked = [c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls]
    assert set(asked) <= answered, where
    # every request the model served is in the usage: re-asks, and one cut off by a cancel
    assert result.usage.requests == counted.served, (
        f"{where}\nusage.requests={result.usage.requests}, served={counted.served}")
    assert Trace.from_dict(trace.to_dict()).to_dict() == trace.to_dict(), where
    render_html(trace)
    return (f"seed={seed} {code:<22} {result.termination.reason:<16} "
            f"requests={counted.served} calls={len(calls)} {seconds:5.1f}s")


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Qwen2.5-Coder-0.5B behind ``python -m llama_cpp.server``, in its own chat template."""
    yield from serve(tmp_path_factory.mktemp("llama_server"), [])


@pytest.mark.parametrize("seed", [FIRST_SEED + i for i in range(RUNS)])
def test_a_real_model_writing_at_random_keeps_the_loops_promises(
        seed: int, request: pytest.FixtureRequest) -> None:
    server = request.getfixturevalue("chat_server") if draw(seed).model == SERVER else None
    print(check(seed, server))

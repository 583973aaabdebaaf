"""Cost over the real wires: each adapter's usage priced from the table by its model's name,
a fallback's reply priced as the model that wrote it, and an unknown model's cost unknown."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from toolcycle import Agent, ConfigurationError, FallbackModel, Limits
from toolcycle.models.base import Model
from toolcycle.pricing import PRICES, Price

from .conftest import anthropic_model, gemini_model, openai_model, responses_model
from .script import Call, Fault, Reply
from .server import ProviderServer


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


WIRES: dict[str, tuple[Callable[..., Model], str]] = {
    "openai": (openai_model, "gpt-4o-mini"),
    "responses": (responses_model, "gpt-4.1-mini"),
    "anthropic": (anthropic_model, "claude-haiku-4-5-20251001"),
    "gemini": (gemini_model, "gemini-2.5-flash"),
}


@pytest.mark.parametrize("wire", list(WIRES))
async def test_each_reply_is_priced_by_the_table_for_its_model(server: ProviderServer,
                                                              wire: str) -> None:
    make, name = WIRES[wire]
    model = make(server)
    model.name = name  # the adapter asks the server for this model
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    result = await Agent(model, tools=[add]).run("add 1 and 2")

    price = PRICES[name.removesuffix("-20251001")]
    assert all(s.usage.input_tokens for s in result.trace.steps)  # the server counted tokens
    expected = sum((price.cost(s.usage) for s in result.trace.steps), Decimal(0))
    assert result.usage.cost == expected > 0
    assert result.trace.usage.cost == expected


async def test_a_models_own_price_wins_over_the_table(server: ProviderServer) -> None:
    own = Price("1", "1")
    model = openai_model(server, price=own)
    model.name = "gpt-4o"
    server.script([Reply(text="hi")])
    result = await Agent(model).run("hello")
    assert result.usage.cost == own.cost(result.usage)


async def test_a_fallback_reply_costs_what_its_model_charges(server: ProviderServer) -> None:
    primary, secondary = openai_model(server), anthropic_model(server)
    primary.name, secondary.name = "gpt-4o", "claude-haiku-4-5"
    server.script([*[Fault(status=500)] * 4, Reply(text="from claude"),  # the first request
                   Reply(text="from gpt")])  # the second: the primary is back
    agent = Agent(FallbackModel([primary, secondary]), limits=Limits(max_cost="1"))
    first = await agent.run("hi")
    second = await agent.run("again")

    assert first.output == "from claude" and second.output == "from gpt"
    [step] = first.trace.steps
    assert step.model == "claude-haiku-4-5"
    assert first.usage.cost == PRICES["claude-haiku-4-5"].cost(first.usage)
    assert second.usage.cost == PRICES["gpt-4o"].cost(second.usage)


async def test_an_unknown_models_cost_is_unknown_and_says_which(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    agent = Agent(openai_model(server), tools=[add])  # "gpt-test": in no price table
    result = await agent.run("add 1 and 2")
    assert result.usage.cost is None and result.trace.usage.cost is None
    assert result.trace.metadata["unpriced_models"] == ["gpt-test"]
    assert result.trace.to_dict()["usage"]["cost_usd"] is None  # stored as unknown, not 0
    with pytest.raises(ConfigurationError, match="gpt-test"):
        await agent.run("again", limits=Limits(max_cost="0.10"))


def test_the_table_prices_what_the_cloud_adapters_speak_to() -> None:
    for prefix in ("gpt-", "claude-", "gemini-"):  # OpenAI, Anthropic, Google
        assert any(name.startswith(prefix) for name in PRICES), prefix

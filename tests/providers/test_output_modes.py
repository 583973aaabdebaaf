"""Output modes over every adapter's validating server (the official SDKs over loopback).

``native`` sends the provider's own response-format field (checked by ``format_wire`` as the
API does, and a reply scripted under it must be JSON of its schema); ``prompted`` sends the
schema in the prompt and offers no output tool; ``tool`` is the output tool. Validators, the
forced answer at a limit, and the fallback from a mode the model fails are the same in each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Limits, Output
from toolcycle.errors import ValidationFailed
from toolcycle.models.base import Model

from .conftest import anthropic_model, gemini_model, openai_model, responses_model
from .script import Call, Reply
from .server import ProviderServer


class City(BaseModel):
    name: str
    population: int


ADAPTERS: dict[str, Callable[..., Model]] = {
    "openai": openai_model, "responses": responses_model, "anthropic": anthropic_model,
    "gemini": gemini_model,
}
OSLO = {"name": "Oslo", "population": 709000}


def format_field(provider: str, body: dict[str, Any]) -> Any:
    """Where each provider's request carries the response format."""
    if provider == "openai":
        return body.get("response_format")
    if provider == "responses":
        return body.get("text")
    if provider == "anthropic":
        return body.get("output_config")
    return (body.get("generationConfig") or {}).get("responseJsonSchema")


def tool_names(provider: str, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if provider == "gemini":
        return [d["name"] for t in tools for d in t.get("functionDeclarations", [])]
    if provider == "openai":
        return [t["function"]["name"] for t in tools]
    return [t["name"] for t in tools]


def population(city: str) -> int:
    """The population of a city."""
    return 709000


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_native_sends_the_provider_format_and_reads_the_json(
        server: ProviderServer, provider: str) -> None:
    server.script([Reply(calls=[Call("population", {"city": "Oslo"})]),
                   Reply(text=json.dumps(OSLO))])
    agent = Agent(ADAPTERS[provider](server), tools=[population],
                  output=Output(City, mode="native"))
    result = await agent.run("How many live in Oslo?")
    assert result.output == City(**OSLO)
    for record in server.requests:
        assert format_field(provider, record.body) is not None
        assert tool_names(provider, record.body) == ["population"]  # no output tool
    expected = {
        "openai": {"type": "json_schema", "json_schema": {"name": "final_result", "schema": ANY}},
        "responses": {"format": {"type": "json_schema", "name": "final_result", "schema": ANY}},
        "anthropic": {"format": {"type": "json_schema", "schema": ANY}},
    }.get(provider)
    if expected is not None:
        assert format_field(provider, server.requests[0].body) == expected
    else:
        assert server.requests[0].body["generationConfig"]["responseMimeType"] == (
            "application/json")


class _Any:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, dict) and other.get("type") == "object"


ANY = _Any()


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_prompted_asks_for_json_in_the_prompt(server: ProviderServer, provider: str) -> None:
    server.script([Reply(text=f"Here it is:\n```json\n{json.dumps(OSLO)}\n```")])
    result = await Agent(ADAPTERS[provider](server), output=Output(City, mode="prompted")).run(
        "How many live in Oslo?")
    assert result.output == City(**OSLO)
    body = server.requests[0].body
    assert format_field(provider, body) is None and not tool_names(provider, body)
    assert "JSON Schema" in json.dumps(body) and "population" in json.dumps(body)


@pytest.mark.parametrize("mode", ["tool", "native", "prompted"])
@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_validators_reject_and_the_next_attempt_fixes_it(
        server: ProviderServer, provider: str, mode: str) -> None:
    def answer(value: dict[str, Any]) -> Reply:
        if mode == "tool":
            return Reply(calls=[Call("final_result", value)])
        return Reply(text=json.dumps(value))

    server.script([answer({"name": "Oslo", "population": -1}), answer(OSLO)])

    def positive(city: City, ctx: Any) -> None:
        if city.population < 0:
            raise ValidationFailed("population must be positive")

    agent = Agent(ADAPTERS[provider](server),
                  output=Output(City, mode=mode, validators=[positive]))  # type: ignore[arg-type]
    result = await agent.run("How many live in Oslo?")
    assert result.output == City(**OSLO)
    assert "population must be positive" in json.dumps(server.requests[1].body)


@pytest.mark.parametrize("mode", ["native", "prompted"])
@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_the_forced_answer_at_a_limit_is_json_too(
        server: ProviderServer, provider: str, mode: str) -> None:
    server.script([Reply(calls=[Call("population", {"city": "Oslo"})]),
                   Reply(text=json.dumps(OSLO))])
    agent = Agent(ADAPTERS[provider](server), tools=[population],
                  output=Output(City, mode=mode),  # type: ignore[arg-type]
                  limits=Limits(max_iterations=1, on_limit="final_answer"))
    result = await agent.run("How many live in Oslo?")
    assert result.output == City(**OSLO)
    assert result.termination.reason == "max_iterations"
    assert (format_field(provider, server.requests[1].body) is not None) == (mode == "native")


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_a_model_that_fails_the_output_tool_falls_back_to_native(
        server: ProviderServer, provider: str) -> None:
    """pydantic-ai#1192: the model answers "Hello" instead of calling the output tool."""
    server.script([Reply(text="Hello"), Reply(text=json.dumps(OSLO))])
    result = await Agent(ADAPTERS[provider](server), output=City).run("How many live in Oslo?")
    assert result.output == City(**OSLO)
    first, second = (r.body for r in server.requests)
    assert tool_names(provider, first) == ["final_result"] and format_field(provider, first) is None
    assert not tool_names(provider, second) and format_field(provider, second) is not None


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_the_chain_goes_on_to_prompted_when_native_is_refused(
        server: ProviderServer, provider: str) -> None:
    """A model without structured outputs answers the format 400: the run's third attempt
    asks for JSON in the prompt."""
    server.refuse_formats = True
    server.script([Reply(text="Hello"), Reply(text=json.dumps(OSLO))])
    agent = Agent(ADAPTERS[provider](server), tools=[population], output=City,
                  limits=Limits(max_attempts=3))
    result = await agent.run("How many live in Oslo?")
    assert result.output == City(**OSLO)
    assert [r.status for r in server.requests] == [200, 400, 200]
    assert len(server.take_rejections()) == 1  # the refused format
    last = server.requests[-1].body
    assert format_field(provider, last) is None and "JSON Schema" in json.dumps(last)
    assert [s.attempt for s in result.trace.steps] == [1, 2, 3]


@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_native_streams_too(server: ProviderServer, provider: str) -> None:
    server.script([Reply(text=json.dumps(OSLO))])
    agent = Agent(ADAPTERS[provider](server), output=Output(City, mode="native"))
    result = await agent.stream("How many live in Oslo?").get_result()
    assert result.output == City(**OSLO)
    assert server.requests[0].streamed and format_field(provider, server.requests[0].body)


@pytest.mark.parametrize("mode", ["native", "prompted"])
@pytest.mark.parametrize("provider", list(ADAPTERS))
async def test_reflection_previews_the_json_answer_and_submit_ends_it(
        server: ProviderServer, provider: str, mode: str) -> None:
    server.script([Reply(text=json.dumps({"name": "Oslo", "population": 1})),
                   Reply(text=json.dumps(OSLO)), Reply(calls=[Call("submit", {})])])
    output = Output(City, mode=mode,  # type: ignore[arg-type]
                    reflect=lambda city, ctx: f"Preview: {city.name} has {city.population}")
    result = await Agent(ADAPTERS[provider](server), output=output).run("Oslo?")
    assert result.output == City(**OSLO)
    assert tool_names(provider, server.requests[0].body) == ["submit"]
    assert "Preview: Oslo has 709000" in json.dumps(server.requests[2].body)
    assert all((format_field(provider, r.body) is not None) == (mode == "native")
               for r in server.requests)

"""Fixtures: one provider server per session, reset per test, and clients pointed at it.

A test fails if the server rejected any request it did not expect: an adapter that sends what
a real API would refuse must not pass. Tests that provoke rejections take them with
``server.take_rejections()``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolcycle.models.anthropic import AnthropicModel
from toolcycle.models.google import GeminiModel
from toolcycle.models.openai import OpenAIFunctionsModel, OpenAIModel
from toolcycle.models.openai_responses import OpenAIResponsesModel
from toolcycle.models.retry import RetryPolicy

from .server import ProviderServer

#: Tests retry with tiny waits; the policy's arithmetic is tested on its own.
FAST_RETRY = RetryPolicy(max_retries=3, initial_delay=0.001, max_delay=0.01, jitter=0.1)


@pytest.fixture(scope="session")
def provider_server() -> Iterator[ProviderServer]:
    server = ProviderServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def server(provider_server: ProviderServer) -> Iterator[ProviderServer]:
    provider_server.reset()
    yield provider_server
    rejected = provider_server.take_rejections()
    assert not rejected, f"the server rejected requests a real API would refuse: {rejected}"


def openai_model(server: ProviderServer, **options: object) -> OpenAIModel:
    options.setdefault("retry", FAST_RETRY)
    return OpenAIModel("gpt-test", base_url=server.openai_url, api_key="sk-test", **options)  # type: ignore[arg-type]


def functions_model(server: ProviderServer, **options: object) -> OpenAIFunctionsModel:
    options.setdefault("retry", FAST_RETRY)
    return OpenAIFunctionsModel(
        "gpt-legacy",
        base_url=server.openai_url,
        api_key="sk-test",
        **options,  # type: ignore[arg-type]
    )


def anthropic_model(server: ProviderServer, **options: object) -> AnthropicModel:
    options.setdefault("retry", FAST_RETRY)
    return AnthropicModel("claude-test", base_url=server.url, api_key="sk-ant-test", **options)  # type: ignore[arg-type]


def responses_model(server: ProviderServer, **options: object) -> OpenAIResponsesModel:
    options.setdefault("retry", FAST_RETRY)
    return OpenAIResponsesModel(
        "gpt-test-responses", base_url=server.openai_url, api_key="sk-test", **options  # type: ignore[arg-type]
    )


def gemini_model(server: ProviderServer, **options: object) -> GeminiModel:
    options.setdefault("retry", FAST_RETRY)
    return GeminiModel("gemini-test", base_url=server.url, api_key="test-key", **options)  # type: ignore[arg-type]

"""Retries: the policy's arithmetic, and each adapter facing 429/5xx/timeouts/dropped
connections from the server (tiny delays, so nothing here waits for long)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from toolcycle.errors import ModelError, RateLimited
from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelResponse, ModelSettings, TextDelta
from toolcycle.models.retry import Failure, RetryAttempt, RetryPolicy, parse_retry_after

from .conftest import (
    FAST_RETRY,
    anthropic_model,
    functions_model,
    gemini_model,
    openai_model,
    responses_model,
)
from .script import Fault, Reply
from .server import ProviderServer

FACTORIES: dict[str, Callable[..., Model]] = {
    "openai": openai_model,
    "functions": functions_model,
    "anthropic": anthropic_model,
    "responses": responses_model,
    "gemini": gemini_model,
}
WIRES = list(FACTORIES)


def test_backoff_grows_exponentially_with_bounded_jitter_and_a_cap() -> None:
    policy = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter=0.25)
    failure = Failure("busy", 503, retryable=True)
    for retry, base in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = [policy.delay_for(retry, failure) for _ in range(50)]
        assert all(d is not None and base <= d <= base * 1.25 for d in delays)
        assert len(set(delays)) > 1  # jitter spreads the clients out


def test_retry_after_replaces_backoff_and_too_long_gives_up() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_retry_after=10.0)
    assert policy.delay_for(1, Failure("slow down", 429, retry_after=3.0, retryable=True)) == 3.0
    assert policy.delay_for(1, Failure("slow down", 429, retry_after=60.0, retryable=True)) is None
    ignoring = replace(policy, respect_retry_after=False, jitter=0.0)
    assert ignoring.delay_for(1, Failure("x", 429, retry_after=60.0, retryable=True)) == 1.0


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = parse_retry_after({"retry-after": later})
    assert seconds is not None and 25 <= seconds <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def _recording(retries: list[RetryAttempt], **changes: object) -> RetryPolicy:
    return replace(FAST_RETRY, on_retry=retries.append, **changes)  # type: ignore[arg-type]


async def _ask(model: Model, stream: bool) -> Message:
    if not stream:
        return await model.request([Message.user("hi")], ModelSettings())
    items = [i async for i in model.stream([Message.user("hi")], ModelSettings())]
    assert isinstance(items[-1], ModelResponse)
    return items[-1].message


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", WIRES)
async def test_429_with_retry_after_then_success(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    retries: list[RetryAttempt] = []
    server.script(
        [Fault(status=429, retry_after="0.02", message="Rate limit reached"), Reply(text="ok")]
    )
    model = FACTORIES[wire](server, retry=_recording(retries))
    message = await _ask(model, stream)
    assert message.text == "ok"
    assert [r.failure.status for r in retries] == [429]
    assert retries[0].delay == 0.02  # the server's Retry-After, not the policy's backoff
    assert retries[0].failure.message == "Rate limit reached"
    assert [r.status for r in server.requests] == [429, 200]


@pytest.mark.parametrize("wire", WIRES)
async def test_500s_until_the_tries_run_out(server: ProviderServer, wire: str) -> None:
    server.script([Fault(status=500, message="The server had an error")] * 4)
    model = FACTORIES[wire](server)
    with pytest.raises(ModelError) as caught:
        await _ask(model, stream=False)
    error = caught.value
    assert not isinstance(error, RateLimited) and error.code == "MODEL_ERROR"
    assert error.context["status"] == 500 and error.context["tries"] == 4
    assert error.context["provider_message"] == "The server had an error"
    assert "failed after 4 tries (HTTP 500): The server had an error" in str(error)
    assert len(server.requests) == 4


async def test_rate_limited_after_the_last_try(server: ProviderServer) -> None:
    server.script([Fault(status=429, retry_after="0")] * 2)
    model = openai_model(server, retry=replace(FAST_RETRY, max_retries=1))
    with pytest.raises(RateLimited) as caught:
        await _ask(model, stream=True)
    assert caught.value.code == "RATE_LIMITED" and caught.value.context["status"] == 429


async def test_overload_529_and_long_retry_after(server: ProviderServer) -> None:
    retries: list[RetryAttempt] = []
    server.script(
        [
            Fault(status=529, message="Overloaded"),
            Reply(text="fine"),
            Fault(status=429, retry_after="3600"),
        ]
    )
    model = anthropic_model(server, retry=_recording(retries))
    assert (await _ask(model, stream=False)).text == "fine"
    with pytest.raises(RateLimited, match="after 1 try"):
        await _ask(model, stream=False)  # an hour's wait is the caller's call, not ours
    assert [r.failure.error_type for r in retries] == ["overloaded_error"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", WIRES)
async def test_dropped_connection_is_retried(
    server: ProviderServer, wire: str, stream: bool
) -> None:
    retries: list[RetryAttempt] = []
    server.script(
        [Fault(drop=True), Reply(text="dropped stream, ignored")] if stream else [Fault(drop=True)]
    )
    server.script([Reply(text="second time lucky")])
    model = FACTORIES[wire](server, retry=_recording(retries))
    assert (await _ask(model, stream)).text == "second time lucky"
    assert len(retries) == 1 and retries[0].failure.status is None


@pytest.mark.parametrize("wire", WIRES)
async def test_slow_response_times_out_and_is_retried(server: ProviderServer, wire: str) -> None:
    retries: list[RetryAttempt] = []
    server.script([Fault(delay=5.0), Reply(text="quick now")])
    model = FACTORIES[wire](server, retry=_recording(retries), timeout=0.5)
    assert (await _ask(model, stream=False)).text == "quick now"
    assert [r.failure.error_type for r in retries] == ["timeout"]


@pytest.mark.parametrize("wire", WIRES)
async def test_stream_cut_after_deltas_is_an_error_not_a_silent_restart(
    server: ProviderServer, wire: str
) -> None:
    server.script([Fault(drop=True, drop_after=4), Reply(text="a long answer that is cut off")])
    model = FACTORIES[wire](server)
    seen: list[str] = []
    with pytest.raises(ModelError, match="stream interrupted") as caught:
        async for item in model.stream([Message.user("hi")], ModelSettings()):
            if isinstance(item, TextDelta):
                seen.append(item.text)
    assert seen  # some text arrived before the cut
    assert caught.value.context["tries"] == 1 and len(server.requests) == 1

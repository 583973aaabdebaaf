"""Retrying provider requests: which failures are worth another try, and how long to wait.

Provider SDKs can retry on their own, but each does it differently and none lets the loop see
what happened. Adapters therefore build their clients with ``max_retries=0`` and wrap every
request in :func:`with_retries`: 408/409/429/5xx answers, connection errors and timeouts are
retried with exponential backoff and jitter, honouring the server's ``Retry-After``; anything
else (a 400 says the request itself is wrong) fails at once. After the last try the caller gets
a :class:`~toolcycle.errors.ModelError` (or :class:`~toolcycle.errors.RateLimited` for 429)
carrying the status and the provider's own message; the loop attaches the partial result.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError, RateLimited

#: HTTP statuses that say "try again later" rather than "your request is wrong".
RETRYABLE_STATUSES = frozenset({408, 409, 429})


class StreamIncomplete(Exception):
    """A stream ended without its closing event (the connection closed cleanly mid-answer)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A provider failure in neutral terms, built by the adapter from its SDK's exception.

    ``status`` is ``None`` for connection errors and timeouts (no HTTP answer arrived).
    """

    message: str
    status: int | None = None
    retry_after: float | None = None
    retryable: bool = False
    error_type: str | None = None


@dataclass(frozen=True, slots=True)
class RetryAttempt:
    """What :attr:`RetryPolicy.on_retry` is told before each wait (1-based ``retry``)."""

    retry: int
    delay: float
    failure: Failure


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry and how long to wait between tries.

    The wait before retry ``n`` (1-based) is ``initial_delay * multiplier**(n-1)``, capped at
    ``max_delay``, with up to ``jitter`` (a fraction) added at random so that many clients hit
    by the same outage do not retry in lock step. A ``Retry-After`` from the server replaces the
    computed wait; when it asks for more than ``max_retry_after`` seconds we stop and raise,
    because a wait that long is the caller's decision. Tests use tiny delays.
    """

    max_retries: int = 4
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: float = 0.25
    respect_retry_after: bool = True
    max_retry_after: float = 60.0
    on_retry: Callable[[RetryAttempt], None] | None = None

    def delay_for(self, retry: int, failure: Failure) -> float | None:
        """Seconds to wait before ``retry``, or ``None`` when we should not wait at all."""
        if self.respect_retry_after and failure.retry_after is not None:
            if failure.retry_after > self.max_retry_after:
                return None
            return max(0.0, failure.retry_after)
        base = min(self.max_delay, self.initial_delay * self.multiplier ** (retry - 1))
        return base * (1.0 + self.jitter * random.random())


NO_RETRIES = RetryPolicy(max_retries=0)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        import email.utils  # only for the rare HTTP-date form; costs 5 ms to import

        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def provider_message(body: object, fallback: str) -> str:
    """The human message inside an OpenAI- or Anthropic-shaped error body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return fallback


def failure_from_sdk_error(exc: BaseException) -> Failure | None:
    """Classify an exception of the ``openai`` or ``anthropic`` SDK; ``None`` if it is not one.

    Both SDKs are generated from the same template and share the attributes read here
    (``status_code``, ``response.headers``, ``body``), so one function serves both; the class
    names are checked through the SDK modules so neither SDK is imported unless installed.
    """
    kind = "connection" if isinstance(exc, StreamIncomplete) else _sdk_error_kind(exc)
    if kind is None:
        return None
    if kind == "status":
        status = int(getattr(exc, "status_code", 0))
        response = getattr(exc, "response", None)
        headers: Mapping[str, str] = getattr(response, "headers", {}) or {}
        body = getattr(exc, "body", None)
        error_type = None
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict) and isinstance(inner.get("type"), str):
                error_type = inner["type"]
        return Failure(
            message=provider_message(body, str(exc)),
            status=status,
            retry_after=parse_retry_after(headers),
            retryable=is_retryable_status(status),
            error_type=error_type,
        )
    label = "timed out" if kind == "timeout" else "connection failed"
    # The SDKs say only "Connection error."; the URL tells a user which server is not there.
    try:  # httpx raises RuntimeError for a request it never had
        request = getattr(exc, "request", None)
    except RuntimeError:
        request = None
    url = getattr(request, "url", None)
    where = f" ({getattr(request, 'method', 'request to')} {url})" if url is not None else ""
    return Failure(message=f"{label}{where}: {exc}", retryable=True, error_type=kind)


def _sdk_error_kind(exc: BaseException) -> str | None:
    for module in ("openai", "anthropic"):
        sdk = _loaded_sdk(module)
        if sdk is None:
            continue
        if isinstance(exc, sdk.APIStatusError):
            return "status"
        if isinstance(exc, sdk.APITimeoutError):
            return "timeout"
        if isinstance(exc, sdk.APIConnectionError):
            return "connection"
    # A stream that breaks while its body is read raises the HTTP library's own error.
    for module in ("httpx2", "httpx"):
        http = _loaded_sdk(module)
        if http is None:
            continue
        if isinstance(exc, http.TimeoutException):
            return "timeout"
        if isinstance(exc, http.TransportError):
            return "connection"
    return None


def _loaded_sdk(name: str) -> Any:
    import sys

    return sys.modules.get(name)


def model_error(failure: Failure, *, provider: str, model: str, tries: int) -> ModelError:
    """The error a run fails with once retries are exhausted (or pointless)."""
    where = f"HTTP {failure.status}" if failure.status is not None else "no response"
    message = f"{provider} request failed after {tries} tr{'y' if tries == 1 else 'ies'} ({where})"
    message += f": {failure.message}"
    error_cls = RateLimited if failure.status == 429 else ModelError
    return error_cls(
        message,
        provider=provider,
        model=model,
        status=failure.status,
        provider_message=failure.message,
        error_type=failure.error_type,
        tries=tries,
    )


async def with_retries[T](
    operation: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    provider: str,
    model: str,
    classify: Callable[[BaseException], Failure | None] = failure_from_sdk_error,
) -> T:
    """Run ``operation`` until it succeeds, a failure is not retryable, or tries run out.

    Exceptions that ``classify`` does not recognise (bugs, cancellation) propagate unchanged.
    """
    retry = 0
    while True:
        try:
            return await operation()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            error = await _wait_or_error(failure, retry + 1, policy, provider, model)
            if error is not None:
                raise error from exc
            retry += 1


async def stream_with_retries[T](
    open_stream: Callable[[], AsyncIterator[T]],
    policy: RetryPolicy,
    *,
    provider: str,
    model: str,
    classify: Callable[[BaseException], Failure | None] = failure_from_sdk_error,
) -> AsyncGenerator[T, None]:
    """Yield from a fresh stream, retrying while it fails before its first item.

    Once an item has been yielded the consumer has seen part of an answer, so a failure after
    that is raised as :class:`~toolcycle.errors.ModelError` instead of silently starting over.
    """
    retry = 0
    while True:
        started = False
        try:
            async for item in open_stream():
                started = True
                yield item
            return
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if started:
                failure = Failure(
                    f"stream interrupted: {failure.message}",
                    failure.status,
                    None,
                    False,
                    failure.error_type,
                )
            error = await _wait_or_error(failure, retry + 1, policy, provider, model)
            if error is not None:
                raise error from exc
            retry += 1


async def _wait_or_error(
    failure: Failure, retry: int, policy: RetryPolicy, provider: str, model: str
) -> ModelError | None:
    """Sleep before ``retry`` and return ``None``, or return the error to raise instead."""
    delay = policy.delay_for(retry, failure) if failure.retryable else None
    if delay is None or retry > policy.max_retries:
        return model_error(failure, provider=provider, model=model, tries=retry)
    if policy.on_retry is not None:
        policy.on_retry(RetryAttempt(retry, delay, failure))
    await asyncio.sleep(delay)
    return None

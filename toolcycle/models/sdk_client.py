"""An SDK client that follows the running event loop.

The official ``openai`` and ``anthropic`` async clients pool connections in ``httpx``, and a
pool belongs to the event loop it was first used on. ``agent.run_sync()`` keeps one loop per
thread, but a caller's own ``asyncio.run`` per request, or ``run_sync`` from several threads,
puts one model under several loops, and a client kept from the first fails on the next with
"Event loop is closed". An adapter that builds its own client therefore keeps one per loop:
when the running loop changes, the client is built again. A client the caller passed in is
the caller's to manage and is always used as given.

The clients built here get the SDK's ``DefaultAsyncHttpxClient`` (its defaults, without the
``__del__`` of the connection pool it makes for itself). That ``__del__`` closes an unclosed
pool on whichever loop is running when it is collected: a client dropped with its loop (a
caller's second ``asyncio.run``) was then closed on the next loop and printed "Task exception
was never retrieved ... Event loop is closed" (seen driving llama_cpp.server from
tests/local/test_real_model_fuzz.py, one ``asyncio.run`` per run). A pool left behind is
collected with its dead loop instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..pricing import Price, known_price
from .base import Model, OutputMode
from .windows import known_window


class LoopBoundClient:
    """The client for the running loop: built by ``factory``, or the caller's own ``client``."""

    def __init__(self, factory: Callable[[], Any] | None, client: Any = None) -> None:
        if factory is None and client is None:
            raise ValueError("LoopBoundClient needs a factory or a client")
        self._factory = factory
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        """The client to use now (inside a running loop, or outside one for inspection)."""
        if self._factory is None:
            return self._client
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # no loop: hand out the current client (built on first use)
            loop = self._loop
        if self._client is None or loop is not self._loop:
            # The previous client's pool died with its loop; it is dropped, not closed,
            # because closing it needs that loop.
            self._client = self._factory()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the current client (the caller's own client too, when asked explicitly)."""
        if self._client is not None:
            await self._client.close()
            if self._factory is not None:
                self._client = None
                self._loop = None


class SDKModel(Model):
    """A model adapter over an official SDK's async client, kept per event loop."""

    _client: LoopBoundClient

    @property
    def client(self) -> Any:
        """The SDK client of the running event loop (or the one passed in)."""
        return self._client.get()

    def context_tokens(self) -> int | None:
        return self.context_window or known_window(self.name)

    def pricing(self, answered_by: str | None = None) -> Price | None:
        """Its own ``price``, else the table's for its model (:data:`toolcycle.pricing.PRICES`)."""
        return self.price or known_price(self.name)

    def output_modes(self) -> tuple[OutputMode, ...]:
        """The cloud APIs take a JSON-schema response format: native comes second, so a
        model that will not call the output tool gets the provider's own structured output."""
        return ("tool", "native", "prompted")

    async def aclose(self) -> None:
        await self._client.aclose()

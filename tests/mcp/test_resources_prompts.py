"""MCP beyond tools against the real `@modelcontextprotocol/server-everything` (npm): resources
(list, read, subscribe, offered as tools), prompts, elicitation answered by the caller's
callback, and sampling served by the run's model, counted and bounded."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import everything_path

from toolcycle import Agent, Trace
from toolcycle.errors import ConfigurationError
from toolcycle.mcp import (
    ElicitationAnswer,
    ElicitationRequest,
    MCPServerError,
    MCPTools,
    Sampling,
)
from toolcycle.messages import Message, Usage
from toolcycle.testing import ScriptedModel, call

DOC = "demo://resource/static/document/architecture.md"


def everything(**options: object) -> MCPTools:
    return MCPTools.stdio("node", everything_path(), "stdio", **options)  # type: ignore[arg-type]


def tool_results(result: object) -> dict[str, tuple[str, bool]]:
    return {p.name: (p.content, p.is_error) for m in result.messages  # type: ignore[attr-defined]
            for p in m.parts if p.kind == "tool_result"}


async def test_resources_listed_read_and_attached() -> None:
    async with everything() as server:
        listed = await server.list_resources()
        assert DOC in {r.uri for r in listed}
        doc = next(r for r in listed if r.uri == DOC)
        assert doc.mime_type == "text/markdown" and doc.name == "architecture.md"
        (content,) = await server.read_resource(DOC)
        assert content.text is not None and content.text.startswith("# Everything Server")
        (blob,) = await server.read_resource("demo://resource/dynamic/blob/1")
        assert blob.text is None and blob.data is not None
        assert blob.data.startswith(b"Resource 1: This is a base64 blob")
        attached = await server.resource_text("demo://resource/dynamic/blob/1")
        # binary content is described (type and size), never inlined
        assert attached == (f"[resource <demo://resource/dynamic/blob/1>, text/plain, "
                            f"{len(blob.data):,} bytes]")
        with pytest.raises(MCPServerError, match="resources/read <demo://nothing/here>"):
            await server.read_resource("demo://nothing/here")


async def test_resources_offered_to_the_model_as_read_only_tools() -> None:
    server = everything(resource_tools=True, prefix="ev_")
    model = ScriptedModel([call("ev_list_resources", {}), call("ev_read_resource", {"uri": DOC}),
                           "It describes the architecture."])
    async with Agent(model, tools=[server]) as agent:
        result = await agent.run("What is in the architecture document?")
        offered = {t.name: t for t in await server.get_tools()}
    assert offered["ev_read_resource"].policy.read_only
    assert offered["ev_list_resources"].policy.read_only
    listing, failed = tool_results(result)["ev_list_resources"]
    assert not failed and {"uri": DOC, "name": "architecture.md",
                           "description": "Static document file exposed from /docs: "
                                          "architecture.md", "mimeType": "text/markdown"} in [
        json.loads(line) for line in listing.splitlines()]
    read, failed = tool_results(result)["ev_read_resource"]
    assert not failed and read.startswith(f"[resource <{DOC}>, text/markdown]\n# Everything")


async def test_prompts_listed_and_got_as_messages() -> None:
    async with everything() as server:
        prompts = {p.name: p for p in await server.list_prompts()}
        assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [
            ("city", True), ("state", False)]
        messages = await server.get_prompt("args-prompt", {"city": "Paris"})
        assert [m.to_dict() for m in messages] == [
            Message.user("What's weather in Paris?").to_dict()]
        # an embedded resource joins the text of the same user turn
        (embedded,) = await server.get_prompt(
            "resource-prompt", {"resourceType": "Text", "resourceId": "2"})
        assert embedded.role == "user" and len(embedded.parts) == 2
        assert embedded.text.endswith("Resource 2: This is a plaintext resource created at "
                                      + embedded.text.rsplit(" created at ", 1)[1])
        assert "[resource <demo://resource/dynamic/text/2>, text/plain]" in embedded.text
        with pytest.raises(MCPServerError, match="prompts/get 'no-such-prompt'"):
            await server.get_prompt("no-such-prompt")


async def test_a_prompt_as_a_runs_history() -> None:
    async with everything() as server:
        history = await server.get_prompt("args-prompt", {"city": "Paris"})
    model = ScriptedModel(["Sunny."])
    result = await Agent(model).run(message_history=history)
    assert result.output == "Sunny."
    assert model.requests[0].last_message.text == "What's weather in Paris?"


async def test_subscribed_resource_updates_reach_the_callback() -> None:
    updates: asyncio.Queue[str] = asyncio.Queue()
    server = everything(on_resource_updated=updates.put_nowait)
    model = ScriptedModel([call("toggle-subscriber-updates", {}), "started"])
    async with Agent(model, tools=[server]) as agent:
        await server.subscribe(DOC)
        await agent.run("start the updates")
        assert await asyncio.wait_for(updates.get(), 30) == DOC
        await server.unsubscribe(DOC)


async def test_elicitation_answered_by_the_callers_callback() -> None:
    asked: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer.accept({"name": "Ada Lovelace", "check": True})

    model = ScriptedModel([call("trigger-elicitation-request", {}), "done"])
    async with Agent(model, tools=[everything(on_elicit=answer)]) as agent:
        result = await agent.run("ask me")
    (request,) = asked
    assert request.mode == "form" and request.schema is not None
    assert request.schema["required"] == ["name"]
    text, failed = tool_results(result)["trigger-elicitation-request"]
    assert not failed and "- Name: Ada Lovelace" in text and "- Agreed to terms: true" in text


async def test_an_elicitation_answer_that_breaks_the_schema_is_not_sent() -> None:
    model = ScriptedModel([call("trigger-elicitation-request", {}), "done"])
    bad = everything(on_elicit=lambda request: ElicitationAnswer.accept({"integer": "many"}))
    async with Agent(model, tools=[bad]) as agent:
        result = await agent.run("ask me")
    text, failed = tool_results(result)["trigger-elicitation-request"]
    assert failed and "does not fit the requested schema" in text
    assert '"name" is a required property' in text and 'integer: "many" is not of' in text


async def test_elicitation_declined_and_without_a_callback() -> None:
    model = ScriptedModel([call("trigger-elicitation-request", {}), "done"])
    async with Agent(model, tools=[everything(
            on_elicit=lambda request: ElicitationAnswer.decline())]) as agent:
        result = await agent.run("ask me")
    assert "User declined" in tool_results(result)["trigger-elicitation-request"][0]
    async with everything() as plain:  # no callback: the server is told none is offered
        assert "trigger-elicitation-request" not in {t.name for t in await plain.get_tools()}
        assert "trigger-sampling-request" not in {t.name for t in await plain.get_tools()}


async def test_sampling_served_by_the_runs_model_and_counted() -> None:
    model = ScriptedModel([call("trigger-sampling-request", {"prompt": "say hi",
                                                             "maxTokens": 5000}),
                           "Hi from the sampled model.", "The server heard me."])
    async with Agent(model, tools=[everything(sampling=Sampling(max_tokens=64))]) as agent:
        result = await agent.run("sample")
    assert result.output == "The server heard me."
    text, failed = tool_results(result)["trigger-sampling-request"]
    assert not failed and '"text": "Hi from the sampled model."' in text
    sampled = model.requests[1]
    assert sampled.message_count == 2  # the server's system prompt and its user message
    assert sampled.last_message.text.endswith("context: say hi")
    assert sampled.settings.max_tokens == 64  # the server asked 5000: capped
    assert not sampled.settings.tools
    assert result.usage.requests == 3  # the sampling request counts in the run's usage
    # ... once: a step nested under the call in flight, its usage in that call's step
    (record,) = result.trace.tool_calls
    (step,) = record.sampling
    assert step.thought == "Hi from the sampled model." and step.model == model.name
    assert step.usage.requests == 1 and step.iteration == record.iteration == 1
    total = Usage()
    for each in result.trace.steps:
        total.add(each.usage)
    assert total == result.usage == result.trace.usage
    assert result.trace.steps[0].usage.requests == 2  # its own request and the sampled one
    again = Trace.from_json(result.trace.to_json())
    assert again.tool_calls[0].sampling == record.sampling
    assert "sampling by scripted: Hi from the sampled model." in result.trace.render()
    from toolcycle.tracing.html import render_html

    assert "Sampling by scripted" in render_html(result.trace)


async def test_a_sampled_request_is_priced_like_the_runs_own() -> None:
    """A sampling request served by a paid model used to cost nothing in the run's usage."""
    from toolcycle import Price

    price = Price("1000", "2000")
    model = ScriptedModel([call("trigger-sampling-request", {"prompt": "say hi"}),
                           "Hi from the sampled model.", "The server heard me."], price=price)
    async with Agent(model, tools=[everything(sampling=Sampling(max_tokens=64))]) as agent:
        result = await agent.run("sample")
    (record,) = result.trace.tool_calls
    (sampled,) = record.sampling
    assert sampled.usage.cost == price.cost(sampled.usage) > 0
    # counted once, in the step of the call it served (prices are linear in tokens)
    assert result.usage.cost == sum(price.cost(s.usage) for s in result.trace.steps)


async def test_sampling_bounded_per_run() -> None:
    model = ScriptedModel([call("trigger-sampling-request", {"prompt": "one"}), "sampled",
                           call("trigger-sampling-request", {"prompt": "two"}), "done"])
    async with Agent(model, tools=[everything(sampling=Sampling(max_requests=1))]) as agent:
        result = await agent.run("sample twice")
    assert result.usage.requests == 4  # 3 turns and 1 sampling: the second was refused
    (_, second) = [p for m in result.messages for p in m.parts if p.kind == "tool_result"]
    assert second.is_error and "the limit of 1 request(s) per run is reached" in second.content


async def test_sampling_with_a_fixed_model_outside_any_run() -> None:
    fixed = ScriptedModel(["fixed model's words"])
    async with everything(sampling=Sampling(model=fixed)) as server:
        tools = {t.name: t for t in await server.get_tools()}
        from toolcycle.context import CancelToken, RunContext

        ctx: RunContext[None] = RunContext(deps=None, usage=Usage(), cancel_token=CancelToken())
        text = await tools["trigger-sampling-request"].invoke(ctx, {"prompt": "x"})
    assert "fixed model's words" in text


def test_bad_options_listed_at_construction() -> None:
    with pytest.raises(ConfigurationError) as caught:
        everything(on_elicit="yes", sampling=object(), resource_tools=1)
    text = str(caught.value)
    assert "on_elicit must be a callable" in text and "sampling must be a" in text
    assert "resource_tools must be True or False" in text
    with pytest.raises(ConfigurationError, match="max_requests must be an integer >= 1"):
        Sampling(max_requests=0)


PNG_B64 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAAB"
           "JRU5ErkJggg==")


def _image_request() -> object:
    import mcp.types as types

    return types.CreateMessageRequestParams(max_tokens=50, messages=[types.SamplingMessage(
        role="user", content=[types.TextContent(type="text", text="What is this?"),
                              types.ImageContent(type="image", data=PNG_B64,
                                                 mime_type="image/png")])])


async def test_sampling_passes_an_image_to_the_model_or_says_why_not() -> None:
    """The SDK's own request types through the sampling callback: a model that takes media
    gets the picture as a media part; a text model's refusal is the server's error."""
    import base64

    import mcp.types as types

    from toolcycle.mcp.server_requests import InFlight, sampling_callback
    from toolcycle.media import MediaPart
    from toolcycle.models.text.protocol import JsonToolsModel

    seeing = ScriptedModel(["A dot."])
    served = await sampling_callback("test", Sampling(model=seeing), InFlight())(
        None, _image_request())
    assert isinstance(served, types.CreateMessageResult) and served.content.text == "A dot."
    assert seeing.requests[0].last_message.parts[1] == MediaPart(
        base64.b64decode(PNG_B64), "image/png")
    blind = JsonToolsModel(ScriptedModel(["never asked"]))
    refused = await sampling_callback("test", Sampling(model=blind), InFlight())(
        None, _image_request())
    assert isinstance(refused, types.ErrorData) and "cannot take image input" in refused.message

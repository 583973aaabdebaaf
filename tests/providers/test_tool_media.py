"""A tool that returns an image or a PDF: the model sees it, on every cloud wire, in that
provider's own form for tool results, through the official SDK and the checking server
(tests/providers/media_wire.py validates each against the SDK's types: an image in a Chat
Completions ``tool`` message, or a ``tool_result`` block of a kind the API refuses, fails
there). Text models read the media's names; the trace and the viewer keep digests only; a
snapshot keeps the bytes a resumed run needs."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from toolcycle import Agent, ApprovalRequest, Approve, Defer, Limits, RunContext, tool
from toolcycle.media import MediaPart
from toolcycle.messages import Message, ToolResult
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.testing import ScriptedModel, call

from . import media_wire
from .conftest import functions_model, openai_model
from .script import Call, Reply
from .server import ProviderServer
from .test_media_inputs import DOCUMENT, IMAGE, PDF, PNG, WAV, WIRES, wire

__all__ = ["wire"]  # the parametrised fixture, shared with the prompt media tests

CLIP = MediaPart(WAV, "audio/wav", "click.wav")


@tool
def screenshot() -> list[object]:
    """Take a screenshot of the dashboard and export its report."""
    return ["The dashboard:", IMAGE, {"rows": 3}, DOCUMENT]


@tool
def chart() -> MediaPart:
    """Draw the chart."""
    return IMAGE


def _tool_turn(server: ProviderServer) -> None:
    server.script([Reply(calls=[Call("screenshot", {}, id="call_1")]),
                   Reply(text="A dot and a report.")])


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_tools_image_and_pdf_in_each_providers_form(server: ProviderServer, wire: str,
                                                            streamed: bool) -> None:
    media_wire.received.clear()
    _tool_turn(server)
    agent = Agent(WIRES[wire](server), tools=[screenshot])
    if streamed:
        events = agent.stream("Look at the dashboard")
        [_ async for _ in events]
        assert events.result is not None
        result = events.result
    else:
        result = await agent.run("Look at the dashboard")
    assert result.output == "A dot and a report."
    assert media_wire.received == [("image", "image/png", PNG),
                                   ("document", "application/pdf", PDF)]
    (answer,) = result.messages[-2].results
    assert answer.media == (IMAGE, DOCUMENT)
    assert answer.content == (f'The dashboard:\n{IMAGE.describe()}\n{{"rows": 3}}\n'
                              f"{DOCUMENT.describe()}")


def test_the_exact_tool_result_forms() -> None:
    """What each adapter writes for a result with media (the servers check it against the
    SDK types); audio goes only where the wire takes it (Chat Completions' user message)."""
    from toolcycle.models._media_wire import (
        anthropic_result_content,
        gemini_response_parts,
        openai_chat_tool_media,
        responses_output,
    )

    result = ToolResult("call_1", "screenshot", "see", media=(IMAGE, CLIP))
    png64 = base64.b64encode(PNG).decode()
    assert openai_chat_tool_media(Message.tool_results([result])) == [{"role": "user", "content": [
        {"type": "text", "text": "Returned by `screenshot` (call call_1):"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png64}"}},
        {"type": "input_audio", "input_audio": {"data": base64.b64encode(WAV).decode(),
                                                "format": "wav"}}]}]
    assert responses_output(result) == [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png64}", "detail": "auto"}]
    assert anthropic_result_content(result) == [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": png64}}]
    assert gemini_response_parts(result) == [
        {"inline_data": {"mime_type": "image/png", "data": PNG}}]
    plain = ToolResult("call_2", "x", "text only")
    assert openai_chat_tool_media(Message.tool_results([plain])) == []
    assert responses_output(plain) == anthropic_result_content(plain) == "text only"


async def test_openai_chat_answers_each_call_once_then_shows_the_media(
        server: ProviderServer) -> None:
    """Chat Completions: ``tool`` messages take text only, so every call is answered by its
    tool message first and the media follow in one user message naming the calls."""
    server.script([Reply(calls=[Call("screenshot", {}, id="call_1"), Call("chart", {},
                                                                         id="call_2")]),
                   Reply(text="Seen.")])
    result = await Agent(openai_model(server), tools=[screenshot, chart]).run("Look")
    assert result.output == "Seen."
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent][-3:] == ["tool", "tool", "user"]
    tool_messages = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2"]
    assert all(isinstance(m["content"], str) for m in tool_messages)
    follow_up = sent[-1]["content"]
    assert [p["type"] for p in follow_up] == ["text", "image_url", "file", "text", "image_url"]
    assert follow_up[0]["text"] == "Returned by `screenshot` (call call_1):"
    assert follow_up[3]["text"] == "Returned by `chart` (call call_2):"


async def test_legacy_functions_mode_shows_the_media_after_the_answers(
        server: ProviderServer) -> None:
    media_wire.received.clear()
    server.script([Reply(calls=[Call("chart", {})]), Reply(text="Seen.")])
    result = await Agent(functions_model(server), tools=[chart]).run("Draw")
    assert result.output == "Seen."
    assert [m["role"] for m in server.requests[-1].body["messages"]][-2:] == [
        "function", "user"]
    assert media_wire.received == [("image", "image/png", PNG)]


async def test_the_checking_servers_refuse_media_where_the_api_does(
        server: ProviderServer) -> None:
    """The fake server is strict: an image inside a Chat Completions tool message (text parts
    only, per the SDK's ``ChatCompletionToolMessageParam``) is refused as the service would."""
    from openai import AsyncOpenAI, BadRequestError

    client = AsyncOpenAI(api_key="sk-test", base_url=server.openai_url)
    png64 = base64.b64encode(PNG).decode()
    server.script([Reply(text="never")])
    with pytest.raises(BadRequestError, match="tool message takes text parts only"):
        await client.chat.completions.create(model="gpt-4o-mini", messages=[
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": [  # type: ignore[list-item]
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png64}"}}]},
        ])
    assert server.take_rejections() == [
        "openai: messages[2].content: a tool message takes text parts only"]


async def test_audio_a_wire_cannot_take_is_named_not_sent(server: ProviderServer,
                                                          wire: str) -> None:
    @tool
    def record() -> list[object]:
        """Record a click."""
        return ["recorded", CLIP]

    media_wire.received.clear()
    server.script([Reply(calls=[Call("record", {})]), Reply(text="A click.")])
    result = await Agent(WIRES[wire](server), tools=[record]).run("Record")
    assert result.output == "A click."
    assert media_wire.received == ([("audio", "audio/wav", WAV)] if wire == "openai" else [])
    assert CLIP.describe() in json.dumps(server.requests[-1].body)


async def test_a_text_model_reads_the_media_names() -> None:
    """A text protocol cannot take the picture: the run goes on, the model reads its name."""
    inner = ScriptedModel(['{"tool": "chart", "arguments": {}}', '{"answer": "a chart"}'])
    result = await Agent(JsonToolsModel(inner), tools=[chart]).run("Draw")
    assert result.output == "a chart"
    assert IMAGE.describe() in inner.requests[-1].last_message.text


async def test_trace_and_viewer_keep_digests_never_bytes() -> None:
    from toolcycle.tracing.html import render_html

    result = await Agent(ScriptedModel([call("screenshot"), "ok"]), tools=[screenshot]).run("x")
    (record,) = result.trace.tool_calls
    assert record.media == [IMAGE.summary(), DOCUMENT.summary()]
    stored = result.trace.to_json()
    page = render_html(result.trace)
    for blob in (base64.b64encode(PNG).decode(), base64.b64encode(PDF).decode()):
        assert blob not in stored and blob not in page
    assert "Media returned" in page and f"sha256 {IMAGE.digest[:16]}, dot.png" in page
    # the history keeps the bytes: passed back, the model still sees the picture
    again = Message.from_dict(result.messages[-2].to_dict())
    assert again.results[0].media == (IMAGE, DOCUMENT)


async def test_caps_limits_and_nested_media() -> None:
    """At most 8 parts go with one result (the rest named, marked not sent); the text obeys
    max_observation_chars; a part nested in a structure is named, not sent."""

    @tool
    def album() -> list[MediaPart]:
        """Ten pictures."""
        return [IMAGE] * 10

    @tool
    def nested() -> dict[str, object]:
        """A picture inside a structure."""
        return {"picture": IMAGE}

    result = await Agent(ScriptedModel([[call("album"), call("nested")], "ok"]),
                         tools=[album, nested], limits=Limits(max_observation_chars=2_000)
                         ).run("x")
    many, inner = result.messages[-2].results
    assert len(many.media) == 8 and many.content.count("(not sent: ") == 2
    assert inner.media == () and IMAGE.describe() in inner.content and not inner.is_error


async def test_a_paused_turn_keeps_a_tools_media_for_the_resumed_run(
        server: ProviderServer) -> None:
    """An approval pauses the turn after the image came back: the snapshot keeps its bytes,
    so the resumed run sends the model the picture it would have seen."""
    @tool(requires_approval=True)
    def delete() -> str:
        """Delete the dashboard."""
        return "deleted"

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Defer:
        return Defer() if request.requires_approval else Approve()

    media_wire.received.clear()
    server.script([Reply(calls=[Call("chart", {}), Call("delete", {})]), Reply(text="Done.")])
    agent = Agent(openai_model(server), tools=[chart, delete], approval=policy)
    paused = await agent.run("Chart it, then delete it")
    assert paused.status == "paused" and media_wire.received == []
    snapshot = json.loads(json.dumps(paused.snapshot))
    (pending,) = paused.pending_approvals
    result = await agent.resume(snapshot, {pending.call_id: True})
    assert result.output == "Done."
    assert media_wire.received == [("image", "image/png", PNG)]
    assert result.messages[-2].results[0].media == (IMAGE,)


def test_the_docs_tool_example_through_the_anthropic_sdk(server: ProviderServer,
                                                         tmp_path: Any) -> None:
    """docs/media.md's samples as pasted, in order (the first writes dot.png): the tool's
    picture reaches the checking Anthropic server inside the tool_result."""
    import re
    from pathlib import Path

    from doc_scripts import reader_env, run_script

    page = Path(__file__).resolve().parents[2] / "docs" / "media.md"
    prompt_example, tool_example = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    server.script([Reply(text="Seen."),
                   Reply(calls=[Call("screenshot", {"page": "home"})]), Reply(text="Black.")])
    env = reader_env(OPENAI_API_KEY="sk-docs", OPENAI_BASE_URL=server.openai_url,
                     ANTHROPIC_API_KEY="sk-ant-docs", ANTHROPIC_BASE_URL=server.url)
    run_script(prompt_example, tmp_path, "prompt_sample.py", env)
    media_wire.received.clear()
    printed = run_script(tool_example, tmp_path, "tool_sample.py", env).splitlines()
    assert printed == ["Black.", "The home page:", IMAGE.describe(), "image/png"]
    assert media_wire.received == [("image", "image/png", PNG)]
    result_block = server.requests[-1].body["messages"][-1]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["content"][1]["type"] == "image"
    assert f"`{IMAGE.describe()}`" in page.read_text()


async def test_a_damaged_snapshot_media_part_is_named(server: ProviderServer) -> None:
    """A snapshot is untrusted input: a paused answer's media that do not decode is one
    listed problem (SnapshotError), not a traceback."""
    from toolcycle.errors import SnapshotError
    from toolcycle.run.snapshot import seal

    @tool(requires_approval=True)
    def delete() -> str:
        """Delete the dashboard."""
        return "deleted"

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve | Defer:
        return Defer() if request.requires_approval else Approve()

    server.script([Reply(calls=[Call("chart", {}), Call("delete", {})])])
    agent = Agent(openai_model(server), tools=[chart, delete], approval=policy)
    paused = await agent.run("Chart it, then delete it")
    snapshot = json.loads(json.dumps(paused.snapshot))
    (answer,) = snapshot["turn"]["answers"].values()
    answer["media"][0]["data"] = "not base64!"
    snapshot = seal({k: v for k, v in snapshot.items()  # sealed again: damage, not tampering
                     if k not in ("format", "version", "integrity")}, None)
    with pytest.raises(SnapshotError, match=r"turn\.answers\[.*\]\.media\[0\]"):
        await agent.resume(snapshot, {paused.pending_approvals[0].call_id: True})


def test_compaction_drops_a_results_media_first() -> None:
    from toolcycle.run.compaction import _stub

    stub = _stub(ToolResult("c1", "chart", "short", media=(IMAGE,)))
    assert stub.media == () and "1 media part(s) the tool returned no longer sent" in (
        stub.content)


async def test_the_trace_store_keeps_digests_and_sampling_not_bytes(tmp_path: Any) -> None:
    """Saved and read back from the SQLite trace store: the media summaries survive, the
    bytes were never there."""
    import sqlite3

    from toolcycle.tracing.store import TraceStore

    result = await Agent(ScriptedModel([call("screenshot"), "ok"]), tools=[screenshot]).run("x")
    with TraceStore(tmp_path / "traces.db") as store:
        store.save(result.trace)
        again = store.get(result.run_id)
    assert again is not None
    assert again.tool_calls[0].media == [IMAGE.summary(), DOCUMENT.summary()]
    raw = sqlite3.connect(tmp_path / "traces.db").execute(
        "select group_concat(cast(data as text)) from steps").fetchone()
    assert raw[0] is not None and base64.b64encode(PNG).decode() not in raw[0]


async def test_a_result_guardrail_sees_the_media_and_withholds_them() -> None:
    from toolcycle import tool_guardrail

    seen: list[tuple[MediaPart, ...]] = []

    @tool_guardrail(on="result")
    def no_pictures(ctx: RunContext[Any], result: ToolResult) -> str | None:
        seen.append(result.media)
        return "pictures are not shown here" if result.media else None

    model = ScriptedModel([call("chart"), "ok"])
    result = await Agent(model, tools=[chart], guardrails=[no_pictures]).run("Draw")
    assert seen == [(IMAGE,)]
    (answer,) = result.messages[-2].results
    assert answer.media == () and answer.is_error and "pictures are not shown" in answer.content
    assert result.trace.tool_calls[0].media is None

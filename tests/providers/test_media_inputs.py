"""An image and a PDF (and, where the API takes it, audio) in a user prompt, through each cloud
wire's official SDK and the checking server, which validates every part against the SDK's own
request types (tests/providers/media_wire.py) and records the bytes it decoded; text models
refuse media with a clear error; the trace keeps a digest, never the bytes."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.media import MediaError, MediaPart, UnsupportedMedia
from toolcycle.messages import Message
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.testing import ScriptedModel

from . import media_wire
from .conftest import anthropic_model, gemini_model, openai_model, responses_model
from .script import Reply
from .server import ProviderServer

#: A real 1x1 PNG and a minimal one-page PDF.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]"
       b"/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj\n"
       b"trailer<</Root 1 0 R>>\n%%EOF\n")
WAV = b"RIFF$\x00\x00\x00WAVEfmt " + bytes(28)

IMAGE = MediaPart(PNG, "image/png", "dot.png")
DOCUMENT = MediaPart(PDF, "application/pdf", "report.pdf")

WIRES: dict[str, Callable[..., Model]] = {
    "openai": openai_model, "responses": responses_model, "anthropic": anthropic_model,
    "gemini": gemini_model,
}


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_image_and_a_pdf_in_each_providers_form(server: ProviderServer, wire: str,
                                                         streamed: bool) -> None:
    media_wire.received.clear()
    server.script([Reply(text="A dot and a report.")])
    model = WIRES[wire](server)
    prompt = Message.user("What are these?", IMAGE, DOCUMENT)
    if streamed:
        items = [item async for item in model.stream([prompt], ModelSettings())]
        reply = items[-1].message  # type: ignore[union-attr]
    else:
        reply = await model.request([prompt], ModelSettings())
    assert reply.text == "A dot and a report."
    assert media_wire.received == [("image", "image/png", PNG),
                                   ("document", "application/pdf", PDF)]
    body = json.dumps(server.requests[-1].body)
    assert "What are these?" in body


def test_the_exact_wire_forms() -> None:
    """What each adapter writes, field by field (the servers check them against the SDKs)."""
    from toolcycle.models._media_wire import (
        anthropic_block,
        gemini_part,
        openai_chat_content,
        responses_content,
    )

    prompt = Message.user("Look", IMAGE, DOCUMENT)
    png64, pdf64 = base64.b64encode(PNG).decode(), base64.b64encode(PDF).decode()
    assert openai_chat_content(prompt) == [
        {"type": "text", "text": "Look"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png64}"}},
        {"type": "file", "file": {"filename": "report.pdf",
                                  "file_data": f"data:application/pdf;base64,{pdf64}"}}]
    assert responses_content(prompt) == [
        {"type": "input_text", "text": "Look"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png64}", "detail": "auto"},
        {"type": "input_file", "filename": "report.pdf",
         "file_data": f"data:application/pdf;base64,{pdf64}"}]
    assert anthropic_block(DOCUMENT) == {"type": "document", "source": {
        "type": "base64", "media_type": "application/pdf", "data": pdf64}}
    assert gemini_part(IMAGE) == {"inline_data": {"mime_type": "image/png", "data": PNG}}
    audio = openai_chat_content(Message.user("Hear", MediaPart(WAV, "audio/wav")))
    assert audio[1] == {"type": "input_audio", "input_audio": {
        "data": base64.b64encode(WAV).decode(), "format": "wav"}}


async def test_audio_through_openai_chat(server: ProviderServer) -> None:
    media_wire.received.clear()
    server.script([Reply(text="A click.")])
    reply = await openai_model(server).request(
        [Message.user("Hear this", MediaPart(WAV, "audio/wav"))], ModelSettings())
    assert reply.text == "A click." and media_wire.received == [("audio", "audio/wav", WAV)]


@pytest.mark.parametrize("wire_name", ["anthropic", "responses"])
async def test_audio_refused_where_the_api_takes_none(server: ProviderServer,
                                                      wire_name: str) -> None:
    model = WIRES[wire_name](server)
    with pytest.raises(UnsupportedMedia, match="cannot take audio input"):
        await model.request([Message.user("Hear", MediaPart(WAV, "audio/wav"))],
                            ModelSettings())
    assert not server.requests  # refused before anything was sent


async def test_text_protocols_refuse_media_before_asking() -> None:
    inner = ScriptedModel(["never asked"])
    model = JsonToolsModel(inner)
    with pytest.raises(UnsupportedMedia, match=r"cannot take image input .*takes only text"):
        await model.request([Message.user("What is this?", IMAGE)], ModelSettings())
    with pytest.raises(UnsupportedMedia):
        [_ async for _ in model.stream([Message.user("and this?", DOCUMENT)], ModelSettings())]
    assert not inner.requests


async def test_a_run_with_an_image_keeps_only_its_digest_in_the_trace() -> None:
    model = ScriptedModel(["A dot."])
    result = await Agent(model).run(message_history=[Message.user("What is it?", IMAGE)])
    assert result.output == "A dot."
    stored = result.trace.to_json()
    assert base64.b64encode(PNG).decode() not in stored
    assert result.trace.metadata["media"] == [{
        "media_type": "image/png", "bytes": len(PNG), "sha256": IMAGE.digest, "name": "dot.png"}]
    # the history itself keeps the bytes: a conversation passed back is whole
    again = Message.from_dict(result.messages[0].to_dict())
    assert again.parts[1] == IMAGE


def test_bad_media_parts_say_what_is_wrong(tmp_path: Any) -> None:
    with pytest.raises(MediaError, match="media type 'image/bmp' is not one of"):
        MediaPart(b"BM", "image/bmp")
    with pytest.raises(MediaError, match="data is empty"):
        MediaPart(b"", "image/png")
    (tmp_path / "notes.unknownext").write_bytes(b"x")
    with pytest.raises(MediaError, match="cannot tell the media type"):
        MediaPart.from_file(tmp_path / "notes.unknownext")
    (tmp_path / "dot.png").write_bytes(PNG)
    assert MediaPart.from_file(tmp_path / "dot.png") == IMAGE
    assert IMAGE.describe() == f"[image: image/png, {len(PNG)} bytes, sha256 {IMAGE.digest[:16]}]"


def test_the_docs_example_through_the_openai_sdk(server: ProviderServer, tmp_path: Any) -> None:
    """docs/media.md's example as pasted, against the checking server (OPENAI_BASE_URL)."""
    import re
    from pathlib import Path

    from doc_scripts import reader_env, run_script

    page = Path(__file__).resolve().parents[2] / "docs" / "media.md"
    example = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)[0]
    media_wire.received.clear()
    server.script([Reply(text="A dot, and an empty report.")])
    env = reader_env(OPENAI_API_KEY="sk-docs", OPENAI_BASE_URL=server.openai_url)
    printed = run_script(example, tmp_path, "media_sample.py", env).splitlines()
    assert [kind for kind, _, _ in media_wire.received] == ["image", "document"]
    png, pdf = media_wire.received[0][2], media_wire.received[1][2]
    import hashlib

    assert printed == ["A dot, and an empty report.",
                       f"image/png {len(png)} {hashlib.sha256(png).hexdigest()[:12]}",
                       f"application/pdf {len(pdf)} {hashlib.sha256(pdf).hexdigest()[:12]}"]
    assert png == PNG


def test_the_docs_describe_line_is_the_real_one() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "media.md").read_text()
    assert f"`{IMAGE.describe()}`" in page


async def test_the_viewer_shows_the_media_by_digest_not_bytes() -> None:
    from toolcycle.tracing.html import render_html

    result = await Agent(ScriptedModel(["A dot."])).run(
        message_history=[Message.user("What is it?", IMAGE)])
    page = render_html(result.trace)
    assert f"image/png, {len(PNG)} bytes, sha256 {IMAGE.digest[:16]}, dot.png" in page
    assert base64.b64encode(PNG).decode() not in page
    # a stored trace whose media entries are not what a run records still renders
    result.trace.metadata["media"] = [{"bytes": "many"}, "junk", {"media_type": "<b>"}]
    page = render_html(result.trace)
    assert "? bytes" in page and "&lt;b&gt;" in page

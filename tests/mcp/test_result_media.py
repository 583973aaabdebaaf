"""An MCP tool result's images, audio and embedded binary resources become media parts the
model sees (docs/media.md); what toolcycle does not send is described, never dropped, and a
damaged block never ends the run. Built from the official SDK's own result types."""

from __future__ import annotations

import base64

from mcp import types

from toolcycle.mcp.content import observation
from toolcycle.media import MediaPart

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PDF = b"%PDF-1.4\n%%EOF\n"
WAV = b"RIFF$\x00\x00\x00WAVEfmt " + bytes(28)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_images_audio_and_blobs_become_media_parts() -> None:
    result = types.CallToolResult(content=[
        types.TextContent(type="text", text="Here:"),
        types.ImageContent(type="image", data=b64(PNG), mimeType="image/png"),
        types.AudioContent(type="audio", data=b64(WAV), mimeType="audio/wav"),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///reports/q3.pdf", blob=b64(PDF), mimeType="application/pdf")),
    ])
    assert observation(result) == ["Here:", MediaPart(PNG, "image/png"),
                                   MediaPart(WAV, "audio/wav"),
                                   MediaPart(PDF, "application/pdf", "q3.pdf")]


def test_what_is_not_sent_is_described() -> None:
    result = types.CallToolResult(content=[
        types.ImageContent(type="image", data=b64(b"<svg/>"), mimeType="image/svg+xml"),
        types.ImageContent(type="image", data="not base64!", mimeType="image/png"),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///a.zip", blob=b64(b"PK"), mimeType="application/zip")),
    ])
    text = observation(result)
    assert text == ("[image: image/svg+xml, 6 bytes]\n"
                    "[image: image/png, 11 characters of undecodable base64]\n"
                    "[resource <file:///a.zip>, application/zip, 2 bytes]")


def test_an_error_result_with_an_image_is_one_error_observation() -> None:
    import pytest

    from toolcycle.mcp.connection import MCPToolError

    result = types.CallToolResult(isError=True, content=[
        types.TextContent(type="text", text="render failed"),
        types.ImageContent(type="image", data=b64(PNG), mimeType="image/png"),
    ])
    with pytest.raises(MCPToolError, match=r"render failed\n\[image: image/png, 70 bytes\]"):
        observation(result)

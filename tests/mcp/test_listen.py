"""Resource subscriptions on servers of the 2026-07-28 protocol, where ``resources/subscribe``
is gone and updates come on a ``subscriptions/listen`` stream (toolcycle.mcp.listen), against
servers built on the official SDK's ``MCPServer``, which speaks that protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import PYTHON, SDK_EXAMPLE

from toolcycle import Agent
from toolcycle.mcp import MCPServerError, MCPTools
from toolcycle.testing import ScriptedModel, call

NOTES = str(Path(SDK_EXAMPLE).with_name("sdk_notes_server.py"))
PICKY = str(Path(SDK_EXAMPLE).with_name("picky_listen_server.py"))


def edit(note: str, text: str = "new") -> object:
    return call("edit", {"note": note, "text": text})


async def test_subscribe_and_unsubscribe_on_a_listen_stream() -> None:
    updates: asyncio.Queue[str] = asyncio.Queue()
    notes = MCPTools.stdio(PYTHON, NOTES, on_resource_updated=updates.put_nowait)
    model = ScriptedModel([
        [edit("note-2"), edit("note-1")], "edited",   # only note-1 is subscribed
        [edit("note-1"), edit("note-2")], "edited",   # now only note-2
    ])
    async with Agent(model, tools=[notes]) as agent:
        await notes.subscribe("notes://note-1")
        assert (await notes.read_resource("notes://note-1"))[0].text == "first draft"
        client = await notes._connection.client()
        assert str(client.protocol_version) == "2026-07-28"  # the listen path, not subscribe
        await agent.run("edit both")
        # the server handles the calls in order and its notifications come in order: had the
        # unsubscribed note-2 been announced, it would come first
        assert await asyncio.wait_for(updates.get(), 30) == "notes://note-1"
        await notes.subscribe("notes://note-2")
        await notes.subscribe("notes://note-2")  # again: nothing changes
        await notes.unsubscribe("notes://note-1")
        await agent.run("edit both again")
        assert await asyncio.wait_for(updates.get(), 30) == "notes://note-2"
        assert updates.empty()
        assert notes._connection.resources.uris(client) == {"notes://note-2"}
        await notes.unsubscribe("notes://note-2")
        assert notes._connection.resources.uris(client) == frozenset()
    assert not notes.running


async def test_a_server_that_serves_no_listen_stream_says_so() -> None:
    """A 2026-07-28 server without ``subscriptions/listen``: the subscribe fails with the
    server's refusal, instead of a subscription that silently never fires."""
    notes = MCPTools.stdio(PYTHON, NOTES, "--no-listen", on_resource_updated=lambda uri: None)
    async with notes:
        with pytest.raises(MCPServerError, match=r"resources/subscribe <notes://note-1>"):
            await notes.subscribe("notes://note-1")
        assert "edit" in {t.name for t in await notes.get_tools()}  # the connection serves on


async def test_a_uri_the_server_does_not_acknowledge_is_an_error() -> None:
    """The server acknowledges a subset of the filter: the URI left out fails its subscribe,
    naming it, and the stream goes back to the URIs acknowledged before."""
    picky = MCPTools.stdio(PYTHON, PICKY, on_resource_updated=lambda uri: None)
    async with picky:
        await picky.subscribe("notes://a")
        with pytest.raises(MCPServerError, match=r"did not acknowledge a subscription to "
                                                 r"<other://b>"):
            await picky.subscribe("other://b")
        client = await picky._connection.client()
        assert picky._connection.resources.uris(client) == {"notes://a"}


async def test_a_bad_uri_is_refused_before_anything_is_sent() -> None:
    notes = MCPTools.stdio(PYTHON, NOTES)
    with pytest.raises(ValueError, match="uri must be a non-empty string"):
        await notes.subscribe("")
    assert not notes.running

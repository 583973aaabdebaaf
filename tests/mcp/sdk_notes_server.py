"""An SDK server (``MCPServer``, the SDK's documented decorator style; it speaks the
2026-07-28 protocol) with two notes as resources: ``edit`` changes one and publishes
``notifications/resources/updated`` for it, which reaches clients only on their
``subscriptions/listen`` streams whose filter names that URI. With ``--no-listen`` it serves
no ``subscriptions/listen`` at all (``MCPServer(subscriptions=False)``)."""

import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("Notes", subscriptions=False if "--no-listen" in sys.argv else None)
NOTES = {"note-1": "first draft", "note-2": "second draft"}


@mcp.resource("notes://note-1")
def note_1() -> str:
    """The first note."""
    return NOTES["note-1"]


@mcp.resource("notes://note-2")
def note_2() -> str:
    """The second note."""
    return NOTES["note-2"]


@mcp.tool()
async def edit(note: str, text: str, ctx: Context) -> str:
    """Replace a note's text."""
    NOTES[note] = text
    await ctx.notify_resource_updated(f"notes://{note}")
    return f"{note} edited"


if __name__ == "__main__":
    mcp.run()

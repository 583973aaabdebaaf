"""Tools for examples/hello_goodbye.gram whose goodbye waits: the interrupt test's tools.

``sayGoodbye`` writes the file named by ``$TOOLCYCLE_TEST_MARKER`` when it starts, so the test
sends SIGINT only once the command is inside the tool (no sleeps in the test).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path


def sayHello(personName: str = "world") -> str:
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}!"


async def sayGoodbye(personName: str, tone: str = "warm") -> str:
    """Returns a farewell; this one waits (until the run is cancelled)."""
    Path(os.environ["TOOLCYCLE_TEST_MARKER"]).write_text("started")
    await asyncio.sleep(600)
    return f"Goodbye, {personName}."

"""The stdio transport: a server started as a subprocess in a process group of its own.

Why not the SDK's ``stdio_client``: three things a hostile or careless server does would cost
the run, or the machine, there.

- **Its children.** A server that exits when its stdin closes (as it should) leaves the
  processes it started running: the SDK kills the process group only when the server itself
  does not exit in time. Here the server is the leader of a new session, and when it has
  stopped, whatever is left of its group is sent SIGTERM, then SIGKILL after a grace period.
  (A child that starts a session of its own leaves the group; nothing short of a cgroup
  follows it.)
- **Its stderr.** The SDK writes it to a file it is given; kept for the error messages, that
  file grew with everything a chatty server wrote. Here a task reads it as it comes and keeps
  only the last :data:`STDERR_TAIL_BYTES` in memory (:class:`StderrTail`).
- **A line without end.** stdout is read in chunks and cut into lines; a line longer than
  ``max_line_bytes`` is dropped as it streams in and reported as one unreadable message (the
  waiting call fails with it) instead of being buffered without bound.

Messages go in and out as the SDK's :class:`~mcp.shared.message.SessionMessage` over the
same in-memory streams its own transports yield, so ``mcp.Client`` runs over this unchanged.
Windows has no process groups: there the SDK's transport is used (see :mod:`.tools`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

#: The end of a server's stderr that is kept, to quote when it fails.
STDERR_TAIL_BYTES = 8192
#: The longest stdout line read as a message (a bigger one is dropped and reported).
MAX_LINE_BYTES = 64 * 1024 * 1024
#: Seconds a server has to exit after its stdin closes, before its group gets SIGTERM.
EXIT_GRACE = 2.0
#: Seconds the group has after SIGTERM, before SIGKILL.
TERM_GRACE = 2.0
_POLL = 0.02


class StderrTail:
    """The last ``limit`` bytes a server wrote to stderr (a ring, never more in memory)."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        #: Every byte seen since the last :meth:`clear`, kept or not.
        self.seen = 0

    def feed(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        if len(chunk) >= self.limit:
            self._chunks.clear()
            chunk, self._size = chunk[-self.limit:], 0
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) >= self.limit:
            self._size -= len(self._chunks.popleft())

    def clear(self) -> None:
        self._chunks.clear()
        self._size = self.seen = 0

    def text(self, chars: int) -> str:
        """The last ``chars`` characters, stripped (a cut multi-byte character replaced)."""
        kept = b"".join(self._chunks)[-self.limit:]  # (whole chunks are kept: cut the first)
        return kept.decode("utf-8", "replace")[-chars:].strip()


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """What starts a stdio server: the command, its arguments, its environment and folder."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None


@asynccontextmanager
async def stdio_transport(server: ServerCommand, stderr: StderrTail,
                          max_line_bytes: int = MAX_LINE_BYTES) -> AsyncIterator[Any]:
    """Start ``server`` and yield the SDK's (read, write) streams; when the block ends the
    server and every process left in its group have ended (or been killed)."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    stderr.clear()
    process = await anyio.open_process(
        [server.command, *server.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**get_default_environment(), **server.env},
        cwd=server.cwd, start_new_session=True)
    group = process.pid  # a session leader: its process group has its pid
    stopped = False
    try:
        incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
        out_done, err_done = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_stdout, process, incoming, max_line_bytes, out_done)
            tasks.start_soon(_write_stdin, process, outgoing, incoming)
            tasks.start_soon(_read_stderr, process, stderr, err_done)
            abandoned = False
            try:
                yield read_stream, write_stream
            except BaseException:  # a start cancelled, timed out or failed: no grace to give
                abandoned = True
                raise
            finally:
                read_stream.close()  # the reader drains stdout from now on: a server blocked
                write_stream.close()  # writing it could not see its stdin close
                with anyio.CancelScope(shield=True):
                    await _stop(process, group, abandoned)
                    # The group is gone, so both pipes end: read to their end, and the event
                    # loop closes its pipe transport itself (left open, it complains when
                    # collected after the loop closed). A process that left the group may
                    # hold them: then the wait ends at the grace period.
                    with anyio.move_on_after(TERM_GRACE):
                        await out_done.wait()
                        await err_done.wait()
                    await _release(process)
                stopped = True
                tasks.cancel_scope.cancel()
    finally:  # a failure before the tasks started (or a cancel) must not leak the group
        if not stopped:
            with anyio.CancelScope(shield=True):
                await _stop(process, group, abandoned=True)
                await _release(process)


async def _read_stdout(process: Any, incoming: Any, max_line_bytes: int, done: Any) -> None:
    try:
        await _read_lines(process, incoming, max_line_bytes)
    finally:
        done.set()


async def _read_lines(process: Any, incoming: Any, max_line_bytes: int) -> None:
    """stdout, cut into lines, each parsed as one JSON-RPC message (or an exception the
    session hands to the message handler: the waiting call then fails at once); read to its
    end, the lines dropped once the session stops reading."""
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    buffer = bytearray()
    dropping = False  # inside a line that grew past the limit
    listening = True  # until the session stops reading: then stdout is only drained
    async with incoming:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError, OSError):
            async for chunk in process.stdout:
                if not listening:
                    continue
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line, buffer = bytes(buffer[:end]), buffer[end + 1:]
                    if dropping:
                        dropping = False
                        continue
                    if not line.strip():
                        continue
                    try:
                        message: Any = SessionMessage(jsonrpc_message_adapter.validate_json(
                            line, by_name=False))
                    except ValueError as exc:
                        message = exc
                    listening = await _deliver(incoming, message)
                    if not listening:
                        break
                if len(buffer) > max_line_bytes and not dropping:
                    dropping = True
                    buffer.clear()
                    listening = listening and await _deliver(incoming, ValueError(
                        f"the server wrote a line longer than {max_line_bytes} bytes; dropped"))
                elif dropping:
                    buffer.clear()


async def _deliver(incoming: Any, message: Any) -> bool:
    """Hand one message to the session; ``False`` once it has stopped reading."""
    try:
        await incoming.send(message)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        return False
    return True


async def _write_stdin(process: Any, outgoing: Any, incoming: Any) -> None:
    try:
        async with outgoing:
            async for message in outgoing:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send((data + "\n").encode())
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        await incoming.aclose()  # the server stopped reading: calls see the connection end


async def _read_stderr(process: Any, tail: StderrTail, done: Any) -> None:
    try:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                tail.feed(chunk)
    finally:
        done.set()


async def _stop(process: Any, group: int, abandoned: bool) -> None:
    """Close stdin; give the server :data:`EXIT_GRACE` to exit; then SIGTERM what is left of
    its group (the server, or the children it leaves), and SIGKILL after
    :data:`TERM_GRACE`. Every wait is bounded. An ``abandoned`` server (its start was
    cancelled, timed out or failed: the caller is not waiting for a polite exit) has its
    group killed at once."""
    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    if abandoned:
        _signal_group(group, signal.SIGKILL)
        await _wait(lambda: process.returncode is not None, TERM_GRACE)
        return
    await _wait(lambda: process.returncode is not None, EXIT_GRACE)
    if _signal_group(group, signal.SIGTERM):
        # (a killed orphan stays in the group until init reaps it: SIGKILL then is harmless)
        gone = await _wait(lambda: process.returncode is not None and not _group_alive(group),
                           TERM_GRACE)
        if not gone:
            _signal_group(group, signal.SIGKILL)
            await _wait(lambda: process.returncode is not None, TERM_GRACE)


async def _release(process: Any) -> None:
    """Let go of the pipes, and let the event loop see the exit (bounded)."""
    for stream in (process.stdout, process.stderr):
        with contextlib.suppress(Exception):
            await stream.aclose()
    with anyio.move_on_after(TERM_GRACE):
        await process.wait()


async def _wait(done: Any, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        while not done():
            await anyio.sleep(_POLL)
        return True
    return bool(done())


def _signal_group(group: int, signum: int) -> bool:
    """Whether the group had a process to signal."""
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_alive(group: int) -> bool:
    """Whether a process (not yet reaped) is left in the group."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True

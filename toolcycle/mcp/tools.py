"""``MCPTools``: one MCP server's tools, usable wherever tools are accepted.

    agent = Agent(model, tools=[MCPTools.stdio("python", "-m", "mcp_server_time"), my_tool])

It is a :class:`~toolcycle.tools.Toolset`: the agent asks for its tools before each model
request, so they are :class:`~toolcycle.tools.Tool` objects like any other (arguments validated
against the server's ``inputSchema`` before anything is sent, ``max_calls`` and the run's
limits applied, events and traces recorded, results truncated to the run's
``max_observation_chars``). The server starts (or is connected to) on the first run, its tools
are listed once and listed again only after it says they changed
(``notifications/tools/list_changed``) or after a restart: the next request, in the same run
too, offers the new list.

Names: MCP allows names that provider APIs reject (``math.factorial``); each tool gets a safe
name from :class:`~toolcycle.spec.formats.names.NameMap` and calls go out under the server's
own name. Schemas are read by :func:`~toolcycle.spec.formats.mcp.import_mcp_tools`, the same
code that imports a saved ``tools/list``; a tool whose schema cannot be used is left out and
said so in :attr:`MCPTools.problems` instead of failing the others.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from ..errors import ConfigurationError
from ..media import MediaPart
from ..spec.formats.mcp import import_mcp_tools
from ..spec.formats.names import OPENAI_NAMES, NameMap
from ..tools import Tool
from .connection import ClientOpener, Connection, SessionWatch
from .content import observation
from .extras import MCPExtras
from .screen import ListingScreen, screened
from .server_requests import InFlight, OnElicit, Sampling, elicitation_callback, sampling_callback
from .stdio import ServerCommand, StderrTail, stdio_transport

logger = logging.getLogger(__name__)

#: Default seconds for a server to start (stdio) or answer the handshake (HTTP).
STARTUP_TIMEOUT = 30.0
#: Default seconds for one call (the tool's timeout: the call is cancelled on the server too).
CALL_TIMEOUT = 120.0


class MCPTools(MCPExtras):
    """The tools of one MCP server (see the module docstring). Build with :meth:`stdio` or
    :meth:`http`; close with ``await tools.close()``, ``async with``, or by closing the agent."""

    def __init__(
        self,
        opener: ClientOpener,
        *,
        describe: str,
        prefix: str = "",
        startup_timeout: float = STARTUP_TIMEOUT,
        call_timeout: float | None = CALL_TIMEOUT,
        max_restarts: int = 3,
        concurrent: bool = False,
        trust_hints: bool = False,
        stderr: StderrTail | None = None,
        session: SessionWatch | None = None,
        screen: ListingScreen | None = None,
        resource_tools: bool = False,
        on_elicit: OnElicit | None = None,
        sampling: Sampling | None = None,
        on_resource_updated: Callable[[str], None] | None = None,
    ) -> None:
        problems = []
        for label, value in (("startup_timeout", startup_timeout), ("call_timeout", call_timeout)):
            if (value is not None or label == "startup_timeout") and not (
                    isinstance(value, int | float) and not isinstance(value, bool)
                    and math.isfinite(value) and value > 0):
                problems.append(f"{label} must be a number of seconds > 0, got {value!r}")
        if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
            problems.append(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
        if not isinstance(prefix, str):
            problems.append(f"prefix must be a string, got {type(prefix).__name__}")
        for label, flag in (("concurrent", concurrent), ("trust_hints", trust_hints),
                            ("resource_tools", resource_tools)):
            if not isinstance(flag, bool):
                problems.append(f"{label} must be True or False, got {flag!r}")
        for label, hook in (("on_elicit", on_elicit), ("on_resource_updated", on_resource_updated)):
            if hook is not None and not callable(hook):
                problems.append(f"{label} must be a callable or None, got {type(hook).__name__}")
        if sampling is not None and not isinstance(sampling, Sampling):
            problems.append(f"sampling must be a toolcycle.mcp.Sampling or None, got "
                            f"{type(sampling).__name__}")
        if problems:
            raise ConfigurationError(problems, subject=f"MCP tools {describe}")
        self.describe = describe
        self.prefix = prefix
        self.call_timeout = call_timeout
        self.concurrent = concurrent
        #: Whether the server's tool annotations are believed (see :func:`hinted_policy`).
        self.trust_hints = trust_hints
        #: Whether the model is offered ``list_resources`` and ``read_resource`` (read-only).
        self.resource_tools = resource_tools
        self._in_flight = InFlight()  # whose tool calls wait on the server (for sampling)
        hooks: dict[str, Any] = {}
        if on_elicit is not None:
            hooks["elicitation_callback"] = elicitation_callback(describe, on_elicit)
        if sampling is not None:
            hooks["sampling_callback"] = sampling_callback(describe, sampling, self._in_flight)
        self.names = NameMap(OPENAI_NAMES)
        #: Tools the server listed that cannot be used (their schema), one line each.
        self.problems: list[str] = []
        self._connection = Connection(
            opener, describe=describe, startup_timeout=float(startup_timeout),
            max_restarts=max_restarts, on_tools_changed=self._tools_changed, stderr=stderr,
            session=session, hooks=hooks,
            on_resource_updated=None if on_resource_updated is None else _guarded(
                on_resource_updated))
        self._screen = screen or ListingScreen()
        self._tools: list[Tool[Any]] | None = None
        self._listed_at_start = 0  # the connection start the tool list came from
        self._stale = True

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MCPTools:
        """A server started as a subprocess, spoken to over its stdin/stdout.

        ``env`` is added to the few variables the SDK passes on (``PATH``, ``HOME``, ...): a
        server does not see the caller's secrets unless they are given here. ``options``:
        ``prefix``, ``startup_timeout``, ``call_timeout``, ``max_restarts``, ``concurrent``,
        ``trust_hints``, ``resource_tools``, ``on_elicit``, ``sampling``,
        ``on_resource_updated`` (docs/mcp.md).
        """
        from mcp import Client, StdioServerParameters

        problems = [] if isinstance(command, str) and command else [
            f"command must be a non-empty string, got {command!r}"]
        problems += [f"argument {a!r} must be a string" for a in args if not isinstance(a, str)]
        if problems:
            raise ConfigurationError(problems, subject="MCP stdio server")
        server = ServerCommand(command, tuple(args), dict(env or {}),
                               None if cwd is None else os.fspath(cwd))
        stderr = StderrTail()  # the end of the server's stderr, quoted when it fails
        screen = ListingScreen()

        def transport() -> AbstractAsyncContextManager[Any]:
            if sys.platform == "win32":  # no process groups: the SDK's transport
                from mcp.client.stdio import stdio_client

                return stdio_client(StdioServerParameters(
                    command=command, args=list(args), env=dict(server.env), cwd=server.cwd))
            return stdio_transport(server, stderr)

        @asynccontextmanager
        async def opener(hooks: Mapping[str, Any]) -> AsyncIterator[Any]:
            async with Client(screened(transport(), screen), **hooks, cache=None) as client:
                yield client

        describe = f"MCP server `{' '.join((command, *args))[:120]}`"
        return cls(opener, describe=describe, stderr=stderr, screen=screen, **options)

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, **options: Any
             ) -> MCPTools:
        """A server reached over streamable HTTP at ``url`` (``http://host:port/mcp``).

        ``headers`` go with every request (an ``Authorization`` header, say). ``options`` as
        for :meth:`stdio`.
        """
        from mcp import Client

        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError([f"url must be an http:// or https:// URL, got {url!r}"],
                                     subject="MCP HTTP server")
        fixed_headers = dict(headers or {})
        session = SessionWatch()
        screen = ListingScreen()

        async def watch(response: Any) -> None:
            session.saw_response(response.status_code,
                                 "mcp-session-id" in response.request.headers)

        @asynccontextmanager
        async def opener(hooks: Mapping[str, Any]) -> AsyncIterator[Any]:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults
            async with (
                httpx2.AsyncClient(headers=fixed_headers, timeout=timeout,
                                   event_hooks={"response": [watch]}) as http,
                Client(screened(streamable_http_client(url, http_client=http), screen),
                       **hooks, cache=None) as client,
            ):
                yield client

        return cls(opener, describe=f"MCP server <{url}>", session=session, screen=screen,
                   **options)

    # -- the toolset protocol -----------------------------------------------------------------

    async def get_tools(self) -> list[Tool[Any]]:
        """The server's tools (the same list object until they change): starts the server
        if it is not running.

        If the server cannot be started or listed, the tools listed before (if any) are kept:
        each call then reaches the model as one error observation with the server's message
        (the connection tries to restart the server per call). With no list ever made it
        raises :class:`~toolcycle.mcp.MCPServerError`, and the agent ends that run at its start
        with :class:`~toolcycle.errors.ToolsUnavailable`, its trace stored.
        """
        if self._tools is not None and not self._stale:
            return self._tools
        self._stale = False
        self._screen.rejected.clear()
        try:  # bounded like a start: a server that never lists is one that never started
            listed: list[dict[str, Any]] = await self._connection.request(
                "tools/list", _list_all, timeout=self._connection.startup_timeout)
        except Exception:
            self._stale = True
            if self._tools is not None:
                return self._tools
            raise
        except BaseException:
            self._stale = True
            raise
        self._listed_at_start = self._connection.starts
        self._tools = self._build(listed)
        if self.resource_tools:
            self._tools += self._resource_tools(self._tools)
        return self._tools

    async def close(self) -> None:
        """Stop the server (a stdio server's process has ended when this returns)."""
        await self._connection.close()

    async def __aenter__(self) -> MCPTools:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- inside -------------------------------------------------------------------------------

    def _tools_changed(self) -> None:
        self._stale = True

    def _build(self, listed: list[dict[str, Any]]) -> list[Tool[Any]]:
        tools: list[Tool[Any]] = []
        self.problems = list(self._screen.rejected.values())
        seen: set[object] = set()
        for item in listed:
            name = item.get("name")
            if name in seen:  # the first one listed is the one called by that name
                self.problems.append(f"tool {name!r} left out: the server lists the name "
                                     f"more than once (the first one is kept)")
                continue
            seen.add(name)
            try:
                prefixed = {**item, "name": f"{self.prefix}{name}"}
                (spec,) = import_mcp_tools([prefixed], self.names)
                hinted = hinted_policy(item) if self.trust_hints else {}
                tool: Tool[Any] = Tool(spec, self._caller(str(name)), context_param=_RUN,
                                       timeout=self.call_timeout,
                                       concurrent=self.concurrent,
                                       read_only=hinted.get("read_only", False),
                                       idempotent=hinted.get("idempotent", False))
            except ConfigurationError as exc:
                self.problems.extend(exc.problems)
                continue
            tools.append(tool)
        return tools

    def _caller(self, name: str) -> Any:
        connection = self._connection

        async def call(**arguments: Any) -> str | list[str | MediaPart]:
            ctx = arguments.pop(_RUN, None)
            if connection.starts != self._listed_at_start:
                self._stale = True  # restarted: list again before the next request
            waiting = self._in_flight.enter(ctx)  # whom a sampling request now serves
            try:
                result: Any = await connection.request(
                    f"tool {name!r}", lambda client: client.call_tool(name, arguments))
            finally:
                self._in_flight.leave(waiting)
            return observation(result)

        call.__name__ = name
        return call

    @property
    def running(self) -> bool:
        """Whether the server is started (or connected) now."""
        return self._connection.running

    def __repr__(self) -> str:
        return f"MCPTools({self.describe})"


#: The keyword the run's context reaches an MCP tool's caller under (taken out before the
#: arguments are sent): the caller learns whose run is waiting, which a server's sampling
#: request is then served for (:mod:`.server_requests`).
_RUN = "__toolcycle_run_context"


def _guarded(callback: Callable[[str], None]) -> Callable[[str], None]:
    """A caller's update callback that cannot break the connection's message handling."""

    def call(uri: str) -> None:
        try:
            callback(uri)
        except Exception:
            logger.exception("on_resource_updated failed for <%s>", uri)

    return call


async def _list_all(client: Any) -> list[dict[str, Any]]:
    """Every page of ``tools/list``, as the wire's JSON (the form the importer reads)."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose cursor never ends cannot hang the run
        page = await client.list_tools(cursor=cursor)
        tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True)
                     for t in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def hinted_policy(listed: Mapping[str, Any]) -> dict[str, bool]:
    """The tool flags a listed tool's ``annotations`` claim: ``readOnlyHint`` → ``read_only``
    (a learned routine may then call it for the model, docs/playbook.md), ``idempotentHint`` →
    ``idempotent`` (a durable run may re-run an interrupted call, docs/durable.md).

    Why opt-in (``MCPTools(..., trust_hints=True)``): the MCP specification calls annotations
    untrusted unless the server is, and both flags let toolcycle call a tool nobody asked for.
    Only a JSON ``true`` counts, and only when ``destructiveHint`` is not also ``true`` (a
    contradiction); anything else leaves the flag off.
    """
    hints = listed.get("annotations")
    if not isinstance(hints, Mapping) or hints.get("destructiveHint") is True:
        return {}
    return {flag: True for flag, hint in (("read_only", "readOnlyHint"),
                                          ("idempotent", "idempotentHint"))
            if hints.get(hint) is True}

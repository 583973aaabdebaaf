"""Serving an agent over MCP: its tools, and the agent itself as one more tool.

The server is the SDK's own low-level :class:`mcp.server.lowlevel.Server` (it speaks both the
handshake-era and the 2026-07-28 protocol, over stdio or streamable HTTP); toolcycle only
answers ``tools/list`` and ``tools/call``:

- each of the agent's tools is listed with its own schema (through
  :func:`~toolcycle.spec.formats.mcp.export_mcp_tools`, the exporter of saved tool lists) and
  called as a run would call it: arguments validated first, sync tools on a worker thread,
  the result serialized by the same code as observations;
- a call that needs approval (the agent's policy, or a tool with ``requires_approval``) is
  decided first, by the policy or by the MCP client's user through elicitation, and refused
  when nobody can say yes (:mod:`toolcycle.mcp.serve_approval`);
- the agent is listed under its name with one ``input`` argument; a call runs it once and
  answers with its output (structured outputs also as ``structuredContent``); a run that
  pauses for approval answers with an error listing the calls that wait (``pending``).

Every failure is a result with ``isError`` and the reason, never a dropped connection.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from ..context import CancelToken, RunContext
from ..errors import AgentError, ConfigurationError
from ..messages import Usage
from ..result import RunResult
from ..spec.formats.mcp import export_mcp_tools
from ..tools import Tool, ToolArgumentsError, serialize_result
from .serve_approval import Refusal, gate

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolRequestParams, CallToolResult, InputRequiredResult
    from uvicorn import Server as HttpServer

    from ..agent import Agent

_AGENT_INPUT = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The task for the agent."}},
    "required": ["input"],
    "additionalProperties": False,
}


def agent_server(agent: Agent[Any, Any]) -> Server[Any]:
    """An SDK server exposing ``agent``'s tools and ``agent`` itself as a tool."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    tools = agent.tools
    if agent.name in tools:
        raise ConfigurationError(
            [f"the agent's name {agent.name!r} is also one of its tools' names: rename one"],
            subject="MCP server")
    listed = export_mcp_tools(t.spec for t in tools.values())["tools"]
    listed.append({"name": agent.name, "inputSchema": _AGENT_INPUT,
                   "description": agent.description or f"Run the agent {agent.name!r} once on "
                   "a task and return its answer."})
    listing = types.ListToolsResult.model_validate({"tools": listed})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = dict(params.arguments or {})
        if params.name == agent.name:
            return await _run_agent(agent, arguments)
        tool = tools.get(params.name)
        if tool is None:
            return _error(f"Unknown tool `{params.name}`. Available tools: "
                          f"{', '.join([*tools, agent.name])}.")
        return await _call(agent, tool, arguments, ctx, params)

    return Server(agent.name, description=agent.description or None,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def _call(agent: Agent[Any, Any], tool: Tool[Any], arguments: dict[str, Any],
                request_context: ServerRequestContext[Any, Any], params: CallToolRequestParams
                ) -> CallToolResult | InputRequiredResult:
    try:
        validated = tool.validate(arguments)
    except ToolArgumentsError as exc:
        return _error(f"Invalid arguments for `{tool.name}`: {'; '.join(exc.problems)}")
    ctx: RunContext[Any] = RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(),
                                      run_id="mcp", agent_name=agent.name, tool_name=tool.name)
    verdict = await gate(agent, tool, validated, ctx, request_context, params)
    if isinstance(verdict, Refusal):
        return _error(verdict.reason)
    if verdict is not None:  # the question for the client's user; the client calls again
        return verdict
    try:
        if tool.is_async:
            pending = tool.invoke(ctx, validated)
            value = await (asyncio.wait_for(pending, tool.timeout) if tool.timeout else pending)
        else:
            work = asyncio.to_thread(tool.invoke, ctx, validated)
            value = await (asyncio.wait_for(work, tool.timeout) if tool.timeout else work)
    except TimeoutError:
        return _error(f"Tool `{tool.name}` timed out after {tool.timeout} s.")
    except Exception as exc:
        return _error(f"Tool `{tool.name}` failed: {type(exc).__name__}: {exc}")
    text, ok = serialize_result(value)
    return _result(text, None, not ok)


async def _run_agent(agent: Agent[Any, Any], arguments: dict[str, Any]) -> CallToolResult:
    task = arguments.get("input")
    if not isinstance(task, str) or set(arguments) != {"input"}:
        return _error("The agent takes exactly one argument, `input`, a string.")
    try:
        result = await agent.run(task)
    except AgentError as exc:
        return _error(f"The agent failed ({exc.code}): {exc}")
    if not result.succeeded:  # a forced, partial or paused run is no answer to hand on
        return _not_succeeded(result)
    output = result.output
    if isinstance(output, str):
        return _result(output, None, False)
    text, _ = serialize_result(output)
    structured = json.loads(text) if text.startswith("{") else None
    return _result(text, structured, False)


def _not_succeeded(result: RunResult[Any]) -> CallToolResult:
    """A run that returned without succeeding, as an error result the client can act on: the
    status first (docs/status.md), then why, then what the run had (a forced answer is
    still shown, marked; a client must not take it for the agent's answer)."""
    termination = result.termination
    why = termination.detail or termination.reason
    text = f"The agent did not succeed (status {result.status}): {why}."  # (paused: what waits)
    structured: dict[str, Any] = {"status": result.status,
                                  "termination": termination.to_dict()}
    if result.paused:  # nobody here can answer: the calls that wait, with their arguments
        structured["pending"] = [{"tool": r.tool_name, "arguments": r.arguments,
                                  "call_id": str(r.call_id)} for r in result.pending_approvals]
    elif result.output is not None:
        text += f" Its answer, not to be trusted: {serialize_result(result.output)[0]}"
    return _result(text, structured, True)


def _result(text: str, structured: dict[str, Any] | None, is_error: bool) -> CallToolResult:
    import mcp.types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=is_error)


def _error(text: str) -> CallToolResult:
    return _result(text, None, True)


async def serve_stdio(agent: Agent[Any, Any]) -> None:
    """Serve over this process's stdin/stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = agent_server(agent)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await agent.close()


async def serve_http(agent: Agent[Any, Any], host: str, port: int) -> None:
    """Serve over streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted."""
    await run_http_server(agent, http_server(agent, host, port))


def http_server(agent: Agent[Any, Any], host: str, port: int) -> HttpServer:
    """The streamable-HTTP server for ``agent``, built but not started.

    Building takes a second or two (the SDK's app, uvicorn's configuration). A program that
    builds it before its event loop starts (the CLI does) stops plainly on a Ctrl-C meanwhile;
    from the first step of :func:`run_http_server` on, uvicorn's own handler stops the server
    gracefully. Built inside ``asyncio.run``, a Ctrl-C in those seconds went to asyncio's
    handler, which cancelled uvicorn's start-up half way and left a traceback on the terminal.
    """
    import uvicorn

    app = agent_server(agent).streamable_http_app(host=host)
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))


async def run_http_server(agent: Agent[Any, Any], server: HttpServer) -> None:
    """Run a server from :func:`http_server` until interrupted, then close the agent."""
    try:
        await server.serve()
    finally:
        await agent.close()

"""``toolcycle mcp serve AGENT.gram|AGENT.json --tools MODULE [--http HOST:PORT]``.

Binds the spec to the tools found in the modules (as ``toolcycle run`` does) and serves the
agent's tools, and the agent itself as one more tool, over MCP: on stdin/stdout by default
(what an MCP client launching a command expects), or over streamable HTTP at
``http://HOST:PORT/mcp``. Needs the ``mcp`` extra. Nothing but the protocol goes to stdout:
where the server listens is said on stderr.

Runs of the agent tool are recorded where ``--trace-db`` (or ``$TOOLCYCLE_TRACE_DB``) says; a
long-lived server records nothing by default rather than fill a home directory.
The agent's model is loaded when the agent is first called, not at start: a server whose
clients call only the plain tools needs no model pack.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from .._safe_text import terminal_safe
from ..tracing.store import ENV_VAR
from ._loading import CommandError, guarded, load_library, load_spec, resolve_model_argument


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("mcp", help="Model Context Protocol: serve an agent")
    commands = group.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    serve = commands.add_parser("serve", help="serve a bound agent spec's tools and the agent "
                                "itself over MCP (stdio, or streamable HTTP with --http)")
    serve.add_argument("spec", help="AGENT.gram or AGENT.json")
    serve.add_argument("--tools", action="append", default=[], metavar="MODULE",
                       help="python module (or .py file) with the implementations; repeatable")
    serve.add_argument("--model", help="model string for the agent tool (default: the spec's)")
    serve.add_argument("--http", metavar="HOST:PORT",
                       help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    serve.add_argument("--trace-db", metavar="PATH",
                       help="record the agent's runs there, a SQLite path or a postgresql:// "
                       f"URL (default: ${ENV_VAR}, else not recorded)")
    serve.set_defaults(handler=_serve)


@guarded
def _serve(args: argparse.Namespace) -> int:
    address = _address(args.http) if args.http else None
    try:
        from ..mcp.serve import http_server, run_http_server, serve_stdio
    except ImportError as exc:
        raise CommandError(f"`toolcycle mcp` needs the mcp extra: pip install "
                           f"'toolcycle[mcp]' ({exc})") from exc
    spec = load_spec(args.spec)
    agent = spec.bind(load_library(args.tools), model=resolve_model_argument(args.model),
                      trace_store=args.trace_db or os.environ.get(ENV_VAR) or False)
    # The HTTP server is built before the event loop starts, so a Ctrl-C at any moment ends
    # the command plainly (see toolcycle.mcp.serve.http_server).
    server = None if address is None else http_server(agent, *address)
    where = ("stdin/stdout" if address is None
             else f"http://{_host_in_url(address[0])}:{address[1]}/mcp")
    said = terminal_safe(f"toolcycle mcp serve: {agent.name!r} ({len(agent.tools)} tool(s) "
                         f"and the agent) over MCP on {where}; Ctrl-C stops")
    # Ctrl-C ends the command with status 130 (toolcycle.cli.main)
    _serve_until_stopped(said, (lambda: serve_stdio(agent)) if server is None
                         else (lambda: run_http_server(agent, server)))
    return 0


def _serve_until_stopped(said: str, serve: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Say ``said`` once the event loop exists, then run ``serve()`` on it.

    Why the loop first: a Ctrl-C that came while ``asyncio.run`` was still building its loop
    (just after the line a user, or a test, waits for) interrupted the loop's constructor,
    and the half-built loop printed a traceback as it was collected, beside a warning that the
    server's coroutine was never awaited. Built before the line, the loop is whole whenever
    the interrupt comes; the coroutine is made inside the guarded block and closed if it
    never ran."""
    with asyncio.Runner() as runner:
        runner.get_loop()
        print(said, file=sys.stderr)
        main = None
        try:
            main = serve()
            runner.run(main)
        except BaseException:
            if main is not None:
                main.close()  # (never started: closed here, not warned about when collected)
            raise


def _host_in_url(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"--http expects HOST:PORT, e.g. 127.0.0.1:8000, got {text!r}")
    return host.strip("[]"), int(port)

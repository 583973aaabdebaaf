"""``toolcycle mcp serve AGENT.gram|AGENT.json --tools MODULE [--http HOST:PORT]``.

Binds the spec to the tools found in the modules (as ``toolcycle run`` does) and serves the
agent's tools, and the agent itself as one more tool, over MCP: on stdin/stdout by default
(what an MCP client launching a command expects), or over streamable HTTP at
``http://HOST:PORT/mcp``. Needs the ``mcp`` extra. Nothing but the protocol goes to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

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
    serve.set_defaults(handler=_serve)


@guarded
def _serve(args: argparse.Namespace) -> int:
    address = _address(args.http) if args.http else None
    try:
        from ..mcp.serve import serve_http, serve_stdio
    except ImportError as exc:
        raise CommandError(f"`toolcycle mcp` needs the mcp extra: pip install "
                           f"'toolcycle[mcp]' ({exc})") from exc
    spec = load_spec(args.spec)
    agent = spec.bind(load_library(args.tools), model=resolve_model_argument(args.model))
    try:
        if address is None:
            asyncio.run(serve_stdio(agent))
        else:
            asyncio.run(serve_http(agent, *address))
    except KeyboardInterrupt:
        pass
    return 0


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"--http expects HOST:PORT, e.g. 127.0.0.1:8000, got {text!r}")
    return host.strip("[]"), int(port)

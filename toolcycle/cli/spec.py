"""``toolcycle spec check|convert|import|export``: work with agent spec files.

``check`` reads a spec (``.gram`` or ``.json``) and, given ``--tools``, binds it to the tools
found in those modules, printing every problem at once. ``convert`` turns gram into JSON and
back. ``import`` builds a spec from OpenAI, Anthropic or MCP tool definitions; ``export``
writes a spec's tools in one of those formats.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._safe_text import json_safe, terminal_safe
from ..spec.agent_spec import AgentSpec, SpecError
from ..spec.bounds import load_json, read_spec_bytes
from ..spec.formats import (
    export_anthropic_tools,
    export_mcp_tools,
    export_openai_tools,
    import_anthropic_tools,
    import_mcp_tools,
    import_openai_tools,
)
from ._loading import CommandError, guarded, load_library, load_spec

PROVIDERS = ("openai", "anthropic", "mcp")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("spec", help="check, convert, import and export agent specs")
    commands = parser.add_subparsers(dest="spec_command", metavar="ACTION", required=True)

    check = commands.add_parser("check", help="read a spec and check it binds to tools")
    check.add_argument("spec", help="AGENT.gram or AGENT.json")
    check.add_argument("--tools", action="append", default=[], metavar="MODULE",
                       help="python module (or .py file) with the implementations; repeatable")
    check.set_defaults(handler=_check)

    convert = commands.add_parser("convert", help="gram <-> JSON")
    convert.add_argument("spec", help="AGENT.gram or AGENT.json")
    convert.add_argument("-o", "--output", help="file to write; its suffix picks the format")
    convert.add_argument("--to", choices=["gram", "json"],
                         help="format for stdout (default: the other one)")
    convert.set_defaults(handler=_convert)

    imp = commands.add_parser("import", help="a spec from provider tool definitions")
    imp.add_argument("definitions", help="JSON file with the tools (a list, or {tools: [...]})")
    imp.add_argument("--from", dest="provider", choices=PROVIDERS, required=True)
    imp.add_argument("--name", required=True, help="the agent's name")
    imp.add_argument("--instructions", default="")
    imp.add_argument("--model")
    imp.add_argument("-o", "--output", help="AGENT.gram or AGENT.json (default: gram on stdout)")
    imp.set_defaults(handler=_import)

    exp = commands.add_parser("export", help="a spec's tools as provider tool definitions")
    exp.add_argument("spec", help="AGENT.gram or AGENT.json")
    exp.add_argument("--to", dest="provider", choices=[*PROVIDERS, "openai-responses"],
                     required=True)
    exp.set_defaults(handler=_export)


@guarded
def _check(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    problems = spec.check(load_library(args.tools)) if args.tools else []
    if problems:
        print(f"{args.spec}: {len(problems)} binding problem(s):", file=sys.stderr)
        for problem in problems:
            print(terminal_safe(f"  - {problem}"), file=sys.stderr)
        return 1
    bound = f", bound to {', '.join(args.tools)}" if args.tools else ""
    print(terminal_safe(f"{args.spec}: ok: agent {spec.name!r} with {len(spec.tools)} tool(s)"
                        f"{bound}"))
    return 0


@guarded
def _convert(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    if args.output:
        if Path(args.output).suffix not in (".gram", ".json"):
            raise CommandError("the output file must end in .gram or .json")
        spec.dump(args.output)
        return 0
    target = args.to or ("json" if Path(args.spec).suffix == ".gram" else "gram")
    _write_spec(json_safe(spec.to_json()) if target == "json" else spec.to_gram())
    return 0


@guarded
def _import(args: argparse.Namespace) -> int:
    readers = {"openai": import_openai_tools, "anthropic": import_anthropic_tools,
               "mcp": import_mcp_tools}
    path = Path(args.definitions)
    try:  # untrusted: size, depth and numbers bounded before parsing (rel-09)
        data = load_json(read_spec_bytes(path), str(path))
    except OSError as exc:
        raise CommandError(f"{args.definitions}: {exc}") from exc
    except SpecError as exc:
        raise CommandError(str(exc)) from exc
    tools = readers[args.provider](data)
    spec = AgentSpec(args.name, instructions=args.instructions, model=args.model, tools=tools)
    if args.output:
        spec.dump(args.output)
    else:
        _write_spec(spec.to_gram())
    return 0


def _write_spec(text: str) -> None:
    """Print a spec. Gram strings have no escape for control characters, so a terminal gets
    them as visible escapes; a pipe or file gets the spec exactly (it may be read back)."""
    sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)


@guarded
def _export(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    exported: Any
    if args.provider == "openai":
        exported = export_openai_tools(spec.tools)
    elif args.provider == "openai-responses":
        exported = export_openai_tools(spec.tools, style="responses")
    elif args.provider == "anthropic":
        exported = export_anthropic_tools(spec.tools)
    else:
        exported = export_mcp_tools(spec.tools)
    print(json_safe(json.dumps(exported, indent=2, ensure_ascii=False)))
    return 0

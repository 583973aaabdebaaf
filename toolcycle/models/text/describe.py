"""Tools described for a text-only model: one compact signature per line.

Prompt processing dominates the cost of a small local model, so a tool is shown as
``- name(arg: type, opt?: type = default): description`` rather than as its JSON Schema;
sub-models are expanded from their local ``$ref`` (the prompt holds no ``$defs``), recursive
ones named. Every text protocol (:mod:`.protocol`'s JSON, :mod:`.react`) describes tools so.

A description is one entry of that list, whatever its author wrote: :func:`one_line` is the
rule every text protocol's tool list applies to it (:mod:`.hermes`'s JSON lines too).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..base import ModelSettings, ToolDefinition
from .choice import answer_allowed


def one_line(text: str) -> str:
    """``text`` with every line break, and the indentation around it, made one space.

    A model reads each line of its prompt as what it looks like. A tool's description is
    written by whoever wrote the tool (a docstring of several paragraphs, an MCP server's),
    and in a list of one tool a line its second line would start a line of the prompt: one
    that opens ``- other_tool(x):`` reads as another tool, ``Action:`` or ``Final Answer:`` as
    a step of the ReAct protocol, ``<tool_call>`` as a call. Folded, the description is one
    entry, and nothing in it starts a line. Its words are all kept (an ``Args:`` section
    included: the compact signature names the arguments, not what they mean). Every break
    :meth:`str.splitlines` knows counts (``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``,
    ``\\x85``, ``\\u2028``, ``\\u2029``), not only ``\\n``.
    """
    return " ".join(part for line in text.splitlines() if (part := line.strip()))


def describe_tools(tools: Sequence[ToolDefinition], *, arguments: bool = False) -> str:
    """One short line per tool: ``- name(arg: type, opt?: type = default): description``.

    Prompt processing dominates the cost of a small local model, so tools are described as
    compact signatures instead of full JSON Schemas; nested types fall back to their schema.
    Each entry is one line (:func:`one_line`): its description, and any argument name a
    schema spells with a line break. With ``arguments``, what each argument means follows
    (:func:`argument_notes`).
    """
    return "\n".join(f"- {one_line(_signature(t))}: {one_line(t.description) or t.name}"
                     + (argument_notes(t) if arguments else "") for t in tools)


#: The most characters of one argument's description shown (an MCP server's may run on).
_ARGUMENT_NOTE = 300


def argument_notes(tool: ToolDefinition) -> str:
    """`` Arguments: city: The city, as 'City, Country'; unit: C or F.``: the descriptions a
    tool's schema gives its top-level arguments, each folded to one line, those its own
    description already holds left out (a description given as text with an ``Args:``
    section), ``""`` where none is left.

    Why: the signature names an argument, and the schema says what it takes: its format
    ("in the format of 'City, State'", "YYYY-MM-DD"), its unit, what kind of value. A
    function's docstring puts that text in the schema (its ``Args:`` section), and so do
    OpenAI-style and MCP tool definitions; without it a small model fills ``location`` with
    "Boston" where "Boston, MA" was described."""
    properties = tool.parameters.get("properties")
    if not isinstance(properties, dict):
        return ""
    described = one_line(tool.description).casefold()
    notes = []
    for name, schema in properties.items():
        text = schema.get("description") if isinstance(schema, dict) else None
        if not isinstance(text, str) or not (text := one_line(text)):
            continue
        if text.casefold() in described:
            continue
        if len(text) > _ARGUMENT_NOTE:
            text = text[:_ARGUMENT_NOTE - 3].rstrip() + "..."
        notes.append(f"{one_line(str(name))}: {text.removesuffix('.')}")
    return f" Arguments: {'; '.join(notes)}." if notes else ""


def json_tool_instructions(tools: Sequence[ToolDefinition], settings: ModelSettings,
                           answer: str, *, arguments: bool = False) -> str:
    """The JSON protocol's system-prompt text: the tools (with ``arguments``, what each
    argument means), how to call them, and (where an answer may end the turn) ``answer``,
    the form of the answer."""
    # The same words with and without the grammar: measured on Qwen2.5-Coder-0.5B, naming
    # an explicit {"answer": ...} form makes it stop calling tools once it has a result,
    # where "reply in plain text" left it repeating the call. Plain-text answers still parse.
    # With parallel_tool_calls, every reply is a list (constrained, the grammar's too):
    # BFCL's parallel questions ask for several calls in one reply, and a small model
    # offered "an object or a list" writes an object (see constrained.reply_schema).
    parallel = bool(settings.parallel_tool_calls)
    how = (
        'Reply with a JSON list: [{"name": "<tool>", "arguments": {...}}, ...] to call '
        "tools, one item for each call whose arguments you already know (their results "
        "come back before your next reply)"
        if parallel else
        'Reply with one JSON object: {"name": "<tool>", "arguments": {...}} to call a tool '
        "(one call per reply; its result comes back before your next reply)"
    )
    if not answer_allowed(settings):
        return (
            f"Tools:\n{describe_tools(tools, arguments=arguments)}\n{how}. "
            "Every reply is a tool call: the final answer, too, is given by calling a tool."
        )
    return (
        f"Tools:\n{describe_tools(tools, arguments=arguments)}\n{how}, "
        f"or {answer} to answer the user once you know the answer."
    )


def _signature(tool: ToolDefinition) -> str:
    return f"{tool.name}({_fields(tool.parameters, tool.parameters, ())})"


def _fields(schema: dict[str, Any], root: dict[str, Any], seen: tuple[str, ...]) -> str:
    """``name: type, opt?: type = default`` for an object schema's properties."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    args = []
    for name, sub in properties.items():
        text = f"{name}{'' if name in required else '?'}: {_type_name(sub, root, seen)}"
        if isinstance(sub, dict) and "default" in sub:
            text += f" = {json.dumps(sub['default'])}"
        args.append(text)
    return ", ".join(args)


def _type_name(schema: Any, root: dict[str, Any], seen: tuple[str, ...] = ()) -> str:
    if not isinstance(schema, dict):
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        # A sub-model ("#/$defs/FlightInfo"): the model is shown its fields, never the bare
        # ref, whose target the prompt does not hold. A recursive one is named, not expanded.
        target = _resolve_local(ref, root)
        if target is None or ref in seen:
            return ref.rsplit("/", 1)[-1] or "object"
        return _type_name(target, root, (*seen, ref))
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind in ("string", "integer", "number", "boolean"):
        return str(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"list[{_type_name(schema['items'], root, seen)}]"
    if "anyOf" in schema:
        return " | ".join(_type_name(s, root, seen) for s in schema["anyOf"]
                          if isinstance(s, dict))
    if kind == "null":
        return "null"
    if kind == "object" and isinstance(schema.get("properties"), dict) and schema["properties"]:
        return f"{{{_fields(schema, root, seen)}}}"
    slim = {k: v for k, v in schema.items() if k not in ("title", "description")}
    return json.dumps(slim, separators=(",", ":"))


def _resolve_local(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    """The sub-schema a local ref ("#/$defs/X", "#/definitions/X") names in ``root``."""
    if not ref.startswith("#"):
        return None
    target: Any = root
    for step in filter(None, ref[1:].split("/")):
        step = step.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or step not in target:
            return None
        target = target[step]
    return target if isinstance(target, dict) else None


def describe_object(schema: dict[str, Any]) -> str:
    """A JSON object's schema as the same compact signature: ``{name: string, n?: integer}``
    (a native answer's shape, told to a text model in as few tokens as its tools are)."""
    return _type_name(schema, schema)

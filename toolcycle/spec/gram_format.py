"""Agent specs in gram notation.

The layout follows the gram agent examples::

    [hello_world_agent:Agent {
      description: "A friendly agent that greets people",
      instruction: "You are a friendly assistant. ...",
      model: "openai:gpt-4o-mini"
    } |
      [sayHello:Tool {
        description: "Returns a friendly greeting message for the given name"
      } |
        (personName::String {default: "world"})==>(::String)
      ]
    ]

The agent's record holds ``description``, ``instruction`` (``instructions`` is accepted too),
``model``, ``output`` (a type expression, see :mod:`toolcycle.spec.signatures`) or
``output_schema``, ``input`` or ``input_schema`` (the task input, written the same way),
``limits`` (a record of :class:`~toolcycle.limits.Limits` fields), ``tool_selection`` (a
record of :class:`~toolcycle.tool_selection.ToolSelection` settings, ``{}`` for the defaults)
and ``metadata``. Each tool
(label ``Tool``; ``ToolSpecification`` is accepted) has a signature as its one element. A tool
whose schema a signature cannot express exactly (``anyOf``, ``minimum``, ...) keeps it as JSON
text in ``parameters`` / ``result_schema`` instead (a gram record is read too), so that every
spec round-trips, key order included: the gram parser does not keep the order of a record's
keys, JSON text does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..tools import ToolSpec
from . import gram_syntax as gram
from .agent_spec import (
    FORMATS,
    AgentSpec,
    Locator,
    SpecError,
    SpecFormat,
    limits_from_dict,
    limits_to_dict,
    tool_selection_from_dict,
)
from .bounds import load_json
from .gram_syntax import Document, GramError, RawPattern
from .signatures import (
    NotExpressible,
    Signature,
    SignatureError,
    format_signature,
    parse_signature,
    schema_type_expression,
    signature_from_pattern,
    type_expression_schema,
)

_AGENT_KEYS = (
    "description", "instruction", "instructions", "model", "output", "output_schema", "input",
    "input_schema", "limits", "tool_selection", "metadata",
)
_TOOL_KEYS = ("description", "parameters", "result_schema", "read_only")
_TOOL_LABELS = ("Tool", "ToolSpecification")


def load_gram(text: str, source: str = "") -> AgentSpec:
    """Read an agent spec from gram text; raises :class:`~toolcycle.spec.SpecError`."""
    try:
        doc = gram.parse(text, source)
    except GramError as exc:
        raise SpecError(exc.message, exc.line, exc.column, exc.source) from exc
    try:
        return _read_agent(doc)
    except SignatureError as exc:
        raise SpecError(exc.message, exc.line, exc.column, exc.source) from exc


def _read_agent(doc: Document) -> AgentSpec:
    where = Locator(doc, gram=True)
    if len(doc.patterns) != 1 or "Agent" not in doc.patterns[0]["subject"]["labels"]:
        raise SpecError(
            "expected exactly one agent pattern like [name:Agent {...} | [tool:Tool ...], ...], "
            f"found {len(doc.patterns)} top-level element(s)",
            1, 1, doc.source,
        )
    agent = doc.patterns[0]
    subject = agent["subject"]
    name = subject["identity"]
    if not name:
        raise where.error("the agent has no name; expected [name:Agent {...} | ...]", ":Agent")
    props = gram.to_python(subject["properties"], "agent")
    _reject_unknown(props, _AGENT_KEYS, f"agent {name!r}", where, re.escape(name))
    if "instruction" in props and "instructions" in props:
        raise where.error("give either 'instruction' or 'instructions', not both", "instruction")
    for key in ("description", "instruction", "instructions", "model"):
        if key in props and not isinstance(props[key], str):
            raise where.error(f"{key!r} must be a string", rf"\b{key}\s*:")
    output_schema = _typed_schema(props, "output", doc, where)
    input_schema = _typed_schema(props, "input", doc, where)
    metadata = props.get("metadata", {})
    if not isinstance(metadata, dict):
        raise where.error("'metadata' must be a record", r"\bmetadata\s*:")
    tools = [_read_tool(element, doc, where) for element in agent["elements"]]
    spec = AgentSpec(
        name=name,
        description=props.get("description", ""),
        instructions=props.get("instruction", props.get("instructions", "")),
        model=props.get("model"),
        tools=[tool for tool, _ in tools],
        read_only=[tool.name for tool, read_only in tools if read_only],
        output_schema=output_schema,
        input_schema=input_schema,
        limits=limits_from_dict(props.get("limits"), where),
        tool_selection=tool_selection_from_dict(props.get("tool_selection"), where),
        metadata=metadata,
    )
    spec.check_tools(where)
    return spec


def _typed_schema(props: dict[str, Any], key: str, doc: Document, where: Locator,
                  ) -> dict[str, Any] | None:
    """The ``output`` / ``input`` schema: a type expression, or JSON Schema in ``<key>_schema``."""
    if key in props and f"{key}_schema" in props:
        raise where.error(f"give either '{key}' or '{key}_schema', not both", key)
    if key in props:
        return type_expression_schema(props[key], doc, key, (rf"\b{key}\s*:",))
    if f"{key}_schema" in props:
        return _json_schema(props[f"{key}_schema"], f"{key}_schema", where, key)
    return None


def _read_tool(pattern: RawPattern, doc: Document, where: Locator) -> tuple[ToolSpec, bool]:
    """A tool of the text, and whether it is declared read-only (``read_only: true``)."""
    subject = pattern["subject"]
    name = subject["identity"]
    if not any(label in subject["labels"] for label in _TOOL_LABELS):
        raise where.error(
            f"expected a tool pattern like [name:Tool {{description: ...}} | signature], found "
            f"{name or 'an element'} labelled {', '.join(subject['labels']) or 'nothing'}",
            *((re.escape(name),) if name else ()),
        )
    if not name:
        raise where.error("a tool has no name; expected [name:Tool ...]", ":Tool")
    needle = where.tool(name)
    props = gram.to_python(subject["properties"], name)
    _reject_unknown(props, _TOOL_KEYS, f"tool {name!r}", where, needle)
    description = props.get("description", "")
    if not isinstance(description, str):
        raise where.error(f"tool {name!r}: description must be a string", needle)
    read_only = props.get("read_only", False)
    if not isinstance(read_only, bool):
        raise where.error(f"tool {name!r}: read_only must be true or false", needle,
                          r"\bread_only\s*:")
    elements = pattern["elements"]
    if len(elements) > 1:
        raise where.error(
            f"tool {name!r}: expected one signature like (x::String)==>(::String), "
            f"found {len(elements)} elements", needle,
        )
    if elements:
        if "parameters" in props or "result_schema" in props:
            raise where.error(
                f"tool {name!r}: give a signature or parameters/result_schema, not both", needle
            )
        signature = signature_from_pattern(elements[0], doc, f"tool {name!r}", (needle,))
        return ToolSpec(name, description, signature.parameters, signature.result), read_only
    parameters = _json_schema(
        props.get("parameters", {"type": "object", "properties": {}}),
        f"tool {name!r}: parameters", where, needle,
    )
    result = props.get("result_schema")
    if result is not None:
        result = _json_schema(result, f"tool {name!r}: result_schema", where, needle)
    return ToolSpec(name, description, parameters, result), read_only


def _json_schema(value: Any, label: str, where: Locator, needle: str) -> dict[str, Any]:
    """A schema given as JSON text (what :func:`dump_gram` writes) or as a gram record."""
    if isinstance(value, str):
        try:
            value = load_json(value)
        except SpecError as exc:
            raise where.error(f"{label}: not valid JSON ({exc})", needle) from exc
    if not isinstance(value, dict):
        raise where.error(f"{label} must be a JSON Schema object", needle)
    return value


def _reject_unknown(
    props: dict[str, Any], allowed: tuple[str, ...], what: str, where: Locator, needle: str
) -> None:
    unknown = [k for k in props if k not in allowed]
    if unknown:
        raise where.error(
            f"{what}: unknown property {unknown[0]!r}; expected any of {', '.join(allowed)}",
            needle, rf"\b{re.escape(unknown[0])}\s*:",
        )


# -- writing -------------------------------------------------------------------------------


def dump_gram(spec: AgentSpec) -> str:
    """Write ``spec`` as gram; :func:`load_gram` reads it back to an equal spec."""
    props: dict[str, Any] = {}
    if spec.description:
        props["description"] = spec.description
    if spec.instructions:
        props["instruction"] = spec.instructions
    if spec.model is not None:
        props["model"] = spec.model
    for key, schema in (("output", spec.output_schema), ("input", spec.input_schema)):
        if schema is not None:
            expression = _output_expression(schema)
            if expression is not None:
                props[key] = expression
            else:
                props[f"{key}_schema"] = _json_text(schema)
    if spec.limits is not None:
        props["limits"] = limits_to_dict(spec.limits)
    if spec.tool_selection is not None:
        props["tool_selection"] = spec.tool_selection
    if spec.metadata:
        props["metadata"] = spec.metadata
    head = f"[{gram.name(spec.name)}:Agent" + (
        " " + gram.record(props, "", multiline=True) if props else ""
    )
    if not spec.tools:
        return head + "]\n"
    tools = ",\n".join(_tool_text(tool, "  ", tool.name in spec.read_only)
                        for tool in spec.tools)
    return f"{head} |\n{tools}\n]\n"


def _tool_text(tool: ToolSpec, indent: str, read_only: bool) -> str:
    props: dict[str, Any] = {}
    if tool.description:
        props["description"] = tool.description
    if read_only:
        props["read_only"] = True
    signature = _signature(tool)
    if signature is None:
        props["parameters"] = _json_text(tool.parameters)
        if tool.result_schema is not None:
            props["result_schema"] = _json_text(tool.result_schema)
    head = f"{indent}[{gram.name(tool.name)}:Tool" + (
        " " + gram.record(props, indent, multiline=True) if props else ""
    )
    if signature is None:
        return head + "]"
    return f"{head} |\n{indent}  {signature}\n{indent}]"


def _signature(tool: ToolSpec) -> str | None:
    """The tool's signature when it says exactly the tool's schemas, else ``None``."""
    try:
        text = format_signature(tool.parameters, tool.result_schema)
        exact = parse_signature(text) == Signature(tool.parameters, tool.result_schema)
    except (NotExpressible, SignatureError, GramError):
        return None
    return text if exact else None


def _output_expression(schema: dict[str, Any]) -> Any:
    try:
        expression = schema_type_expression(schema)
        exact = type_expression_schema(expression) == schema
    except (NotExpressible, SignatureError, GramError):
        return None
    return expression if exact else None


def _json_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


FORMATS[".gram"] = SpecFormat(load_gram, dump_gram)

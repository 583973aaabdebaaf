"""Binding tool specs to implementations from a tool library, checking that they fit.

An agent spec says what each tool takes; the library supplies code. Binding pairs them by
name and checks, before anything runs, that the code can take every call the spec allows:
each declared parameter exists in the implementation, an optional one (the model may leave it
out) has a default there, the implementation requires nothing the spec does not declare, and
the JSON types agree (nested records and list items included). Every mismatch of every tool
is collected, so one :class:`~toolcycle.errors.ConfigurationError` lists them all. Extra
implementations in the library are fine: a library may serve many specs. An agent offered as a
tool (``Agent.as_tool``) is bound by reference: the spec declares the tool (its name,
description and the input it takes), the library holds the agent's tool.

A bound tool's argument schema is the spec's, closed (``additionalProperties: false``) when
the spec leaves that open and the implementation takes no ``**kwargs``: a local model that
calls ``sayHello(name=...)`` instead of ``personName`` then gets a validation error naming the
unexpected argument, not a ``TypeError`` from inside the function.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Set
from dataclasses import replace
from typing import Any

from ..errors import ConfigurationError
from ..run.team import MemberTool
from ..tools import Tool, ToolFunction, ToolLibrary, ToolPolicy, ToolSpec


def bind_tools(
    specs: Iterable[ToolSpec], library: ToolLibrary, read_only: Set[str] = frozenset()
) -> tuple[list[Tool[Any]], list[str]]:
    """Bind each spec to its implementation; returns the tools and every problem found.
    ``read_only``: the names the spec declares lookups (bound with ``read_only=True``)."""
    tools: list[Tool[Any]] = []
    problems: list[str] = []
    for spec in specs:
        item = library.get(spec.name)
        if item is None:
            known = ", ".join(sorted(library.names())) or "none"
            where = f" {library.name!r}" if library.name else ""
            problems.append(
                f"tool {spec.name!r}: no implementation in the tool library{where} "
                f"(it has: {known})"
            )
            continue
        tool, found = bind_tool(spec, item, spec.name in read_only)
        problems.extend(found)
        if tool is not None:
            tools.append(tool)
    return tools, problems


def bind_tool(
    spec: ToolSpec, item: Tool[Any] | ToolFunction, read_only: bool = False
) -> tuple[Tool[Any] | None, list[str]]:
    """The spec bound to ``item`` (a ``Tool`` keeps its timeout and concurrency policies;
    ``read_only``: the spec declares it a lookup, whatever the implementation says)."""
    prefix = f"tool {spec.name!r}"
    if isinstance(item, MemberTool):  # an agent as a tool (Agent.as_tool): it takes its input
        problems = [f"{prefix}: {p}" for p in parameter_mismatches(
            spec.parameters, item.spec.parameters)]
        named = replace(item.spec, name=spec.name,
                        description=spec.description or item.spec.description)
        return (None if problems else MemberTool(named, item.member, item.policy)), problems
    function = item.function if isinstance(item, Tool) else item
    if function is None:
        return None, [f"{prefix}: the library's tool has no implementation bound"]
    try:
        declared = item.spec.parameters if isinstance(item, Tool) else (
            Tool.from_function(function).spec.parameters
        )
    except Exception as exc:  # a function whose signature yields no schema
        return None, [f"{prefix}: cannot read the implementation's parameters: {exc}"]
    problems = [
        f"{prefix}: {p}"
        for p in parameter_mismatches(spec.parameters, declared, _takes_any_keyword(function))
    ]
    if "additionalProperties" not in spec.parameters and not _takes_any_keyword(function):
        # The implementation takes only its named parameters: say so in the schema, so that
        # a misnamed argument is rejected by validation with a precise message (and the
        # expected schema) rather than failing inside the function with a TypeError.
        spec = replace(spec, parameters={**spec.parameters, "additionalProperties": False})
    try:
        # the implementation's whole policy (inline and requires_approval included)
        policy = item.policy if isinstance(item, Tool) else ToolPolicy()
        base: Tool[Any] = Tool(spec, policy=replace(policy, read_only=True) if read_only
                               else policy)
    except ConfigurationError as exc:
        return None, problems + [f"{prefix}: {p}" for p in exc.problems]
    return (None if problems else base.bind(function)), problems


def parameter_mismatches(
    spec_schema: dict[str, Any], implementation_schema: dict[str, Any], open_ended: bool = False
) -> list[str]:
    """Why an implementation declaring ``implementation_schema`` cannot take ``spec_schema``.

    ``open_ended``: the implementation also takes arbitrary keywords (``**kwargs``).
    """
    return _compare(spec_schema, implementation_schema, implementation_schema, "", open_ended)


def _compare(
    spec: dict[str, Any], impl: dict[str, Any], root: dict[str, Any], path: str,
    open_ended: bool = False,
) -> list[str]:
    impl = _resolve(impl, root)
    spec_types, impl_types = _types(spec, root), _types(impl, root)
    label = f"parameter {path!r}" if path else "arguments"
    if impl_types is not None:
        accepted = set(impl_types) | ({"integer"} if "number" in impl_types else set())
        if spec_types is None or not set(spec_types) <= accepted:
            return [
                f"{label}: the spec allows {_describe(spec_types)} but the implementation "
                f"takes {_describe(impl_types)}"
            ]
    problems: list[str] = []
    if "properties" in spec and _has(impl_types, "object"):
        problems += _compare_records(spec, impl, root, path, open_ended)
    if isinstance(spec.get("items"), dict) and _has(impl_types, "array"):
        impl_items = _resolve(impl, root).get("items")
        if isinstance(impl_items, dict):
            problems += _compare(spec["items"], impl_items, root, f"{path}[]")
    return problems


def _compare_records(
    spec: dict[str, Any], impl: dict[str, Any], root: dict[str, Any], path: str,
    open_ended: bool,
) -> list[str]:
    impl = _object_branch(impl, root)
    spec_props: dict[str, Any] = spec.get("properties", {})
    spec_required = set(spec.get("required", []))
    impl_props: dict[str, Any] | None = impl.get("properties")
    if impl_props is None:  # a plain dict: takes any record
        return []
    impl_required = set(impl.get("required", []))
    problems: list[str] = []
    for name, sub in spec_props.items():
        here = f"{path}.{name}" if path else name
        if name not in impl_props:
            if not open_ended:
                problems.append(
                    f"parameter {here!r}: the spec declares it but the implementation "
                    f"has no such parameter"
                )
            continue
        if name not in spec_required and name in impl_required:
            problems.append(
                f"parameter {here!r}: optional in the spec (the model may leave it out) but "
                f"required by the implementation; give it a default"
            )
        if isinstance(sub, dict):
            problems += _compare(sub, impl_props[name], root, here)
    for name in sorted(impl_required - set(spec_props)):
        here = f"{path}.{name}" if path else name
        problems.append(
            f"parameter {here!r}: required by the implementation but the spec does not "
            f"declare it, so the model never sends it"
        )
    return problems


def _types(schema: dict[str, Any], root: dict[str, Any]) -> list[str] | None:
    """The JSON types a schema admits, or ``None`` for any."""
    schema = _resolve(schema, root)
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            found: list[str] = []
            for branch in branches:
                sub = _types(branch, root) if isinstance(branch, dict) else None
                if sub is None:
                    return None
                found += [t for t in sub if t not in found]
            return found
    for key in ("enum", "const"):
        if key in schema:
            values = schema[key] if key == "enum" else [schema[key]]
            return sorted({_json_type(v) for v in values})
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (pydantic puts models under ``$defs``)."""
    seen = 0
    while isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = target if isinstance(target, dict) else {}
        seen += 1
    return schema


def _object_branch(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """For ``Optional[Model]`` (an ``anyOf``), the branch that describes the object."""
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, []):
            resolved = _resolve(branch, root) if isinstance(branch, dict) else {}
            if resolved.get("type") == "object" or "properties" in resolved:
                return resolved
    return schema


def _has(types: list[str] | None, kind: str) -> bool:
    return types is None or kind in types


def _describe(types: list[str] | None) -> str:
    return "any value" if types is None else " or ".join(types)


def _takes_any_keyword(function: ToolFunction) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


__all__ = ["bind_tool", "bind_tools", "parameter_mismatches"]

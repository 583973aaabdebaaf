"""What the provider formats share: unpacking tool lists and collecting every problem."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..._tool_schema import schema_problems
from ...errors import ConfigurationError
from ...tools import ToolSpec
from .names import OPENAI_NAMES, NameMap, NamePolicy

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def tool_items(data: Any, keys: tuple[str, ...]) -> list[Any]:
    """The tool definitions in ``data``: a list, one definition, or a record under ``keys``.

    JSON-RPC responses (``{"result": {...}}``) are unwrapped first, so an MCP ``tools/list``
    reply can be passed as received.
    """
    if isinstance(data, dict) and isinstance(data.get("result"), dict) and "jsonrpc" in data:
        data = data["result"]
    if isinstance(data, dict):
        for key in keys:
            if isinstance(data.get(key), list):
                return list(data[key])
        return [data]
    if isinstance(data, list):
        return list(data)
    raise ConfigurationError([f"expected a list of tools or a record, got {type(data).__name__}"],
                             subject="tool definitions")


def import_all(
    items: Iterable[Any],
    read: Callable[[Any, str], tuple[str, str, Any, Any]],
    names: NameMap | None,
    subject: str,
) -> list[ToolSpec]:
    """Read every item with ``read(item, where) -> (name, description, params, result)``.

    Problems of every item are collected into one :class:`ConfigurationError`; names are
    passed through ``names`` (a fresh OpenAI-safe map by default) so specs bind as tools.
    """
    items = list(items)
    names = names if names is not None else NameMap(OPENAI_NAMES)
    # Names the policy allows keep themselves; mapped names must not take them first.
    given = [i["name"] for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)]
    given += [
        i["function"]["name"] for i in items
        if isinstance(i, dict) and isinstance(i.get("function"), dict)
        and isinstance(i["function"].get("name"), str)
    ]
    for name in sorted(given, key=lambda n: not names.policy.allows(n)):
        names.safe(name)
    specs: list[ToolSpec] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        where = f"tool {index}"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object, got {type(item).__name__}")
            continue
        try:
            name, description, parameters, result = read(item, where)
        except _Problem as exc:
            problems.append(str(exc))
            continue
        found = _schema_problems(name, parameters, result)
        if found:
            problems.extend(found)
            continue
        specs.append(ToolSpec(names.safe(name), description, parameters, result))
    if problems:
        raise ConfigurationError(problems, subject=subject)
    return specs


def export_each(
    specs: Iterable[ToolSpec], names: NameMap | None, policy: NamePolicy, schema_key: str
) -> list[tuple[ToolSpec, dict[str, Any]]]:
    """Each spec with the part every format shares: safe name, description, argument schema.

    Names go through ``names`` (the caller's map, to reverse calls later) or a fresh one.
    """
    specs = list(specs)
    mapping = names if names is not None else NameMap(policy, [s.name for s in specs])
    out = []
    for spec in specs:
        entry: dict[str, Any] = {"name": mapping.safe(spec.name)}
        if spec.description:
            entry["description"] = spec.description
        entry[schema_key] = spec.parameters
        out.append((spec, entry))
    return out


class _Problem(Exception):
    """One definition that cannot be read (collected, then reported with the others)."""


def problem(message: str) -> _Problem:
    return _Problem(message)


def field(item: dict[str, Any], key: str, kind: type, where: str, default: Any = None) -> Any:
    """``item[key]`` checked to be a ``kind`` (``default`` when absent and not ``None``)."""
    if key not in item or item[key] is None:
        if default is None:
            raise problem(f"{where}: {key!r} is missing")
        return default
    value = item[key]
    if not isinstance(value, kind):
        raise problem(f"{where}: {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _schema_problems(name: str, parameters: Any, result: Any) -> list[str]:
    found = []
    if parameters.get("type", "object") != "object":
        found.append(f"tool {name!r}: the parameters schema must be of type 'object'")
    if result is not None and not isinstance(result, dict):
        found.append(f"tool {name!r}: the output schema must be an object")
        result = None
    # Imported lists are untrusted: each schema is checked with the refusing compiler, so a
    # $ref to a URL or a file is a problem reported here and is never fetched.
    for label, schema in (("parameters", parameters), ("output schema", result)):
        if schema is not None:
            found.extend(f"tool {name!r}: {label}: {p}" for p in schema_problems(schema))
    return found

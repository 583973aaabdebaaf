"""The ``bfcl`` dialect: Berkeley Function Calling Leaderboard function docs as tool specs.

BFCL (``bfcl-eval``) ships thousands of real function definitions written in a dialect of
JSON Schema that a strict validator rejects or misreads:

=============================  ==================================================================
BFCL                           JSON Schema produced here
=============================  ==================================================================
``"type": "dict"``             ``"object"`` (``HashMap`` too)
``"float"`` / ``"double"``     ``"number"``
``"tuple"``                    ``"array"`` (``Array`` and ``ArrayList`` too)
``"any"`` / ``""``             no ``type`` at all: any JSON value
Java names                     ``String``/``char`` -> string, ``long``/``int`` -> integer,
                               ``Boolean`` -> boolean, ...
``"optional": true`` on a      the property leaves the parent's ``required`` (a list-valued
property                       ``optional`` on the object names such properties)
``"required": true`` on a      the property joins the parent's ``required`` list (``false``
property                       removes it)
a ``default`` that violates    dropped from the schema and kept in
its own schema                 :attr:`BfclFunction.dropped_defaults` (``None`` for a string,
                               a value outside the ``enum``, ``"5 years"`` for an integer)
a name with dots               a provider-safe name from :mod:`toolcycle.spec.formats.names`; the
                               original stays in :attr:`BfclFunction.bfcl_name`
=============================  ==================================================================

Objects stay open, as JSON Schema reads the docs (BFCL never says ``additionalProperties``);
``closed=True`` closes the top-level parameters object, for docs whose implementation is a
Python signature that would raise on an unknown keyword (the multi-turn backends).

Java and JavaScript docs (``language="java"``/``"javascript"``) describe parameters that BFCL
passes "in string representation": a value may be the typed JSON value (``true``, ``[1, 2]``)
or a source expression naming one (``"docFields"``, ``"ResultSet.CONCUR_READ_ONLY"``), so
every typed parameter there also accepts a string.

Why dropped defaults are remembered: models copy the documented default into their call
(``unit=None``). :meth:`BfclFunction.omit_default_repeats` is the explicit, opt-in policy that
treats such an argument as omitted, as the function itself would; the validator alone stays
strict.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..._tool_schema import accepts, schema_problems
from ...errors import ConfigurationError
from ...tools import ToolSpec
from ._common import tool_items
from .names import OPENAI_NAMES, NameMap, NamePolicy

Language = Literal["python", "java", "javascript"]
LANGUAGES: tuple[str, ...] = ("python", "java", "javascript")

#: BFCL (and Java/JavaScript) type names -> JSON Schema type names; ``None`` means "no type".
TYPE_NAMES: dict[str, str | None] = {
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "Map": "object",
    "string": "string",
    "String": "string",
    "char": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "Integer": "integer",
    "Long": "integer",
    "short": "integer",
    "byte": "integer",
    "float": "number",
    "double": "number",
    "number": "number",
    "Float": "number",
    "Double": "number",
    "boolean": "boolean",
    "Boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "tuple": "array",
    "list": "array",
    "Array": "array",
    "ArrayList": "array",
    "List": "array",
    "null": "null",
    "any": None,
    "Any": None,
    "": None,
}

_TRUE_WORDS = frozenset({"true", "yes", "1"})


@dataclass(frozen=True, slots=True)
class BfclFunction:
    """One BFCL function doc imported as a tool spec.

    ``spec.name`` is provider-safe; ``bfcl_name`` is the name BFCL (and its ground truth)
    uses. ``dropped_defaults`` maps a top-level parameter to the default the doc declared
    for it but that its own schema rejects; nested ones are keyed by JSON pointer.
    """

    spec: ToolSpec
    bfcl_name: str
    dropped_defaults: Mapping[str, Any] = field(default_factory=dict)

    def omit_default_repeats(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` without the top-level ones that only repeat a dropped default.

        This is the lenient policy: ``unit=None`` where the doc says ``"default": null`` for
        a string means "use the default", i.e. the parameter is omitted. Only exact repeats
        of a default the schema rejects are removed; anything else is left for the
        validator to judge.
        """
        return {
            name: value
            for name, value in arguments.items()
            if not (
                name in self.dropped_defaults
                and _same_json(value, self.dropped_defaults[name])
            )
        }


def import_function(
    doc: Mapping[str, Any],
    names: NameMap | None = None,
    *,
    language: Language = "python",
    closed: bool = False,
) -> BfclFunction:
    """Convert one BFCL function doc (``name``, ``description``, ``parameters``).

    ``names`` is the map that assigns safe names; pass the same map for every function of
    one tool set so that colliding names stay distinct and calls map back. ``language`` is
    the BFCL category's language; ``closed`` rejects unknown top-level parameters. Raises
    :class:`~toolcycle.errors.ConfigurationError` listing every problem of the doc.
    """
    if language not in LANGUAGES:
        raise ConfigurationError([f"language must be one of {LANGUAGES}, got {language!r}"])
    names = names if names is not None else NameMap(OPENAI_NAMES)
    problems: list[str] = []
    bfcl_name = doc.get("name")
    if not isinstance(bfcl_name, str) or not bfcl_name:
        problems.append("'name' must be a non-empty string")
        bfcl_name = ""
    raw = doc.get("parameters", {"type": "dict", "properties": {}})
    dropped: dict[str, Any] = {}
    schema = _convert(raw, "", problems, dropped) if isinstance(raw, Mapping) else {}
    if language != "python":
        for sub in schema.get("properties", {}).values():
            _allow_source_strings(sub)
    if not isinstance(raw, Mapping):
        problems.append("'parameters' must be an object")
    if schema.get("type", "object") != "object":
        problems.append(f"'parameters' must describe an object, got type {schema['type']!r}")
    schema["type"] = "object"
    schema.setdefault("properties", {})
    if closed:
        schema["additionalProperties"] = False
    if not problems:  # untrusted: a $ref outside the schema is refused here, never fetched
        problems.extend(f"parameters: {p}" for p in schema_problems(schema))
    if problems:
        raise ConfigurationError(problems, subject=f"BFCL function {bfcl_name!r}")
    description = doc.get("description", "")
    spec = ToolSpec(
        name=names.safe(bfcl_name),
        description=description if isinstance(description, str) else str(description),
        parameters=schema,
    )
    return BfclFunction(spec=spec, bfcl_name=bfcl_name, dropped_defaults=_keyed(dropped))


def import_functions(
    docs: Iterable[Mapping[str, Any]],
    policy: NamePolicy = OPENAI_NAMES,
    *,
    language: Language = "python",
    closed: bool = False,
) -> tuple[list[BfclFunction], NameMap]:
    """Convert a tool set; returns the functions and the name map that reverses the names."""
    docs = list(docs)
    names = NameMap(policy, [d["name"] for d in docs if isinstance(d.get("name"), str)])
    functions = [import_function(d, names, language=language, closed=closed) for d in docs]
    return functions, names


def import_bfcl_tools(
    data: Any,
    names: NameMap | None = None,
    *,
    language: Language = "python",
    closed: bool = False,
) -> list[ToolSpec]:
    """Tool specs from BFCL docs: a list, one doc, or a BFCL entry (its ``function`` list).

    The same call shape as :func:`~toolcycle.spec.formats.openai.import_openai_tools`; every
    problem of every doc is reported in one :class:`~toolcycle.errors.ConfigurationError`.
    Use :func:`import_functions` to keep the dropped defaults as well.
    """
    docs = tool_items(data, ("function",))
    names = names if names is not None else NameMap(OPENAI_NAMES)
    for name in sorted(
        (d["name"] for d in docs if isinstance(d, Mapping) and isinstance(d.get("name"), str)),
        key=lambda n: not names.policy.allows(n),
    ):
        names.safe(name)  # allowed names keep themselves before mapped ones are assigned
    specs: list[ToolSpec] = []
    problems: list[str] = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, Mapping):
            problems.append(f"function {index}: expected an object, got {type(doc).__name__}")
            continue
        try:
            specs.append(import_function(doc, names, language=language, closed=closed).spec)
        except ConfigurationError as exc:
            problems.extend(f"function {index}: {p}" for p in exc.problems)
    if problems:
        raise ConfigurationError(problems, subject="BFCL function docs")
    return specs


def convert_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Only the schema conversion (dropped defaults discarded); raises on unknown types."""
    problems: list[str] = []
    schema = _convert(parameters, "", problems, {})
    if problems:
        raise ConfigurationError(problems, subject="BFCL parameters")
    return schema


# -- conversion ------------------------------------------------------------------------------


def _convert(
    node: Mapping[str, Any], pointer: str, problems: list[str], dropped: dict[str, Any]
) -> dict[str, Any]:
    """Convert one schema node; children first, then this node's own default check."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("optional", "required", "default"):
            continue  # resolved below, once the shape of the node is known
        if key == "type":
            converted = _convert_type(value, pointer, problems)
            if converted is not None:
                out["type"] = converted
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {
                name: _convert(sub, f"{pointer}/properties/{name}", problems, dropped)
                if isinstance(sub, Mapping)
                else {}
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            out["items"] = _convert(value, f"{pointer}/items", problems, dropped)
        elif key == "items" and isinstance(value, list):
            # Draft 4 tuple form: positional item schemas are prefixItems in Draft 2020-12.
            out["prefixItems"] = [
                _convert(sub, f"{pointer}/items/{i}", problems, dropped)
                for i, sub in enumerate(value)
                if isinstance(sub, Mapping)
            ]
        elif key == "additionalProperties" and isinstance(value, Mapping):
            out[key] = _convert(value, f"{pointer}/{key}", problems, dropped)
        else:
            out[key] = copy.deepcopy(value)
    _resolve_required(node, out)
    if "default" in node:
        default = node["default"]
        if accepts(out, default):
            out["default"] = copy.deepcopy(default)
        else:
            dropped[pointer] = copy.deepcopy(default)
    return out


def _allow_source_strings(node: dict[str, Any]) -> None:
    """Let a typed Java/JavaScript value also be given as a source expression (a string)."""
    t = node.get("type")
    if t is None or t == "string":
        pass
    elif isinstance(t, list):
        if "string" not in t:
            node["type"] = [*t, "string"]
    else:
        node["type"] = [t, "string"]
    for sub in (node.get("properties") or {}).values():
        _allow_source_strings(sub)
    if isinstance(node.get("items"), dict):
        _allow_source_strings(node["items"])


def _keyed(dropped: dict[str, Any]) -> dict[str, Any]:
    """Top-level parameters by name, deeper nodes by JSON pointer."""
    keyed: dict[str, Any] = {}
    for pointer, value in dropped.items():
        name = pointer.removeprefix("/properties/")
        keyed[name if "/" not in name else pointer] = value
    return keyed


def _convert_type(value: Any, pointer: str, problems: list[str]) -> Any:
    where = pointer or "(root)"
    if isinstance(value, list):
        mapped = [_convert_type(v, pointer, problems) for v in value]
        if any(m is None for m in mapped):
            return None  # one alternative is "any": the union accepts everything
        return list(dict.fromkeys(mapped))
    if not isinstance(value, str):
        problems.append(f"{where}: 'type' must be a string, got {value!r}")
        return None
    if value not in TYPE_NAMES:
        problems.append(f"{where}: unknown BFCL type {value!r}")
        return None
    return TYPE_NAMES[value]


def _resolve_required(node: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Merge BFCL's three ways of saying "required" into one JSON Schema ``required`` list."""
    required = node.get("required")
    names = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    properties: Mapping[str, Any] = node.get("properties") or {}
    if not isinstance(properties, Mapping):
        properties = {}
    for name, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        flag = sub.get("required")
        if isinstance(flag, bool | str):
            if _truthy(flag) and name not in names:
                names.append(name)
            elif not _truthy(flag) and name in names:
                names.remove(name)
        if _truthy(sub.get("optional")) and name in names:
            names.remove(name)
    optional = node.get("optional")
    if isinstance(optional, list):
        names = [n for n in names if n not in optional]
    if names or isinstance(required, list):
        out["required"] = list(dict.fromkeys(names))


def _truthy(flag: Any) -> bool:
    if isinstance(flag, bool):
        return flag
    if isinstance(flag, str):
        return flag.strip().lower() in _TRUE_WORDS
    return False


def _same_json(left: Any, right: Any) -> bool:
    """Equality as JSON sees it: ``True`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _same_json(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same_json(left[k], right[k]) for k in left)
    return bool(left == right) and (left is None) == (right is None)

"""Gram-style tool signatures <-> JSON Schema.

A signature is a curried chain of named, typed parameters ending in the result type::

    (personName::Text {default:"world"})==>(::String)
    (repetitions::Integer)==>(name::String)==>(::String)
    (tags::[String])==>(address::Object {fields: [{name: "zip", type: "Integer"}]})==>(::Boolean)

Each parameter becomes a property of the arguments' JSON Schema (an object), in chain order.
Types: ``Text``/``String`` -> string, ``Int``/``Integer`` -> integer, ``Double``/``Number`` ->
number, ``Bool``/``Boolean`` -> boolean, ``Object`` -> object (a record when it has
``fields``), ``[T]`` or ``Array`` (with ``items``) -> array, ``Any`` -> any value. A parameter's
record may hold ``description``, ``default`` (copied into the schema; makes the parameter
optional), ``optional: true`` (optional without a default), ``enum``, ``fields`` and ``items``.
Fields and items are *type expressions*: a type name string (``"String"``, ``"[Integer]"``)
or a record ``{type: "Object", fields: [...], description: ..., ...}``; a field adds ``name``.

Parsing goes through :mod:`toolcycle.spec.gram_syntax` (the gram project's parser after
normalising ``::`` and ``[T]``), so both ``(x:String)`` and ``(x::String)`` are read. Errors are
:class:`SignatureError`, naming the parameter, the line and column and what was expected.

The reverse direction, :func:`format_signature`, covers exactly the schemas the notation can
express and raises :class:`NotExpressible` for the rest (``anyOf``, ``$ref``, ``minimum``,
``additionalProperties``, ...): a signature never silently drops part of a schema.
:mod:`toolcycle.spec` then keeps such a schema as JSON inside the gram file instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._tool_schema import compile_validator
from . import gram_syntax as gram
from .gram_syntax import Document, GramError, RawPattern

#: Gram type names and the JSON Schema type each one means.
SCALAR_TYPES: dict[str, str] = {
    "Text": "string",
    "String": "string",
    "Int": "integer",
    "Integer": "integer",
    "Double": "number",
    "Number": "number",
    "Bool": "boolean",
    "Boolean": "boolean",
}
CONTAINER_TYPES: dict[str, str] = {"Object": "object", "Array": "array"}
ANY_TYPE = "Any"
#: The name :func:`format_signature` writes for each JSON type.
CANONICAL_NAMES: dict[str, str] = {
    "string": "String",
    "integer": "Integer",
    "number": "Number",
    "boolean": "Boolean",
    "object": "Object",
    "array": "Array",
}
TYPE_NAMES = (*SCALAR_TYPES, *CONTAINER_TYPES, ANY_TYPE)

_TYPE_KEYS = ("description", "enum", "default", "items", "fields")
_PARAM_KEYS = (*_TYPE_KEYS, "optional")
_FIELD_KEYS = ("name", "type", *_PARAM_KEYS)
_RESULT_KEYS = ("description", "enum", "items", "fields")
_SCHEMA_KEYS = frozenset(
    {"type", "description", "enum", "default", "items", "properties", "required"}
)


class SignatureError(GramError):
    """A signature that cannot be read, or a schema that cannot be written as one."""


class NotExpressible(SignatureError):
    """The JSON Schema uses something a signature cannot say; ``reason`` says what."""


@dataclass(frozen=True, slots=True)
class Signature:
    """A parsed signature: the arguments' JSON Schema and the result's (``None``: ``Any``)."""

    parameters: dict[str, Any]
    result: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class _Where:
    """Where in the text a meaning error belongs: a readable path plus needles to locate it."""

    doc: Document | None
    path: str = ""
    needles: tuple[str, ...] = ()

    def child(self, label: str, needle: str | None = None) -> _Where:
        path = f"{self.path}, {label}" if self.path else label
        needles = (*self.needles, needle) if needle else self.needles
        return _Where(self.doc, path, needles)

    def at(self, needle: str) -> _Where:
        """The same place, pointed more precisely (the path stays as it is)."""
        return _Where(self.doc, self.path, (*self.needles, needle))

    def error(self, message: str) -> SignatureError:
        text = f"{self.path}: {message}" if self.path else message
        if self.doc is None:
            return SignatureError(text)
        line, column = self.doc.locate(*self.needles)
        return SignatureError(text, line, column, self.doc.source)


# -- text -> schema -------------------------------------------------------------------------


def parse_signature(text: str, source: str = "") -> Signature:
    """Read a signature such as ``(a::Integer)==>(b::String)==>(::String)``."""
    try:
        doc = gram.parse(text, source)
    except GramError as exc:
        raise SignatureError(exc.message, exc.line, exc.column, exc.source) from exc
    if len(doc.patterns) != 1:
        raise SignatureError(
            f"expected one signature chain like (name::Type)==>(::Result), "
            f"found {len(doc.patterns)} top-level elements",
            1 if doc.patterns else 0, 1 if doc.patterns else 0, source,
        )
    return _signature(doc.patterns[0], _Where(doc))


def signature_to_schema(text: str) -> dict[str, Any]:
    """The arguments' JSON Schema of a signature (the result type is dropped)."""
    return parse_signature(text).parameters


def signature_from_pattern(
    pattern: RawPattern, doc: Document | None = None, path: str = "", needles: tuple[str, ...] = ()
) -> Signature:
    """Interpret a parsed chain (as :mod:`toolcycle.spec.gram_format` finds it in a tool pattern).

    ``doc``, ``path`` and ``needles`` place errors: the document, a readable prefix such as
    ``tool 'sayHello'`` and regexes that find the enclosing element in the text.
    """
    return _signature(pattern, _Where(doc, path, needles))


def _signature(pattern: RawPattern, where: _Where) -> Signature:
    nodes = _chain(pattern)
    *params, result_node = nodes
    if len(params) == 1 and _is_unit(params[0]):
        params = []
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, node in enumerate(params, start=1):
        subject = node["subject"]
        pname = subject["identity"]
        here = where.child(
            f"parameter {index}" + (f" {pname!r}" if pname else ""),
            r"\(\s*`?" + re.escape(pname),
        )
        if node["elements"]:
            raise here.error("expected a parameter node like (name::Type), found a nested pattern")
        if not pname:
            raise here.error("the parameter has no name; expected (name::Type)")
        if pname in properties:
            raise here.error("an earlier parameter already has this name")
        props = gram.to_python(subject["properties"], pname)
        label = _one_label(subject["labels"], here)
        schema, is_required = _typed_schema(label, props, here, _PARAM_KEYS)
        properties[pname] = schema
        if is_required:
            required.append(pname)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return Signature(parameters, _result_schema(result_node, where))


def _chain(pattern: RawPattern) -> list[RawPattern]:
    """Flatten ``a==>b==>c`` (the parser nests it as ``[[a, b], c]``) into ``[a, b, c]``."""
    if _is_link(pattern):
        left, right = pattern["elements"]
        return _chain(left) + _chain(right)
    return [pattern]


def _is_link(pattern: RawPattern) -> bool:
    subject = pattern["subject"]
    return (
        len(pattern["elements"]) == 2
        and not subject["identity"]
        and not subject["labels"]
        and not subject["properties"]
    )


def _is_unit(node: RawPattern) -> bool:
    subject = node["subject"]
    return not (subject["identity"] or subject["labels"] or subject["properties"])


def _result_schema(node: RawPattern, where: _Where) -> dict[str, Any] | None:
    subject = node["subject"]
    here = where.child("result", r"\(\s*" + re.escape(subject["identity"]) + r"`?\s*:")
    if node["elements"]:
        raise here.error("expected a result node like (::Type), found a nested pattern")
    props = gram.to_python(subject["properties"], "result")
    label = _one_label(subject["labels"], here)
    if label == ANY_TYPE and not props and not subject["identity"]:
        return None
    schema, _ = _typed_schema(label, props, here, _RESULT_KEYS)
    if subject["identity"]:
        schema = {"title": subject["identity"], **schema}
    return schema


def _one_label(labels: list[str], where: _Where) -> str:
    if len(labels) != 1:
        found = "no type" if not labels else f"{len(labels)} labels ({', '.join(labels)})"
        raise where.error(f"expected exactly one type after '::', found {found}")
    return labels[0]


def _typed_schema(
    label: str, props: dict[str, Any], where: _Where, allowed: tuple[str, ...]
) -> tuple[dict[str, Any], bool]:
    """The schema of one typed element and whether it is required."""
    unknown = [key for key in props if key not in allowed]
    if unknown:
        raise where.at(re.escape(unknown[0])).error(
            f"unknown propert{'ies' if len(unknown) > 1 else 'y'} {', '.join(map(repr, unknown))};"
            f" expected any of {', '.join(allowed)}"
        )
    schema = _label_schema(label, where)
    if "description" in props:
        if not isinstance(props["description"], str):
            raise where.error("description must be a string")
        schema = {**schema, "description": props["description"]}
    if "fields" in props:
        if schema.get("type") != "object" or "properties" in schema:
            raise where.error(f"'fields' needs type Object, not {label}")
        schema.update(_record(props["fields"], where))
    if "items" in props:
        if schema.get("type") != "array" or "items" in schema:
            raise where.error(f"'items' needs type Array, not {label}")
        schema["items"] = _expression_schema(props["items"], where.child("items"))
    if "enum" in props:
        if not isinstance(props["enum"], list) or not props["enum"]:
            raise where.error("enum must be a non-empty list of values")
        schema["enum"] = props["enum"]
    optional = props.get("optional", False)
    if optional is not False and optional is not True:
        raise where.error(f"optional must be true or false, got {optional!r}")
    if "default" in props:
        _check_default(schema, props["default"], where.at("default"))
        schema["default"] = props["default"]
        if optional is False and "optional" in props:
            raise where.error("a parameter with a default is optional; drop 'optional: false'")
    return schema, not optional and "default" not in props


def _label_schema(label: str, where: _Where) -> dict[str, Any]:
    label = label.strip()
    if label.startswith("["):
        if not label.endswith("]") or len(label) < 3:
            raise where.at(re.escape(label)).error(
                f"expected a list type like [String], found {label!r}"
            )
        return {"type": "array", "items": _label_schema(label[1:-1], where)}
    if label in SCALAR_TYPES:
        return {"type": SCALAR_TYPES[label]}
    if label in CONTAINER_TYPES:
        return {"type": CONTAINER_TYPES[label]}
    if label == ANY_TYPE:
        return {}
    raise where.at(re.escape(label)).error(
        f"unknown type {label!r}; expected one of {', '.join(TYPE_NAMES)} or [T]"
    )


def _record(fields: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(fields, list):
        raise where.error("'fields' must be a list of {name: ..., type: ...} records")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, entry in enumerate(fields, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise where.error(f"field {index} must be a record with a name, like "
                              '{name: "zip", type: "Integer"}')
        fname = entry["name"]
        here = where.child(f"field {fname!r}", r"name\s*:\s*[\"']" + re.escape(fname))
        if fname in properties:
            raise here.error("an earlier field already has this name")
        if not isinstance(entry.get("type"), str):
            raise here.error("a field needs a type, like type: \"String\"")
        props = {k: v for k, v in entry.items() if k not in ("name", "type")}
        schema, is_required = _typed_schema(entry["type"], props, here, _PARAM_KEYS)
        properties[fname] = schema
        if is_required:
            required.append(fname)
    record: dict[str, Any] = {"properties": properties}
    if required:
        record["required"] = required
    return record


def type_expression_schema(
    expression: Any, doc: Document | None = None, path: str = "", needles: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The schema of a type expression: ``"String"``, ``"[Integer]"`` or a ``{type: ...}`` map."""
    return _expression_schema(expression, _Where(doc, path, needles))


def _expression_schema(expression: Any, where: _Where) -> dict[str, Any]:
    if isinstance(expression, str):
        return _label_schema(expression, where)
    if isinstance(expression, dict) and isinstance(expression.get("type"), str):
        props = {k: v for k, v in expression.items() if k != "type"}
        schema, _ = _typed_schema(expression["type"], props, where, _TYPE_KEYS)
        return schema
    raise where.error(
        f"expected a type name like \"String\" or a record like {{type: \"Object\", fields: "
        f"[...]}}, found {expression!r}"
    )


def _check_default(schema: dict[str, Any], default: Any, where: _Where) -> None:
    try:
        valid = compile_validator(schema).is_valid(default)  # never fetches a $ref
    except Exception:  # a schema the validator cannot compile is not this check's subject
        return
    if not valid:
        raise where.error(f"default {default!r} does not match the declared type")


# -- schema -> text -------------------------------------------------------------------------


def format_signature(parameters: dict[str, Any], result: dict[str, Any] | None = None) -> str:
    """Write an arguments schema (and result schema) as a signature.

    Raises :class:`NotExpressible` when the schema holds anything the notation cannot say;
    what it returns parses back to exactly ``parameters`` and ``result``.
    """
    properties, required = _object_parts(parameters, "parameters", top=True)
    nodes = []
    for pname, schema in properties.items():
        label, props = _type_parts(schema, pname, pname in required)
        nodes.append(_node(pname, label, props))
    if result is None:
        nodes.append("(::Any)")
    else:
        title = result.get("title")
        if title is not None and (not isinstance(title, str) or not title):
            raise NotExpressible("result: a title must be a non-empty string")
        label, props = _type_parts(
            {k: v for k, v in result.items() if k != "title"}, "result", None
        )
        if "default" in props:
            raise NotExpressible("result: a default has no meaning for a result")
        if label == ANY_TYPE and not props and title is None:
            raise NotExpressible("result: an empty schema reads back as no result schema")
        nodes.append(_node(title or "", label, props))
    return "==>".join(nodes)


def schema_type_expression(schema: dict[str, Any]) -> Any:
    """A schema as a type expression (a name string, or a map when it carries more)."""
    label, props = _type_parts(schema, "schema", None)
    return label if not props else {"type": label, **props}


def _node(identity: str, label: str, props: dict[str, Any]) -> str:
    if "\n" in identity:
        raise NotExpressible(f"the name {identity!r} spans lines")
    head = (gram.name(identity) if identity else "") + "::" + _label_text(label)
    return f"({head} {gram.record(props)})" if props else f"({head})"


def _label_text(label: str) -> str:
    return label if label.startswith("[") or re.fullmatch(r"\w+", label) else gram.name(label)


def _object_parts(
    schema: dict[str, Any], where: str, top: bool = False
) -> tuple[dict[str, Any], list[str]]:
    extra = set(schema) - {"type", "properties", "required"} - (set() if top else _SCHEMA_KEYS)
    if extra:
        raise NotExpressible(f"{where}: {', '.join(sorted(extra))} cannot be written")
    if schema.get("type") != "object":
        raise NotExpressible(f"{where}: expected type 'object'")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise NotExpressible(f"{where}: expected 'properties'")
    required = schema.get("required", [])
    in_order = [name for name in properties if name in required]
    if "required" in schema and (not required or required != in_order):
        raise NotExpressible(
            f"{where}: 'required' must list existing properties in their order, non-empty"
        )
    return properties, required


def _type_parts(
    schema: Any, where: str, required: bool | None
) -> tuple[str, dict[str, Any]]:
    """The label and property record for ``schema``; ``required`` is None outside fields."""
    if not isinstance(schema, dict):
        raise NotExpressible(f"{where}: a schema must be an object")
    unknown = set(schema) - _SCHEMA_KEYS
    if unknown:
        raise NotExpressible(f"{where}: {', '.join(sorted(unknown))} cannot be written")
    kind = schema.get("type")
    props: dict[str, Any] = {}
    if "description" in schema:
        if not isinstance(schema["description"], str):
            raise NotExpressible(f"{where}: description must be a string")
        props["description"] = schema["description"]
    if kind is None:
        label = ANY_TYPE
        if {"items", "properties", "required"} & set(schema):
            raise NotExpressible(f"{where}: items/properties without a type")
    elif not isinstance(kind, str) or kind not in CANONICAL_NAMES:
        raise NotExpressible(f"{where}: type {kind!r} cannot be written")
    else:
        label = CANONICAL_NAMES[kind]
        if {"properties", "required"} & set(schema) and kind != "object":
            raise NotExpressible(f"{where}: properties on a non-object")
        if "items" in schema and kind != "array":
            raise NotExpressible(f"{where}: items on a non-array")
    if kind == "object" and "properties" in schema:
        properties, req = _object_parts(schema, where)
        props["fields"] = [
            _field(fname, sub, fname in req, f"{where}.{fname}")
            for fname, sub in properties.items()
        ]
    if kind == "array" and "items" in schema:
        item_label, item_props = _type_parts(schema["items"], f"{where}[]", None)
        if item_props:
            props["items"] = {"type": item_label, **item_props}
        else:
            label = f"[{item_label}]"
    if "enum" in schema:
        if not isinstance(schema["enum"], list) or not schema["enum"]:
            raise NotExpressible(f"{where}: enum must be a non-empty list")
        props["enum"] = schema["enum"]
    if "default" in schema:
        if required:
            raise NotExpressible(f"{where}: a required parameter with a default")
        props["default"] = schema["default"]
    elif required is False:
        props["optional"] = True
    _check_writable(props, where)
    return label, props


def _field(name: str, schema: Any, required: bool, where: str) -> dict[str, Any]:
    label, props = _type_parts(schema, where, required)
    return {"name": name, "type": label, **props}


def _check_writable(props: dict[str, Any], where: str) -> None:
    try:
        gram.record(props)
    except GramError as exc:
        raise NotExpressible(f"{where}: {exc.message}") from exc

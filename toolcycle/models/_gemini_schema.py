"""JSON Schema (as tools declare their parameters) to the Gemini API's ``Schema`` object.

Private to :mod:`toolcycle.models.google`. Gemini's ``functionDeclarations[].parameters`` is
an OpenAPI-3.0 subset, not JSON Schema: no ``$ref``, no ``type`` lists, no ``const``, enums of
strings only, no ``additionalProperties`` schemas. What can be rewritten without changing the
meaning is rewritten here:

- local ``$ref`` (``#/$defs/...``, ``#/definitions/...``) is inlined (a recursive one cannot be);
- ``type: [X, "null"]`` and ``anyOf``/``oneOf`` with a ``{"type": "null"}`` branch become
  ``nullable``; other ``type`` lists become ``anyOf``; ``oneOf`` becomes ``anyOf`` (the model
  writes one of them either way; toolcycle validates the arguments against the original);
- a string ``const`` becomes a one-value ``enum``; ``allOf`` of one schema is that schema;
- annotations Gemini has no field for (``$schema``, ``$comment``, ``examples``...) and
  ``additionalProperties: false`` are dropped, and so are constraints the API cannot state
  but toolcycle's own argument validation still enforces (``exclusiveMinimum``,
  ``multipleOf``, ``uniqueItems``...).

Anything else raises :class:`SchemaError` naming the tool, the JSON pointer and the construct,
so a tool that Gemini could only be told a lie about is refused at the edge, not mis-sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: JSON Schema keywords Gemini's Schema has under the same name and meaning.
_KEPT = (
    "description", "title", "format", "minimum", "maximum", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "minProperties", "maxProperties", "default",
    "example",
)
#: Dropped: annotations only, or constraints checked again by toolcycle's own validation.
_DROPPED = frozenset({
    "$schema", "$id", "$comment", "$anchor", "examples", "deprecated", "readOnly",
    "writeOnly", "additionalItems", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "uniqueItems", "contentEncoding", "contentMediaType", "strict", "discriminator",
})
_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")


class SchemaError(ValueError):
    """A tool's parameter schema uses a construct the Gemini API cannot express."""

    def __init__(self, tool: str, pointer: str, construct: str) -> None:
        super().__init__(
            f"tool {tool!r}: the Gemini API cannot express {construct} at "
            f"{pointer or '/'} of its parameters schema"
        )
        self.tool = tool
        self.pointer = pointer
        self.construct = construct


def to_gemini(tool: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The Gemini ``Schema`` for ``schema`` (a tool's parameters), or :class:`SchemaError`."""
    return _Converter(tool, schema).convert(schema, "", ())


class _Converter:
    def __init__(self, tool: str, root: Mapping[str, Any]) -> None:
        self.tool = tool
        self.root = root

    def fail(self, pointer: str, construct: str) -> SchemaError:
        return SchemaError(self.tool, pointer, construct)

    def resolve(self, ref: Any, pointer: str, seen: tuple[str, ...]) -> Mapping[str, Any]:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise self.fail(pointer, f"the non-local $ref {ref!r}")
        if ref in seen:
            raise self.fail(pointer, f"the recursive $ref {ref!r}")
        node: Any = self.root
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or token not in node:
                raise self.fail(pointer, f"the $ref {ref!r}, which points nowhere")
            node = node[token]
        if not isinstance(node, Mapping):
            raise self.fail(pointer, f"the $ref {ref!r}, which is not a schema")
        return node

    def convert(self, schema: Any, pointer: str, seen: tuple[str, ...]) -> dict[str, Any]:
        if schema is True or schema == {}:
            raise self.fail(pointer, "a schema that accepts any value (no type)")
        if not isinstance(schema, Mapping):
            raise self.fail(pointer, f"the schema {schema!r}")
        if "$ref" in schema:
            ref = schema["$ref"]
            target = self.resolve(ref, pointer, seen)
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return self.convert(merged, pointer, (*seen, ref))
        out: dict[str, Any] = {}
        nullable = bool(schema.get("nullable"))
        branches: list[Any] | None = None
        for key, value in schema.items():
            at = f"{pointer}/{key}"
            if key in _KEPT:
                out[key] = value
            elif key in _DROPPED or key in ("$defs", "definitions", "nullable", "type",
                                            "properties", "required", "items", "enum",
                                            "const", "anyOf", "oneOf", "allOf"):
                continue
            elif key == "additionalProperties":
                if value not in (False, True) and value != {}:
                    raise self.fail(at, "additionalProperties with a schema (a map)")
            else:
                raise self.fail(at, f"the keyword {key!r}")
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            nullable = nullable or len(kinds) < len(kind)
            if len(kinds) == 1:
                kind = kinds[0]
            else:
                kind = None
                branches = [{**schema, "type": k} for k in kinds]
        if kind is not None:
            if kind not in _TYPES:
                raise self.fail(f"{pointer}/type", f"the type {kind!r}")
            if kind == "null":
                raise self.fail(f"{pointer}/type", "a value that can only be null")
            out["type"] = kind.upper()
        for key in ("anyOf", "oneOf"):
            if key in schema:
                if branches is not None:
                    raise self.fail(f"{pointer}/{key}", f"{key} together with a type list")
                listed = schema[key]
                if not isinstance(listed, list) or not listed:
                    raise self.fail(f"{pointer}/{key}", f"a malformed {key}")
                branches = [b for b in listed if b != {"type": "null"}]
                nullable = nullable or len(branches) < len(listed)
        if "allOf" in schema:
            parts = schema["allOf"]
            if not isinstance(parts, list) or len(parts) != 1:
                raise self.fail(f"{pointer}/allOf", "allOf of more than one schema")
            inner = self.convert(parts[0], f"{pointer}/allOf/0", seen)
            out = {**inner, **out}
        if branches is not None:
            converted = [
                self.convert(b, f"{pointer}/anyOf/{i}", seen) for i, b in enumerate(branches)
            ]
            if len(converted) == 1:
                out = {**converted[0], **{k: v for k, v in out.items() if k != "type"}}
            else:
                out["anyOf"] = converted
        if nullable:
            out["nullable"] = True
        self._values(schema, out, pointer)
        self._children(schema, out, pointer, seen)
        if "type" not in out and "anyOf" not in out:
            raise self.fail(pointer, "a schema without a type")
        return out

    def _values(self, schema: Mapping[str, Any], out: dict[str, Any], pointer: str) -> None:
        values: Any = None
        if "const" in schema:
            values = [schema["const"]]
        if "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            if len(values) < len(schema["enum"]):
                out["nullable"] = True
        if values is None:
            return
        if not all(isinstance(v, str) for v in values):
            raise self.fail(f"{pointer}/{'enum' if 'enum' in schema else 'const'}",
                            "an enum of values that are not all strings")
        out["enum"] = values
        out.setdefault("type", "STRING")
        out["format"] = "enum"

    def _children(
        self, schema: Mapping[str, Any], out: dict[str, Any], pointer: str, seen: tuple[str, ...]
    ) -> None:
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            out["properties"] = {
                name: self.convert(sub, f"{pointer}/properties/{name}", seen)
                for name, sub in properties.items()
            }
            if properties:
                out["propertyOrdering"] = list(properties)
            out.setdefault("type", "OBJECT")
        required = schema.get("required")
        if required:
            out["required"] = list(required)
        items = schema.get("items")
        if items is not None:
            if isinstance(items, list):
                raise self.fail(f"{pointer}/items", "tuple validation (items as a list)")
            out["items"] = self.convert(items, f"{pointer}/items", seen)
        if "prefixItems" in schema:
            raise self.fail(f"{pointer}/prefixItems", "tuple validation (prefixItems)")

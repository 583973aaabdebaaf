"""All 8,888 BFCL function docs through the ``bfcl`` dialect: each must be a valid JSON Schema.

Also the dialect's individual rules, on small docs shaped like BFCL's (the data has no
boolean ``required`` on properties, so that rule is only checked here).
"""

from __future__ import annotations

import collections
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from toolcycle.errors import ConfigurationError
from toolcycle.spec.formats.bfcl import import_bfcl_tools, import_function, import_functions
from toolcycle.spec.formats.names import NameMap
from toolcycle.tools import TOOL_NAME_PATTERN, Tool

from .bfcl_data import all_function_docs

pytestmark = pytest.mark.conformance

_META_2020_12 = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def _defaults(schema: Any) -> list[tuple[dict[str, Any], Any]]:
    """Every (sub-schema, default) pair."""
    found: list[tuple[dict[str, Any], Any]] = []
    if isinstance(schema, dict):
        if "default" in schema:
            found.append((schema, schema["default"]))
        for key in ("properties",):
            for sub in (schema.get(key) or {}).values():
                found.extend(_defaults(sub))
        if isinstance(schema.get("items"), dict):
            found.extend(_defaults(schema["items"]))
    return found


def test_every_bfcl_function_doc_imports_as_a_valid_json_schema() -> None:
    docs = list(all_function_docs())
    assert len(docs) == 8888
    stats: collections.Counter[str] = collections.Counter()
    for index, (where, language, doc) in enumerate(docs):
        # Negative control: the doc as BFCL ships it is not a valid schema ("type": "dict").
        assert not jsonschema_rs.meta.is_valid(doc["parameters"]), where
        function = import_function(doc, language=language)
        schema = function.spec.parameters
        jsonschema_rs.meta.validate(schema)  # Draft 2020-12 meta-schema
        if index % 16 == 0:  # a second, independent implementation on a sample (it is slow)
            assert _META_2020_12.is_valid(schema), where
            stats["checked_twice"] += 1
        # No default left that its own schema rejects.
        for sub, default in _defaults(schema):
            assert jsonschema_rs.is_valid(sub, default), (where, sub)
        Tool(function.spec)  # the tool layer accepts it (name, object type, meta-schema)
        stats["renamed"] += function.spec.name != doc["name"]
        stats["dropped_defaults"] += len(function.dropped_defaults)
    assert stats["checked_twice"] == 556
    assert stats["renamed"] == 2178  # exactly the names with a dot
    assert stats["dropped_defaults"] == 2290


def test_each_tool_set_gets_distinct_safe_names_that_map_back() -> None:
    tool_sets: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for where, _, doc in all_function_docs():
        tool_sets[where].append(doc)
    assert sum(len(docs) for docs in tool_sets.values()) == 8888
    for where, docs in tool_sets.items():
        functions, names = import_functions(docs)
        safe = [f.spec.name for f in functions]
        assert len(set(safe)) == len({d["name"] for d in docs}), where
        for function, doc in zip(functions, docs, strict=True):
            assert TOOL_NAME_PATTERN.match(function.spec.name), function.spec.name
            assert names.original(function.spec.name) == doc["name"] == function.bfcl_name


# -- the dialect's rules ---------------------------------------------------------------------


def _schema(parameters: dict[str, Any], **options: Any) -> dict[str, Any]:
    doc = {"name": "f", "description": "d", "parameters": parameters}
    return import_function(doc, **options).spec.parameters


def test_bfcl_type_names_become_json_schema_types() -> None:
    schema = _schema(
        {
            "type": "dict",
            "properties": {
                "a": {"type": "float"},
                "b": {"type": "tuple", "items": {"type": "integer"}},
                "c": {"type": "any"},
                "d": {"type": "dict", "properties": {"e": {"type": "double"}}},
                "f": {"type": "HashMap"},
                "g": {"type": "ArrayList", "items": {"type": "String"}},
                "h": {"type": "long"},
                "i": {"type": "Boolean"},
                "j": {"type": "char"},
                "k": {"type": ""},
            },
            "required": ["a"],
        }
    )
    props = schema["properties"]
    assert schema["type"] == "object"
    assert props["a"] == {"type": "number"}
    assert props["b"] == {"type": "array", "items": {"type": "integer"}}
    assert props["c"] == {} and props["k"] == {}
    assert props["d"] == {"type": "object", "properties": {"e": {"type": "number"}}}
    assert props["f"] == {"type": "object"}
    assert props["g"] == {"type": "array", "items": {"type": "string"}}
    assert (props["h"], props["i"], props["j"]) == (
        {"type": "integer"}, {"type": "boolean"}, {"type": "string"}
    )
    assert "additionalProperties" not in schema
    assert _schema({"type": "dict", "properties": {}}, closed=True)["additionalProperties"] is False


def test_optional_and_boolean_required_merge_into_the_required_list() -> None:
    schema = _schema(
        {
            "type": "dict",
            "properties": {
                "a": {"type": "string", "required": True},
                "b": {"type": "string", "optional": "true"},
                "c": {"type": "string", "required": False},
                "d": {"type": "string"},
                "e": {"type": "string", "optional": True},
            },
            "required": ["b", "c", "d", "e"],
            "optional": ["d"],
        }
    )
    assert schema["required"] == ["a"]
    for prop in schema["properties"].values():
        assert "required" not in prop and "optional" not in prop


def test_defaults_that_violate_their_schema_are_dropped_and_remembered() -> None:
    doc = {
        "name": "f",
        "description": "",
        "parameters": {
            "type": "dict",
            "properties": {
                "unit": {"type": "string", "default": None},
                "period": {"type": "integer", "default": "5 years"},
                "mode": {"type": "string", "enum": ["x"], "default": "y"},
                "ok": {"type": "float", "default": 1},
                "nested": {
                    "type": "dict",
                    "properties": {"n": {"type": "integer", "default": None}},
                },
            },
        },
    }
    function = import_function(doc)
    props = function.spec.parameters["properties"]
    assert "default" not in props["unit"] and "default" not in props["mode"]
    assert props["ok"]["default"] == 1
    assert function.dropped_defaults == {
        "unit": None,
        "period": "5 years",
        "mode": "y",
        "/properties/nested/properties/n": None,
    }


def test_java_and_javascript_values_may_be_source_expressions() -> None:
    parameters = {
        "type": "dict",
        "properties": {"m": {"type": "HashMap"}, "flag": {"type": "Boolean"}},
    }
    java = Tool(import_function({"name": "A.b", "parameters": parameters}, language="java").spec)
    java.validate({"m": "docFields", "flag": True})
    java.validate({"m": {"k": 1}, "flag": "Boolean.TRUE"})
    python = Tool(import_function({"name": "A.b", "parameters": parameters}).spec)
    python.validate({"m": {"k": 1}, "flag": True})
    with pytest.raises(Exception, match="not of type"):
        python.validate({"m": "docFields"})


def test_unknown_types_and_bad_docs_are_reported_together() -> None:
    with pytest.raises(ConfigurationError) as caught:
        import_function(
            {
                "name": "",
                "parameters": {
                    "type": "dict",
                    "properties": {"a": {"type": "complex"}, "b": {"type": 3}},
                },
            }
        )
    assert len(caught.value.problems) == 3
    with pytest.raises(ConfigurationError):
        import_function({"name": "f", "parameters": {}}, language="cobol")  # type: ignore[arg-type]


def test_import_bfcl_tools_reads_a_bfcl_entry_and_reports_every_problem() -> None:
    entry = {
        "id": "x",
        "function": [
            {"name": "math.factorial", "parameters": {"type": "dict", "properties": {}}},
            {"name": "math_factorial", "parameters": {"type": "dict", "properties": {}}},
        ],
    }
    names = NameMap()
    specs = import_bfcl_tools(entry, names)
    # The allowed name keeps itself; the dotted one gets a distinct safe name that maps back.
    assert specs[1].name == "math_factorial"
    assert specs[0].name != "math_factorial"
    assert names.original(specs[0].name) == "math.factorial"
    with pytest.raises(ConfigurationError) as caught:
        import_bfcl_tools([{"name": "a", "parameters": {"type": "dict", "properties": {
            "p": {"type": "complex"}}}}, "not a doc"])
    assert len(caught.value.problems) == 2


def test_bfcl_schemas_that_convert_to_gemini_and_why_the_rest_do_not() -> None:
    """The ``google:`` adapter's JSON Schema -> Gemini Schema conversion on all 8,888 docs:
    the ones it refuses use what Gemini cannot express (non-string enums, "any" values)."""
    from toolcycle.models._gemini_schema import SchemaError, to_gemini

    refused: collections.Counter[str] = collections.Counter()
    converted = 0
    for _, language, doc in all_function_docs():
        spec = import_function(doc, language=language).spec
        try:
            to_gemini(spec.name, spec.parameters)
            converted += 1
        except SchemaError as exc:
            assert exc.tool == spec.name and exc.pointer.startswith("/")
            refused[exc.construct] += 1
    assert converted == 8405
    assert refused == {
        "an enum of values that are not all strings": 362,
        "a schema without a type": 119,
        "a schema that accepts any value (no type)": 2,
    }

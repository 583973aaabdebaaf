"""Gram signatures -> JSON Schema and back: every type, defaults, records, arrays, errors."""

from __future__ import annotations

import pytest

from toolcycle.spec.signatures import (
    NotExpressible,
    Signature,
    SignatureError,
    format_signature,
    parse_signature,
    signature_to_schema,
    type_expression_schema,
)


def one_parameter(text: str) -> dict[str, object]:
    """The schema of the single parameter ``x`` in ``text``."""
    properties = parse_signature(text).parameters["properties"]
    assert isinstance(properties, dict)
    return properties["x"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("gram_type", "json_type"),
    [
        ("Text", "string"),
        ("String", "string"),
        ("Int", "integer"),
        ("Integer", "integer"),
        ("Double", "number"),
        ("Number", "number"),
        ("Bool", "boolean"),
        ("Boolean", "boolean"),
        ("Object", "object"),
        ("Array", "array"),
    ],
)
@pytest.mark.parametrize("colons", [":", "::"])
def test_every_type_in_both_spellings(gram_type: str, json_type: str, colons: str) -> None:
    assert one_parameter(f"(x{colons}{gram_type})==>(::String)") == {"type": json_type}


def test_any_is_an_unconstrained_schema() -> None:
    assert one_parameter("(x::Any)==>(::String)") == {}


def test_the_issue_example_with_a_default() -> None:
    signature = parse_signature('(personName::Text {default:"world"})==>(::String)')
    assert signature.parameters == {
        "type": "object",
        "properties": {"personName": {"type": "string", "default": "world"}},
    }
    assert signature.result == {"type": "string"}


def test_curried_parameters_keep_their_order_and_are_required() -> None:
    schema = signature_to_schema("(repetitions::Integer)==>(name::String)==>(::String)")
    assert list(schema["properties"]) == ["repetitions", "name"]
    assert schema["required"] == ["repetitions", "name"]


def test_single_colon_and_double_colon_give_the_same_schema() -> None:
    single = parse_signature("(a:Integer)==>(b:String {default: \"x\"})==>(:Boolean)")
    double = parse_signature("(a::Integer)==>(b::String {default: \"x\"})==>(::Boolean)")
    assert single == double


def test_defaults_of_every_scalar_type_make_parameters_optional() -> None:
    schema = signature_to_schema(
        "(s::String {default: \"\"})==>(i::Integer {default: -3})==>(f::Number {default: 0.5})"
        "==>(b::Boolean {default: false})==>(n::Any {default: null})==>(r::Integer)==>(::Any)"
    )
    props = schema["properties"]
    assert [props[k]["default"] for k in "sifbn"] == ["", -3, 0.5, False, None]
    assert schema["required"] == ["r"]


def test_optional_without_default() -> None:
    schema = signature_to_schema("(q::String {optional: true})==>(::String)")
    assert schema == {"type": "object", "properties": {"q": {"type": "string"}}}


def test_description_and_enum() -> None:
    assert one_parameter(
        '(x::String {description: "unit", enum: ["celsius", "fahrenheit"]})==>(::Any)'
    ) == {"type": "string", "description": "unit", "enum": ["celsius", "fahrenheit"]}


def test_arrays_in_shorthand_nested_and_long_form() -> None:
    assert one_parameter("(x::[String])==>(::Any)") == {
        "type": "array", "items": {"type": "string"}
    }
    assert one_parameter("(x::[[Integer]])==>(::Any)") == {
        "type": "array", "items": {"type": "array", "items": {"type": "integer"}}
    }
    assert one_parameter('(x::Array {items: "Boolean"})==>(::Any)') == {
        "type": "array", "items": {"type": "boolean"}
    }


def test_records_nest_with_required_and_optional_fields() -> None:
    schema = one_parameter(
        "(x::Object {fields: ["
        '{name: "street", type: "String"},'
        '{name: "zip", type: "Integer", default: 0},'
        '{name: "geo", type: "Object", fields: [{name: "lat", type: "Number"}]},'
        '{name: "tags", type: "[String]", optional: true}'
        "]})==>(::Any)"
    )
    assert schema == {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "zip": {"type": "integer", "default": 0},
            "geo": {
                "type": "object",
                "properties": {"lat": {"type": "number"}},
                "required": ["lat"],
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["street", "geo"],
    }


def test_array_of_records() -> None:
    assert one_parameter(
        '(x::Array {items: {type: "Object", fields: [{name: "id", type: "Int"}]}})==>(::Any)'
    ) == {
        "type": "array",
        "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    }


def test_results_no_parameters_and_named_results() -> None:
    assert parse_signature("(::String)") == Signature(
        {"type": "object", "properties": {}}, {"type": "string"}
    )
    assert parse_signature("()==>(::[Integer])").result == {
        "type": "array", "items": {"type": "integer"}
    }
    assert parse_signature("(a::String)==>(::Any)").result is None
    assert parse_signature("(a::String)==>(greeting::String)").result == {
        "title": "greeting", "type": "string"
    }


def test_multi_line_strings_in_descriptions() -> None:
    schema = one_parameter('(x::String {description: ```\nfirst line\nsecond line```})==>(::Any)')
    assert schema["description"] == "first line\nsecond line"


@pytest.mark.parametrize(
    ("text", "position", "expected"),
    [
        ("(x::Strng)==>(::String)", (1, 5), "unknown type 'Strng'; expected one of Text"),
        ("(x::String)==>(::String", (1, 24), "expected Char(')')"),
        ("(a::String)==>(b:::String)", (1, 17), "Syntax error"),
        ("(x::String {default: 3})==>(::String)", (1, 13), "default 3 does not match"),
        ("(x::String {colour: 1})==>(::String)", (1, 13), "unknown property 'colour'"),
        ("(x)==>(::String)", (1, 1), "expected exactly one type after '::', found no type"),
        ("(::String)==>(::String)", (1, 1), "the parameter has no name"),
        ("(a::Integer)==>(a::String)==>(::Any)", (1, 1), "an earlier parameter already has"),
        ("(x::[String)==>(::Any)", (1, 5), "expected a list type like [String]"),
        ('(x::Integer {fields: []})==>(::Any)', (1, 1), "'fields' needs type Object"),
        ('(x::Object {fields: [{name: "z", type: "Strin"}]})==>(::Any)', (1, 41),
         "parameter 1 'x', field 'z': unknown type 'Strin'"),
        ("(x::String)\n==>\n  (::Strin)", (3, 6), "result: unknown type 'Strin'"),
        ("(a::String) (b::String)", (1, 1), "expected one signature chain"),
    ],
)
def test_malformed_signatures_name_the_position_and_what_was_expected(
    text: str, position: tuple[int, int], expected: str
) -> None:
    with pytest.raises(SignatureError) as caught:
        parse_signature(text)
    assert expected in str(caught.value)
    assert (caught.value.line, caught.value.column) == position


def test_positions_count_characters_not_bytes() -> None:
    # The parser reports UTF-8 byte columns; the error must point at characters.
    for word in ("cafe", "café"):
        with pytest.raises(SignatureError) as caught:
            parse_signature(f'(x::String {{description: "{word}"}})==>(::String')
        assert (caught.value.line, caught.value.column) == (1, 46)


def test_format_writes_the_double_colon_form_and_reads_back() -> None:
    text = '(personName::Text {default:"world"})==>(::String)'
    signature = parse_signature(text)
    written = format_signature(signature.parameters, signature.result)
    assert written == '(personName::String {default: "world"})==>(::String)'
    assert parse_signature(written) == signature


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}}}, "anyOf"),
        ({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1}}}, "minimum"),
        ({"type": "object", "properties": {}, "additionalProperties": False},
         "additionalProperties"),
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, "type"),
        ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
          "required": ["b", "a"]}, "required"),
        ({"type": "object", "properties": {"a": {"type": "string", "default": "x"}},
          "required": ["a"]}, "a required parameter with a default"),
        ({"type": "object", "properties": {"a": {"type": "integer", "default": 2**70}}},
         "too large"),
    ],
)
def test_schemas_a_signature_cannot_say_are_refused(schema: dict[str, object], reason: str) -> None:
    with pytest.raises(NotExpressible, match=reason):
        format_signature(schema)


def test_type_expressions_outside_signatures() -> None:
    assert type_expression_schema("[Number]") == {"type": "array", "items": {"type": "number"}}
    with pytest.raises(SignatureError, match="expected a type name"):
        type_expression_schema(42)

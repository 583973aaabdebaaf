"""Property tests: schema -> signature -> schema is stable wherever a signature can say it."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle.spec.signatures import NotExpressible, Signature, format_signature, parse_signature

INT64 = 2**63 - 1
names = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
    min_size=1,
    max_size=12,
)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
SCALAR_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": texts,
    "integer": st.integers(-INT64, INT64),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
}


@st.composite
def scalar(draw: st.DrawFn, with_default: bool) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(SCALAR_VALUES)))
    schema: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        schema["description"] = draw(texts)
    values = SCALAR_VALUES[kind]
    if draw(st.booleans()):
        schema["enum"] = draw(st.lists(values, min_size=1, max_size=3, unique=True))
        values = st.sampled_from(schema["enum"])
    if with_default:
        schema["default"] = draw(values)
    return schema


@st.composite
def type_schema(draw: st.DrawFn, depth: int, with_default: bool = False) -> dict[str, Any]:
    """A schema a signature can express, in the canonical form the parser produces."""
    choices = ["scalar", "any"] + (["array", "object", "record"] if depth > 0 else [])
    kind = draw(st.sampled_from(choices))
    if kind == "scalar":
        return draw(scalar(with_default))
    schema: dict[str, Any]
    if kind == "any":
        schema = {}
    elif kind == "array":
        schema = {"type": "array"}
        if draw(st.booleans()):
            schema["items"] = draw(type_schema(depth - 1))
    elif kind == "object":
        schema = {"type": "object"}
    else:
        schema = {"type": "object", **draw(record(depth - 1))}
    if draw(st.booleans()):
        schema["description"] = draw(texts)
    if with_default and kind == "any":
        schema["default"] = draw(st.one_of(st.none(), texts, st.integers(-INT64, INT64)))
    return schema


@st.composite
def record(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    field_names = draw(st.lists(names, max_size=4, unique=True))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in field_names:
        mode = draw(st.sampled_from(["required", "default", "optional"]))
        properties[name] = draw(type_schema(depth, with_default=mode == "default"))
        if mode == "required":
            required.append(name)
    data: dict[str, Any] = {"properties": properties}
    if required:
        data["required"] = required
    return data


@st.composite
def signatures(draw: st.DrawFn) -> Signature:
    parameters = {"type": "object", **draw(record(2))}
    result: dict[str, Any] | None = None
    if draw(st.booleans()):
        result = draw(type_schema(1))
        if result == {}:
            result = None  # an empty result schema reads back as "no result schema"
        elif draw(st.booleans()):
            result = {"title": draw(names), **result}
    return Signature(parameters, result)


def property_orders(schema: Any) -> Any:
    """Every ``properties`` key order, nested: dict equality alone would not see reordering."""
    if isinstance(schema, dict):
        return [
            (list(schema["properties"]) if "properties" in schema else None),
            [property_orders(v) for v in schema.get("properties", {}).values()],
            property_orders(schema.get("items")),
        ]
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signatures())
def test_expressible_schemas_round_trip_exactly(signature: Signature) -> None:
    text = format_signature(signature.parameters, signature.result)
    back = parse_signature(text)
    assert back == signature
    assert property_orders(back.parameters) == property_orders(signature.parameters)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(signatures(), st.text(min_size=1, max_size=10), json_values)
def test_any_schema_either_round_trips_or_is_refused(
    signature: Signature, keyword: str, value: Any
) -> None:
    """Add an arbitrary keyword somewhere: the result is exact or NotExpressible, never lossy."""
    parameters = dict(signature.parameters)
    properties = dict(parameters["properties"])
    if properties:
        first = next(iter(properties))
        properties[first] = {**properties[first], keyword: value}
    else:
        parameters[keyword] = value
    parameters["properties"] = properties
    try:
        text = format_signature(parameters, signature.result)
    except NotExpressible:
        return
    assert parse_signature(text) == Signature(parameters, signature.result)

"""Property test: any agent spec survives gram -> JSON -> gram unchanged."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcycle import Limits, ToolSpec
from toolcycle.spec import AgentSpec

from .test_signature_properties import INT64, names, signatures, texts

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-INT64, INT64)
    | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=10,
)
tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True)


@st.composite
def tools(draw: st.DrawFn) -> ToolSpec:
    signature = draw(signatures())
    parameters: dict[str, Any] = signature.parameters
    if draw(st.booleans()):  # something a signature cannot say: kept as JSON text
        parameters = {**parameters, "additionalProperties": draw(st.booleans())}
    return ToolSpec(draw(tool_names), draw(texts), parameters, signature.result)


@st.composite
def specs(draw: st.DrawFn) -> AgentSpec:
    tool_list = draw(st.lists(tools(), max_size=3, unique_by=lambda t: t.name))
    limits = draw(st.one_of(st.none(), st.builds(
        Limits,
        max_iterations=st.one_of(st.none(), st.integers(1, 1000)),
        timeout=st.one_of(st.none(), st.floats(0.5, 1000)),
        on_limit=st.one_of(st.none(), st.sampled_from(["final_answer", "partial", "error"])),
    )))
    output = draw(st.one_of(st.none(), st.builds(lambda s: s.parameters, signatures())))
    task_input = draw(st.one_of(st.none(), st.builds(lambda s: s.parameters, signatures())))
    return AgentSpec(
        name=draw(names),
        description=draw(texts),
        instructions=draw(st.text(max_size=200)),
        model=draw(st.one_of(st.none(), texts)),
        tools=tool_list,
        output_schema=output,
        input_schema=task_input,
        limits=limits,
        tool_selection=draw(st.one_of(st.none(), st.fixed_dictionaries({}, optional={
            "min_relevance": st.floats(-1, 1), "max_tools": st.integers(1, 50)}))),
        metadata=draw(st.dictionaries(names, json_values, max_size=3)),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs())
def test_gram_json_gram_is_lossless(spec: AgentSpec) -> None:
    from_gram = AgentSpec.from_gram(spec.to_gram())
    assert from_gram == spec
    from_json = AgentSpec.from_json(from_gram.to_json())
    assert from_json == spec
    assert AgentSpec.from_gram(from_json.to_gram()) == spec
    for before, after in zip(spec.tools, from_gram.tools, strict=True):
        assert list(before.parameters["properties"]) == list(after.parameters["properties"])

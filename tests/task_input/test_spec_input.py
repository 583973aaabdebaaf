"""Agent specs carry the task input schema: gram and JSON round trips, binding, hostile input."""

from __future__ import annotations

import pytest

from toolcycle import InputError, SpecError
from toolcycle.models.scripted import ScriptedModel
from toolcycle.spec import AgentSpec

GRAM = '''[triage:Agent {
  instruction: "Triage {title} for {customer}",
  model: "test",
  input: {type: "Object", fields: [{name: "title", type: "String"},
                                   {name: "customer", type: "String"}]}
}]
'''


def test_gram_input_round_trips_and_binds() -> None:
    spec = AgentSpec.from_gram(GRAM)
    assert spec.input_schema is not None
    assert set(spec.input_schema["properties"]) == {"title", "customer"}
    assert AgentSpec.from_gram(spec.to_gram()) == spec
    assert AgentSpec.from_json(spec.to_json()) == spec
    assert '"input_schema"' in spec.to_json() and "input: {" in spec.to_gram()
    agent = spec.bind([], model=ScriptedModel(["done"]))
    result = agent.run_sync(input={"title": "Jam", "customer": "Ada"})
    assert result.messages[0].text == "Triage Jam for Ada"
    with pytest.raises(InputError, match="title"):
        agent.run_sync(input={"title": 3, "customer": "Ada"})


def test_an_input_that_needs_json_is_kept_as_json() -> None:
    spec = AgentSpec("a", input_schema={"type": "object", "minProperties": 1})
    assert "input_schema:" in spec.to_gram()
    assert AgentSpec.from_gram(spec.to_gram()) == spec


@pytest.mark.parametrize("schema", [
    '{"$ref": "https://example.invalid/schema.json"}',
    '{"type": 42}',
    '"not a schema"',
])
def test_hostile_input_schemas_fail_cleanly(schema: str) -> None:
    with pytest.raises(SpecError):
        AgentSpec.from_json('{"name": "a", "input_schema": ' + schema + '}')


def test_input_and_input_schema_together_are_refused() -> None:
    text = GRAM.replace('model: "test",', 'model: "test", input_schema: "{}",')
    with pytest.raises(SpecError, match="either 'input' or 'input_schema'"):
        AgentSpec.from_gram(text)


def test_a_template_naming_a_field_the_schema_lacks_fails_at_bind() -> None:
    spec = AgentSpec.from_gram(GRAM.replace("{customer}", "{email}"))
    with pytest.raises(Exception, match="no field 'email'"):
        spec.bind([], model=ScriptedModel(["x"]))

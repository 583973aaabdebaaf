"""The exception tree drawn in toolcycle/errors.py: one root, builtin bases kept as mixins."""

from __future__ import annotations

import pytest

from toolcycle import ToolcycleError
from toolcycle.models.local.packs import ModelPackError
from toolcycle.models.protocol import ProtocolViolation
from toolcycle.models.scripted import ScriptExhausted
from toolcycle.rag.sql_tools import ReadOnlyViolation
from toolcycle.spec import AgentSpec, SpecError
from toolcycle.spec.gram_syntax import GramError
from toolcycle.spec.signatures import NotExpressible, SignatureError


@pytest.mark.parametrize(("error", "builtin"), [
    (ProtocolViolation, AssertionError),
    (ScriptExhausted, RuntimeError),
    (ModelPackError, RuntimeError),
    (ReadOnlyViolation, ValueError),
    (SpecError, ValueError),
])
def test_every_exception_is_a_toolcycle_error_and_keeps_its_builtin_base(
    error: type[Exception], builtin: type[Exception],
) -> None:
    assert issubclass(error, ToolcycleError)
    assert issubclass(error, builtin)


def test_a_gram_error_is_a_spec_error_not_the_other_way() -> None:
    assert issubclass(GramError, SpecError)
    assert issubclass(SignatureError, GramError)
    assert issubclass(NotExpressible, SignatureError)
    assert not issubclass(SpecError, GramError)


def test_a_json_spec_error_is_not_a_gram_error() -> None:
    with pytest.raises(SpecError) as caught:
        AgentSpec.from_json('{"name": "a",\n "tools": 3}')
    assert not isinstance(caught.value, GramError)
    assert caught.value.line == 2


def test_a_gram_syntax_error_is_caught_as_a_spec_error() -> None:
    with pytest.raises(SpecError) as caught:
        AgentSpec.from_gram("(a:Agent {", "broken.gram")
    assert caught.value.source == "broken.gram" and caught.value.line == 1

"""Safe tool names: readable, within each provider's pattern, reversible through a NameMap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolcycle.spec.formats.names import (
    ANTHROPIC_NAMES,
    MCP_NAMES,
    OPENAI_NAMES,
    NameMap,
    safe_name,
)


def test_allowed_names_are_unchanged_and_others_become_readable() -> None:
    assert safe_name("get_weather") == "get_weather"
    assert safe_name("math.factorial") == "math_factorial"
    assert safe_name("a  b//c") == "a_b_c"
    assert safe_name("é") == "tool"
    assert safe_name("math.factorial", MCP_NAMES) == "math.factorial"
    assert OPENAI_NAMES.pattern == "^[a-zA-Z0-9_-]{1,64}$"


def test_long_names_are_shortened_with_a_hash_that_keeps_them_apart() -> None:
    first, second = safe_name("a" * 80 + "1"), safe_name("a" * 80 + "2")
    assert len(first) == len(second) == 64 and first != second
    assert ANTHROPIC_NAMES.allows(first)


@given(st.lists(st.text(min_size=1, max_size=80), min_size=1, max_size=8, unique=True))
def test_a_map_is_injective_safe_and_reversible(names: list[str]) -> None:
    mapping = NameMap(OPENAI_NAMES, names)
    safe = [mapping.safe(n) for n in names]
    assert len(set(safe)) == len(safe)
    assert all(OPENAI_NAMES.allows(s) for s in safe)
    assert [mapping.original(s) for s in safe] == names
    assert all(mapping.safe(n) == n for n in names if OPENAI_NAMES.allows(n))

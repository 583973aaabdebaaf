"""Every BFCL single-turn ground-truth call through toolcycle's argument validator.

3,302 calls. The counts are exact on purpose: a change in the dialect or the validator that
moves any call from one bucket to another must be looked at, not absorbed.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from toolcycle.spec.formats.bfcl import BfclFunction, import_function
from toolcycle.tools import Tool, ToolArgumentsError

from .bfcl_data import (
    NO_ACCEPTABLE_VALUE,
    GroundTruthCall,
    ground_truth_arguments,
    omit_rejected_optional,
    single_turn_calls,
)

pytestmark = pytest.mark.conformance

#: Known dataset inconsistencies: the ground truth contradicts its own function doc. Each
#: entry: the reason, and the validator's problems (prefixes, in order) that say so.
KNOWN_INCONSISTENT: dict[str, tuple[str, tuple[str, ...]]] = {
    "parallel_multiple_21": (
        "x and y are given as Python expressions (\"data['sales']\") for array parameters",
        ('x: "data[\'sales\']" is not of type "array"',
         'y: "data[\'future_sales\']" is not of type "array"'),
    ),
    "parallel_multiple_94": (
        "sort_list gets fruit names for an array of integers",
        tuple(f'elements/{i}: "{fruit}" is not of type "integer"'
              for i, fruit in enumerate(("apple", "banana", "cherry", "date", "elderberry"))),
    ),
    "live_simple_71-35-0": (
        "the enum of metric names sits on the array itself, so no array (such as ['view']) "
        "is one of them",
        ('metrics: ["view"] is not one of',),
    ),
    "live_simple_106-63-0": (
        "required parameters have an empty list of acceptable values",
        tuple(f'{name}: "{NO_ACCEPTABLE_VALUE}" is not of type "array"'
              for name in ("auto_loan_payment_start", "bank_hours_start")),
    ),
    "live_simple_112-68-0": (
        "required parameters have an empty list of acceptable values",
        tuple(f'{name}: "{NO_ACCEPTABLE_VALUE}" is not of type "array"'
              for name in ("acc_routing_start", "atm_finder_start", "faq_link_accounts_start",
                           "get_balance_start", "get_transactions_start")),
    ),
    "live_multiple_507-149-4": (
        "the required origin_airport is missing from the answer",
        ('(root): "origin_airport" is a required property',),
    ),
    "live_multiple_964-207-0": (
        "the answer passes 'question' where the doc requires 'statement'",
        ('(root): "statement" is a required property',),
    ),
    "live_multiple_750-169-5": (
        "genre 'Any' is not in the required genre enum",
        ('genre: "Any" is not one of',),
    ),
    "live_multiple_756-169-11": (
        "genre 'horror' is not in the enum (which has 'Horror')",
        ('genre: "horror" is not one of',),
    ),
    "live_multiple_947-197-0": (
        "duration '5 minutes' is not in the duration enum",
        ('duration: "5 minutes" is not one of',),
    ),
    "live_parallel_multiple_2-2-0": (
        "the command (bedroom air purifier, stop) is not in the enum",
        ('command: "침실, 공기청정기, 중지" is not one of',),
    ),
}

EXPECTED = {
    "strict": 3119,  # the ground-truth arguments as they are
    "default_repeat": 147,  # + a parameter repeating a default its schema rejects is omitted
    "rejected_optional": 25,  # + an optional parameter its schema rejects is omitted
    "rejected": 11,  # the known inconsistencies above
}


def _imported(call: GroundTruthCall, *, closed: bool = False) -> tuple[BfclFunction, Tool[Any]]:
    function = import_function(call.doc, language=call.language, closed=closed)
    return function, Tool(function.spec)


def _accepts(tool: Tool[Any], arguments: dict[str, Any]) -> bool:
    try:
        tool.validate(arguments)
    except ToolArgumentsError:
        return False
    return True


def classify(call: GroundTruthCall) -> str:
    """Which reading of the ground truth first makes the validator accept the call."""
    function, tool = _imported(call)
    arguments = ground_truth_arguments(call.answer)
    if _accepts(tool, arguments):
        return "strict"
    without_repeats = function.omit_default_repeats(arguments)
    if _accepts(tool, without_repeats):
        return "default_repeat"
    if _accepts(tool, omit_rejected_optional(function, without_repeats)):
        return "rejected_optional"
    return "rejected"


def test_every_ground_truth_call_is_classified_as_expected() -> None:
    buckets: dict[str, list[str]] = collections.defaultdict(list)
    for call in single_turn_calls():
        buckets[classify(call)].append(call.entry_id)
    counts = {name: len(ids) for name, ids in buckets.items()}
    assert sum(counts.values()) == 3302
    assert set(buckets["rejected"]) == set(KNOWN_INCONSISTENT), sorted(buckets["rejected"])
    assert counts == EXPECTED
    print(f"\nsingle-turn ground truth: {counts} of {sum(counts.values())} calls")


@pytest.mark.parametrize("entry_id", sorted(KNOWN_INCONSISTENT))
def test_known_inconsistent_call_is_rejected_for_its_stated_reason(entry_id: str) -> None:
    """Each listed call is rejected even under both lenient readings, and the validator's
    problems name exactly the contradiction given as its reason (not some other failure)."""
    rejected = [c for c in single_turn_calls() if c.entry_id == entry_id and
                classify(c) == "rejected"]
    assert len(rejected) == 1, entry_id
    (call,) = rejected
    function, tool = _imported(call)
    arguments = omit_rejected_optional(
        function, function.omit_default_repeats(ground_truth_arguments(call.answer))
    )
    with pytest.raises(ToolArgumentsError) as caught:
        tool.validate(arguments)
    expected = KNOWN_INCONSISTENT[entry_id][1]
    problems = caught.value.problems
    assert len(problems) == len(expected), problems
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), (problem, start)


# -- the lenient readings are explicit and narrow -------------------------------------------


def _function(parameters: dict[str, Any]) -> tuple[BfclFunction, Tool[Any]]:
    function = import_function({"name": "f", "description": "", "parameters": parameters})
    return function, Tool(function.spec)


def test_default_repeat_policy_only_omits_exact_repeats_of_rejected_defaults() -> None:
    function, tool = _function(
        {
            "type": "dict",
            "properties": {
                "unit": {"type": "string", "default": None},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "auto"},
                "count": {"type": "integer", "default": 3},
            },
            "required": [],
        }
    )
    assert function.dropped_defaults == {"unit": None, "mode": "auto"}
    with pytest.raises(ToolArgumentsError):
        tool.validate({"unit": None})  # strict: null is not a string
    assert function.omit_default_repeats({"unit": None, "mode": "auto", "count": 3}) == {
        "count": 3  # a valid default is a normal value and stays
    }
    # Not a repeat: left for the validator, which rejects it.
    kept = function.omit_default_repeats({"mode": "c", "unit": 0})
    assert kept == {"mode": "c", "unit": 0}
    with pytest.raises(ToolArgumentsError):
        tool.validate(kept)
    # JSON equality: False is not 0, so a boolean never passes for a dropped 0 default.
    zero, _ = _function({"type": "dict", "properties": {"n": {"type": "string", "default": 0}}})
    assert zero.omit_default_repeats({"n": False}) == {"n": False}


def test_rejected_optional_policy_never_drops_required_or_valid_parameters() -> None:
    function, tool = _function(
        {
            "type": "dict",
            "properties": {
                "city": {"type": "string"},
                "unisex": {"type": "string", "enum": ["True", "False", "dontcare"]},
                "rooms": {"type": "integer"},
            },
            "required": ["city"],
        }
    )
    arguments = {"city": 7, "unisex": True, "rooms": 2}
    assert omit_rejected_optional(function, arguments) == {"city": 7, "rooms": 2}
    with pytest.raises(ToolArgumentsError):
        tool.validate(omit_rejected_optional(function, arguments))  # city stays wrong


def test_ground_truth_reading_takes_first_listed_value_and_omits_only_when_allowed() -> None:
    answer = {
        "a": ["", 1],
        "b": [""],
        "c": [],
        "d": [{"x": ["", "y"], "z": [""]}],
        "e": [[{"k": [1, 2]}]],
    }
    assert ground_truth_arguments(answer) == {
        "a": 1,
        "c": NO_ACCEPTABLE_VALUE,
        "d": {"x": "y"},
        "e": [{"k": 1}],
    }


# -- negative controls: the validator must reject broken calls --------------------------------


def _wrong_type_value(schema: dict[str, Any]) -> Any | None:
    """A value of a JSON type ``schema`` does not allow (None where every type is allowed)."""
    declared = schema.get("type")
    if declared is None or "anyOf" in schema or "oneOf" in schema:
        return None
    allowed = set(declared) if isinstance(declared, list) else {declared}
    if "number" in allowed:
        allowed.add("integer")
    for json_type, value in (
        ("string", "not the declared type"),
        ("object", {"unexpected": True}),
        ("integer", 12345),
        ("boolean", True),
        ("array", ["x"]),
    ):
        if json_type not in allowed:
            return value
    return None


def test_mutated_ground_truth_calls_are_rejected() -> None:
    mutated = collections.Counter()
    for call in single_turn_calls():
        function, tool = _imported(call)
        arguments = ground_truth_arguments(call.answer)
        if not _accepts(tool, arguments):
            continue
        schema = function.spec.parameters
        properties: dict[str, Any] = schema["properties"]
        for name in arguments:
            bad = _wrong_type_value(properties.get(name, {}))
            if bad is not None:
                assert not _accepts(tool, {**arguments, name: bad}), (call.entry_id, name)
                mutated["wrong_type"] += 1
                break
        for name in schema.get("required", ()):
            if name in arguments:
                missing = {k: v for k, v in arguments.items() if k != name}
                assert not _accepts(tool, missing), (call.entry_id, name)
                mutated["missing_required"] += 1
                break
        # BFCL objects are open; closed (as for Python signatures) an extra field is refused.
        assert _accepts(tool, {**arguments, "unexpected_parameter": 1}), call.entry_id
        if set(arguments) <= set(properties):
            _, closed = _imported(call, closed=True)
            assert _accepts(closed, arguments), call.entry_id
            assert not _accepts(closed, {**arguments, "unexpected_parameter": 1}), call.entry_id
            mutated["extra_field"] += 1
    # Exact, so that a change in what gets mutated is noticed: of the 3,119 accepted calls,
    # 3,058 have a parameter with a refusable type, 2,923 pass a required parameter and
    # 3,116 pass only declared parameters (three send an extra one the open doc allows).
    assert mutated == {"wrong_type": 3058, "missing_required": 2923, "extra_field": 3116}

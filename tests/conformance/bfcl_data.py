"""Reading the BFCL data installed with ``bfcl-eval`` (never copied into this repository).

The files are JSON Lines despite their ``.json`` names. Single-turn ground truth lists the
acceptable values of each parameter, ``""`` meaning "may be omitted"; nested dicts repeat that
shape one level down. :func:`ground_truth_arguments` turns one such answer into the concrete
arguments a model would send, with the rule the counts in ``docs/conformance.md`` rest on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from toolcycle.spec.formats.bfcl import BfclFunction, Language

DATA = Path(str(resources.files("bfcl_eval") / "data"))

#: Categories whose entries carry function docs (the 8,888 docs are these plus the backends').
DOC_CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "irrelevance", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
#: Categories with single-turn ground-truth calls (3,302 calls).
SINGLE_TURN_CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple",
)
MULTI_TURN_CATEGORIES = (
    "multi_turn_base", "multi_turn_miss_param", "multi_turn_miss_func", "multi_turn_long_context",
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@cache
def entries(category: str) -> tuple[dict[str, Any], ...]:
    return tuple(read_jsonl(DATA / f"BFCL_v4_{category}.json"))


@cache
def answers(category: str) -> tuple[dict[str, Any], ...]:
    return tuple(read_jsonl(DATA / "possible_answer" / f"BFCL_v4_{category}.json"))


@cache
def backend_docs() -> dict[str, tuple[dict[str, Any], ...]]:
    """The multi-turn backends' function docs, by doc file name."""
    folder = DATA / "multi_turn_func_doc"
    return {p.name: tuple(read_jsonl(p)) for p in sorted(folder.glob("*.json"))}


def all_function_docs() -> Iterator[tuple[str, Language, dict[str, Any]]]:
    """Every BFCL function doc: ``(where, language, doc)``."""
    for category in DOC_CATEGORIES:
        for entry in entries(category):
            for doc in entry["function"]:
                yield entry["id"], language_of(category), doc
    for file_name, docs in backend_docs().items():
        for doc in docs:
            yield file_name, "python", doc


def language_of(category: str) -> Language:
    if category == "simple_java":
        return "java"
    if category == "simple_javascript":
        return "javascript"
    return "python"


@dataclass(frozen=True, slots=True)
class GroundTruthCall:
    """One single-turn ground-truth call with the doc of the function it calls."""

    entry_id: str
    language: Language
    doc: dict[str, Any]
    answer: dict[str, Any]  # parameter -> list of acceptable values


def single_turn_calls() -> Iterator[GroundTruthCall]:
    for category in SINGLE_TURN_CATEGORIES:
        docs_by_entry = {e["id"]: {d["name"]: d for d in e["function"]} for e in entries(category)}
        for answer in answers(category):
            docs = docs_by_entry[answer["id"]]
            for call in answer["ground_truth"]:
                ((name, params),) = call.items()
                yield GroundTruthCall(answer["id"], language_of(category), docs[name], params)


# -- from acceptable values to arguments ---------------------------------------------------

NO_ACCEPTABLE_VALUE = "<no acceptable value listed>"


def ground_truth_arguments(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a model following the ground truth sends.

    Rule: each parameter takes the first acceptable value that is not ``""``; a parameter
    whose only acceptable value is ``""`` is omitted; a parameter with no acceptable value at
    all (an empty list in the data) gets :data:`NO_ACCEPTABLE_VALUE`, which no schema of
    those parameters accepts. Nested dicts (and lists of dicts) are read the same way.
    """
    arguments: dict[str, Any] = {}
    for name, acceptable in answer.items():
        present, value = _first_value(acceptable)
        if present:
            arguments[name] = value
    return arguments


def _first_value(acceptable: list[Any]) -> tuple[bool, Any]:
    if not acceptable:
        return True, NO_ACCEPTABLE_VALUE
    for value in acceptable:
        if value != "":
            return True, _concrete(value)
    return False, None


def _concrete(value: Any) -> Any:
    if isinstance(value, dict):
        return ground_truth_arguments(
            {k: v if isinstance(v, list) else [v] for k, v in value.items()}
        )
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_concrete(v) for v in value]
    return value


# -- the two lenient readings, each counted separately ------------------------------------


def omit_rejected_optional(function: BfclFunction, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Drop optional (not required) parameters whose value their own schema rejects.

    The second lenient reading: the ground truth gives a value the doc's schema forbids for
    a parameter the call may leave out (``smoking_allowed=False`` where the doc says the
    strings ``"True"``/``"False"``/``"dontcare"``); the function would run on its default.
    """
    schema = function.spec.parameters
    required = set(schema.get("required", ()))
    properties: dict[str, Any] = schema.get("properties", {})
    return {
        name: value
        for name, value in arguments.items()
        if name in required
        or name not in properties
        or jsonschema_rs.is_valid(properties[name], value)
    }

"""Schema-constrained tool calling: a JSON Schema whose every instance is a valid reply.

A 135M-parameter model cannot be trusted to write a well-formed call to an existing tool, but
it does not have to be: llama.cpp (in-process, or ``llama_cpp.server`` through
``response_format``) turns a JSON Schema into a grammar that masks every token that would
leave the schema. The schema built here is the union of

- ``{"name": "<tool X>", "arguments": <X's argument schema>}`` for every offered tool, and
- ``{"answer": "..."}`` (left out when a call is required, alone when tools are withdrawn),
- with ``parallel_tool_calls``, a list of one or more such calls, or ``[{"answer": "..."}]``,

so whatever the model writes parses into a call to a real tool with arguments of the right
shape, or a final answer. Argument *values* are still the model's choice; the loop validates
them like any other call.

In native output mode (``Output(..., mode="native")``) the answer is not a string but the
output itself: ``{"answer": <an instance of the output's schema>}``, so a small model's
structured answer is valid by construction, not by retries.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal, cast

from ..base import ModelSettings, ToolChoice, ToolDefinition

ANSWER_KEY = "answer"
#: The ``ModelSettings.extra`` key that turns constrained replies on or off for one request.
CONSTRAINED = "constrained"


def reply_schema(tools: Sequence[ToolDefinition], tool_choice: ToolChoice,
                 parallel: bool = False, answer: dict[str, Any] | None = None,
                 further: bool = False) -> dict[str, Any] | None:
    """The union schema for one request, or ``None`` when no tools are involved at all.

    ``tool_choice="none"`` keeps only the answer branch; ``"required"`` drops it; a tool name
    keeps only that tool's branch. ``parallel`` (the request's ``parallel_tool_calls``) makes
    every reply a list: of one or more calls, so one reply can hold several independent calls,
    or of the one answer. ``answer`` (native output mode) is the schema the answer's value
    must follow instead of a string; with it, a request without tools still has a schema.
    ``further`` (a request for the calls a reply left out, :mod:`.further`): a list of zero
    or more calls, and nothing else.
    """
    definitions: dict[str, Any] = {}
    answer_branch = _answer_branch(_hoisted(answer, _ANSWER_OWNER, definitions)
                                   if answer is not None else None)
    if not tools or tool_choice == "none":
        if answer is None and not tools:
            return None
        # Tools withdrawn (a forced final answer): a small model still imitates the calls in
        # its history, so only the answer branch is left.
        return _with_definitions(answer_branch, definitions)
    offered = list(tools)
    if tool_choice not in ("auto", "required"):
        offered = [t for t in tools if t.name == tool_choice] or offered
    branches = [_call_branch(t, definitions) for t in offered]
    if further:
        items = branches[0] if len(branches) == 1 else {"anyOf": branches}
        return _with_definitions({"type": "array", "items": items}, definitions)
    if parallel and tool_choice in ("auto", "required"):
        # A list from the first token, the answer too. Measured on BFCL with Qwen2.5-Coder
        # 0.5B: free to write one object or a list, it wrote one object every time (0 of 24
        # parallel questions); made to open a list, it goes on with the next call when the
        # question asks for several and closes the list after one when it does not.
        calls = branches[0] if len(branches) == 1 else {"anyOf": branches}
        branches = [{"type": "array", "items": calls, "minItems": 1}]
        if tool_choice == "auto":
            branches.append({"type": "array", "items": answer_branch, "minItems": 1,
                             "maxItems": 1})
    elif tool_choice == "auto":
        branches.append(answer_branch)
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    return _with_definitions(schema, definitions)


#: llama.cpp's converter writes a number's exponent with the rule of an integer's digits, which
#: refuses a leading zero: "2e-07", the way Python prints 2e-7 and the way a model trained on
#: Python writes it, cannot be written. Greedy decoding then ends the number at "2e-0" and the
#: call carries 2.0 where the model meant 2e-07, a value silently a hundred million times
#: off (seen on the 1.5B: a capacitance of 2e-07 F called as 2.0). JSON itself allows any
#: digits there; three are enough for every double.
_INTEGER_EXPONENT = "([eE] [-+]? integral-part)?"
_JSON_EXPONENT = "([eE] [-+]? [0-9] ([0-9] [0-9]?)?)?"


@functools.lru_cache(maxsize=64)
def schema_gbnf(schema: str) -> str:
    """The GBNF grammar of a JSON Schema (its JSON text), as llama.cpp's own converter writes
    it but with JSON's exponents. Raises what the converter raises on a schema it cannot
    convert (``ValueError``, ``KeyError``...). Cached: a run asks with the same schema
    request after request."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return str(json_schema_to_gbnf(schema)).replace(_INTEGER_EXPONENT, _JSON_EXPONENT)


#: The owner name an answer's sub-schemas are filed under ("$answer__City"): no tool is named
#: with a "$", so no tool's entries (named after the tool) collide with them.
_ANSWER_OWNER = f"${ANSWER_KEY}"


def _with_definitions(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "$defs": definitions} if definitions else schema


def _answer_branch(value: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {ANSWER_KEY: value or {"type": "string"}},
        "required": [ANSWER_KEY],
        "additionalProperties": False,
    }


def _call_branch(tool: ToolDefinition, definitions: dict[str, Any]) -> dict[str, Any]:
    arguments = _hoisted(tool.parameters or {"type": "object", "properties": {}}, tool.name,
                         definitions)
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _hoisted(schema: dict[str, Any], owner: str, definitions: dict[str, Any]
             ) -> dict[str, Any]:
    """``schema`` (a tool's arguments, or a native answer's) ready to sit inside the reply
    schema: its sub-schemas moved into ``definitions`` under ``owner``'s names, its root
    closed to extra keys."""
    arguments = _open_where_untyped(copy.deepcopy(schema))
    # A tool's local refs ("#/$defs/Item", "#/definitions/Tag", "#/properties/x") resolve from
    # the root of *its* schema, but the grammar converter resolves them from the root of the
    # whole reply schema, and names each grammar rule after the ref's last segment. So every
    # sub-schema moves to a top-level $defs entry named after its tool ("order__Item"): two
    # tools' same-named sub-models (pydantic names them after the class) stay apart, and
    # draft-07 "definitions" still resolve. Any other local ref points into a copy of the
    # tool's whole schema.
    names = {f"#/$defs/{key}": f"{owner}__{key}" for key in arguments.get("$defs", {})}
    names.update({f"#/definitions/{key}": f"{owner}__definitions__{key}"
                  for key in arguments.get("definitions", {})})
    root = f"{owner}__root"
    rebase = functools.partial(_rebase_refs, names=names, root=root)
    for section in ("$defs", "definitions"):
        for key, sub in arguments.pop(section, {}).items():
            definitions[names[f"#/{section}/{key}"]] = rebase(sub)
    arguments = cast(dict[str, Any], rebase(arguments))
    if _refers_to(arguments, f"#/$defs/{root}") or _refers_to(definitions, f"#/$defs/{root}"):
        definitions[root] = copy.deepcopy(arguments)
    arguments.pop("title", None)
    arguments.setdefault("type", "object")
    # Without this, the grammar lets the model append arbitrary keys after the real ones.
    arguments.setdefault("additionalProperties", False)
    return arguments


#: Keywords that say what a value is about, not what it may be: a sub-schema of these alone
#: admits any value.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})
_SUBSCHEMA = ("items", "additionalProperties", "additionalItems", "not", "contains",
              "propertyNames", "if", "then", "else")
_SUBSCHEMAS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")


def _open_where_untyped(schema: Any) -> Any:
    """``schema`` with every sub-schema that only annotates (``{"description": "The
    training data"}``, valid JSON Schema for any value) or says ``"type": "any"`` (common in
    hand-written tool schemas) written ``{}``, the form llama.cpp's converter reads as any
    value. It refuses the other forms outright (an assertion error, seen on a BFCL tool),
    which left a request in the family's own layout with no grammar and the JSON protocol's
    reply schema silently unconstrained."""
    if not isinstance(schema, dict):
        return schema
    opened = dict(schema)
    if opened.get("type") == "any":
        del opened["type"]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(opened.get(key), dict):
            opened[key] = {name: _open_where_untyped(sub) for name, sub in opened[key].items()}
    for key in _SUBSCHEMA:
        if isinstance(opened.get(key), dict):
            opened[key] = _open_where_untyped(opened[key])
    if opened.get("items") == {}:  # (the converter refuses that too; no items means the same)
        del opened["items"]
    for key in _SUBSCHEMAS:
        if isinstance(opened.get(key), list):
            opened[key] = [_open_where_untyped(sub) for sub in opened[key]]
    return {} if set(opened) <= _ANNOTATIONS else opened


def _rebase_refs(node: Any, names: dict[str, str], root: str) -> Any:
    """``node`` with its tool-local ``$ref``s pointing at their new places in the reply."""
    if isinstance(node, dict):
        rebased = {k: _rebase_refs(v, names, root) for k, v in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and (ref == "#" or ref.startswith("#/")):
            steps = ref[2:].split("/")  # "#/$defs/Item/properties/x" -> [$defs, Item, ...]
            moved = names.get("#/" + "/".join(steps[:2]))
            if moved is not None:
                rebased["$ref"] = "/".join([f"#/$defs/{moved}", *steps[2:]])
            else:
                rebased["$ref"] = f"#/$defs/{root}{ref[1:]}"
        return rebased
    if isinstance(node, list):
        return [_rebase_refs(v, names, root) for v in node]
    return node


def _refers_to(node: Any, prefix: str) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            return True
        return any(_refers_to(v, prefix) for v in node.values())
    if isinstance(node, list):
        return any(_refers_to(v, prefix) for v in node)
    return False


def constrained_option(text: str | None, where: str) -> bool | Literal["lazy"] | None:
    """A model string's ``constrained=`` value: ``true``/``false`` (``1``/``0``,
    ``yes``/``no``) or ``lazy``; ``None`` when absent. Anything else raises, naming it."""
    if text is None:
        return None
    value = text.strip().lower()
    if value == "lazy":
        return "lazy"
    if value in ("1", "true", "yes", "0", "false", "no"):
        return value in ("1", "true", "yes")
    raise ValueError(f"constrained={text!r} in {where}: use true, false or lazy")


def with_constrained(settings: ModelSettings, on: bool) -> ModelSettings:
    """``settings`` with constrained replies turned ``on`` or off for one request."""
    return replace(settings, extra={**settings.extra, CONSTRAINED: on})

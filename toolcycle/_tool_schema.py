"""The JSON Schema of a Python function's parameters, from its type hints and docstring.

:class:`toolcycle.tools.Tool` calls this once per tool, at construction. Parameters of plain
JSON types (``str``, ``int``, ``list[str]``, ``Literal[...]``, unions of those) get their schema
written directly, about fifty times faster than through pydantic; anything richer (models,
enums, dates) goes through a pydantic model, which then also converts validated arguments into
the declared Python types. Parameter descriptions come from Google, NumPy or Sphinx
docstrings. A parameter typed ``RunContext`` is injected by the loop and left out.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import json
import re
import types
import typing
import urllib.parse
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

from .context import RunContext

if TYPE_CHECKING:
    import docstring_parser.google
    import pydantic

ToolFunction = Callable[..., Any]


def load_pydantic() -> types.ModuleType:
    """pydantic, imported on first use (about 30 ms): an agent whose tools take plain JSON
    types and that answers in free text never loads it."""
    import pydantic

    return pydantic


#: Names the OpenAI and Anthropic APIs accept for tools.
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}\Z")


def schema_from_function(
    function: ToolFunction, localns: dict[str, Any] | None = None
) -> tuple[dict[str, Any], str | None, ArgumentsAdapter | None, str]:
    signature = inspect.signature(function)
    hints = type_hints(function, localns)
    description, param_docs = _parse_docstring(inspect.getdoc(function) or "")
    context_param = context_param_of(function, hints)
    parameters = [
        (pname, param, hints.get(pname, Any))
        for pname, param in signature.parameters.items()
        if pname != context_param
        and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    ]
    simple = _simple_schema(parameters, param_docs)
    if simple is not None:  # plain JSON types: no pydantic model needed (50x faster)
        return simple, context_param, None, description

    pydantic = load_pydantic()
    fields: dict[str, Any] = {}
    for pname, param, annotation in parameters:
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (
            annotation,
            pydantic.Field(default, description=param_docs.get(pname) or None),
        )
    # extra="forbid": an argument the function does not take is an error the model must see.
    model = pydantic.create_model(
        f"{function.__name__}_arguments",
        __config__=pydantic.ConfigDict(extra="forbid"),
        **fields,
    )
    schema = strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    adapter = adapter_for(function, context_param, model, hints)
    return schema, context_param, adapter, description


def type_hints(function: ToolFunction, localns: dict[str, Any] | None) -> dict[str, Any]:
    """``typing.get_type_hints``, with a fast path for annotations that are plain names.

    Under ``from __future__ import annotations`` every annotation is a string, and
    ``get_type_hints`` compiles each one (about 10 µs apiece, most of building a tool). A plain
    name (``int``, ``Path``, ``MyModel``) is looked up the way ``eval`` would find it instead;
    anything else (``list[int]``, ``int | None``) takes the standard route.
    """
    target = inspect.unwrap(function)
    annotations = getattr(target, "__annotations__", None)
    if not inspect.isfunction(target) or not annotations:
        return typing.get_type_hints(function, localns=localns, include_extras=True)
    namespace, local = target.__globals__, localns or {}
    hints: dict[str, Any] = {}
    for name, value in annotations.items():
        if isinstance(value, str) and value.isidentifier():
            if value in local:
                value = local[value]
            elif value in namespace:
                value = namespace[value]
            elif value == "None":
                value = types.NoneType
            elif hasattr(builtins, value):
                value = getattr(builtins, value)
            else:  # let the standard route raise its usual NameError
                return typing.get_type_hints(function, localns=localns, include_extras=True)
        elif value is None:
            value = types.NoneType
        elif not isinstance(value, type):
            return typing.get_type_hints(function, localns=localns, include_extras=True)
        hints[name] = value
    return hints


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description and per-parameter descriptions (Google, NumPy or Sphinx style).

    ``docstring_parser`` does the parsing; we pick the style first because its automatic
    detection tries every style and costs several times more.
    """
    if not any(marker in doc for marker in _DOC_SECTION_MARKERS):
        return doc.strip(), {}
    import docstring_parser

    if ":param" in doc:
        parsed = docstring_parser.parse(doc, style=docstring_parser.DocstringStyle.REST)
    elif "----" in doc:
        parsed = docstring_parser.parse(doc, style=docstring_parser.DocstringStyle.NUMPYDOC)
    else:
        parsed = _google_parser().parse(doc)
    description = "\n\n".join(
        text for text in (parsed.short_description, parsed.long_description) if text
    )
    return description, {p.arg_name: p.description or "" for p in parsed.params}


@functools.cache
def _google_parser() -> docstring_parser.google.GoogleParser:
    """One parser for every tool: ``docstring_parser.parse`` builds a new one (and compiles
    its section regex) on every call."""
    from docstring_parser.google import GoogleParser

    return GoogleParser()


_DOC_SECTION_MARKERS = (":param", "Args:", "Arguments:", "Parameters", "Returns", "Raises",
                        ":return", "Yields")


def _simple_schema(
    parameters: list[tuple[str, inspect.Parameter, Any]], param_docs: dict[str, str]
) -> dict[str, Any] | None:
    """The JSON Schema pydantic would build, for signatures made only of plain JSON types."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param, annotation in parameters:
        field = _simple_type(annotation)
        if field is None:
            return None
        field = dict(field)
        if param_docs.get(pname):
            field["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        else:
            try:
                json.dumps(param.default)
            except (TypeError, ValueError):
                return None
            field["default"] = param.default
        properties[pname] = field
    schema: dict[str, Any] = {"additionalProperties": False, "properties": properties,
                              "type": "object"}
    if required:
        schema["required"] = required
    return schema


_SIMPLE_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
    dict: {"additionalProperties": True, "type": "object"},
    list: {"items": {}, "type": "array"},
}


def _simple_type(annotation: Any) -> dict[str, Any] | None:
    simple = _SIMPLE_TYPES.get(annotation)
    if simple is not None:
        return simple
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is list and len(args) == 1:
        items = _simple_type(args[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = _simple_type(args[1])
        return None if values is None else {"additionalProperties": values, "type": "object"}
    if origin in (Union, types.UnionType):
        options = [_simple_type(arg) for arg in args]
        if any(o is None for o in options):
            return None
        return {"anyOf": options}
    return None


class ArgumentsAdapter:
    """Converts validated JSON arguments into the Python types the function declared."""

    def __init__(self, model: type[pydantic.BaseModel]) -> None:
        self._model = model
        self._names = list(model.model_fields)

    def validate_python(self, arguments: dict[str, Any]) -> dict[str, Any]:
        instance = self._model.model_validate(arguments)
        # Only the arguments the model gave: the function's own defaults fill the rest.
        return {name: getattr(instance, name) for name in self._names if name in arguments}


def adapter_for(
    function: ToolFunction,
    context_param: str | None,
    model: type[pydantic.BaseModel] | None = None,
    hints: dict[str, Any] | None = None,
) -> ArgumentsAdapter | None:
    """A converter only when some parameter is not plain JSON (models, enums, dates, ...)."""
    try:
        hints = hints if hints is not None else typing.get_type_hints(function)
    except (NameError, TypeError):
        return None
    typed = {k: v for k, v in hints.items() if k not in ("return", context_param)}
    if all(_is_json_native(v) for v in typed.values()):
        return None
    if model is None:
        _, _, adapter, _ = schema_from_function(function)
        return adapter
    return ArgumentsAdapter(model)


_JSON_SCALARS: tuple[Any, ...] = (str, int, float, bool, type(None), Any, dict, list)


def _is_json_native(annotation: Any) -> bool:
    if annotation in _JSON_SCALARS:
        return True
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _is_json_native(get_args(annotation)[0])
    if origin is Literal:
        return True
    if origin in (Union, types.UnionType, list, dict):
        return all(_is_json_native(arg) for arg in get_args(annotation))
    return False


def context_param_of(function: ToolFunction, hints: dict[str, Any] | None = None) -> str | None:
    try:
        hints = hints if hints is not None else typing.get_type_hints(function)
    except (NameError, TypeError):
        return None
    for pname, annotation in hints.items():
        if isinstance(annotation, type):  # the common case: a plain class
            if annotation is RunContext:
                return pname
            continue
        candidates = get_args(annotation) if _is_union(annotation) else (annotation,)
        if any((get_origin(c) or c) is RunContext for c in candidates):
            return pname
    return None


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they cost prompt tokens and add nothing."""
    if isinstance(schema, dict):
        return {
            k: v if k in _VALUE_KEYWORDS else strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [strip_titles(v) for v in schema]
    return schema


#: Keywords whose values are data, not schemas: a "title" key inside them is kept.
_VALUE_KEYWORDS = frozenset({"default", "enum", "const", "examples"})


def reference_problems(schema: dict[str, Any]) -> list[str]:
    """Every ``$ref`` of ``schema`` that points to nothing inside it, with its location.

    Tool schemas are untrusted (spec files, MCP servers, imported definitions): a reference
    is resolved only within the schema, never fetched, and one that resolves to nothing is a
    configuration error at construction rather than a crash at the tool's first call. Schemas
    that declare ``$id`` (where relative references resolve against nested resources) are left
    to the validator's compiler, whose retrieval refuses everything as well.
    """
    refs: list[tuple[str, str]] = []
    has_ids = False
    pending: deque[tuple[Any, str]] = deque([(schema, "")])
    while pending:  # iterative: an untrusted schema may nest past the recursion limit
        node, where = pending.popleft()
        if isinstance(node, dict):
            has_ids = has_ids or "$id" in node
            if isinstance(node.get("$ref"), str):
                refs.append((node["$ref"], where or "/"))
            pending.extend((value, f"{where}/{key}") for key, value in node.items()
                           if key not in _VALUE_KEYWORDS)
        elif isinstance(node, list):
            pending.extend((value, f"{where}/{i}") for i, value in enumerate(node))
    problems: list[str] = []
    for ref, where in refs:
        if has_ids or ref.startswith(_BUNDLED_SCHEMAS):
            continue
        if not ref.startswith("#"):
            problems.append(f"$ref {ref!r} at {where} points outside the schema (references "
                            "are resolved within the schema only, never fetched)")
        elif (ref == "#" or ref.startswith("#/")) and not _resolves(schema, ref[1:]):
            problems.append(f"$ref {ref!r} at {where} points to nothing in the schema")
    return problems


#: Meta-schemas the validator carries with it: referring to them fetches nothing.
_BUNDLED_SCHEMAS = ("https://json-schema.org/", "http://json-schema.org/")


def _resolves(schema: Any, pointer: str) -> bool:
    """Whether the JSON Pointer (RFC 6901, URI-fragment encoded) names a value in ``schema``."""
    node = schema
    for token in pointer.split("/")[1:]:
        key = urllib.parse.unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True


def compile_validator(schema: dict[str, Any]) -> Any:
    """The compiled validator of ``schema``. References resolve only inside the schema (and
    the meta-schemas the validator bundles): tool schemas are untrusted, never fetched."""
    return jsonschema_rs_module().validator_for(schema, retriever=_refuse_retrieval)


def schema_problems(schema: Any) -> list[str]:
    """Every reason ``schema`` cannot be used, for any JSON Schema that comes from outside
    (tool parameters, result and output schemas in specs, imported tool lists).

    The one check every untrusted schema goes through, so that none is ever compiled by a
    validator that fetches: it must be valid against its meta-schema, each ``$ref`` must
    resolve inside it, and it must compile with :func:`compile_validator` (whose retrieval
    refuses every URI: http, https, file, relative paths, unknown schemes).
    """
    if not isinstance(schema, dict):
        return [f"must be a JSON Schema object, got {type(schema).__name__}"]
    try:
        check_meta(schema)
    except Exception as exc:  # invalid, or a schema the validator cannot even read
        return [f"not a valid JSON Schema: {_first_line(exc)}"]
    problems = reference_problems(schema)
    if not problems:
        try:
            compile_validator(schema)
        except Exception as exc:
            problems.append(f"cannot be compiled: {_first_line(exc)}")
    return problems


def accepts(schema: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` fits ``schema``, compiled without fetching; ``False`` when the schema
    cannot be compiled (jsonschema_rs's own ``is_valid`` would fetch remote references)."""
    try:
        return bool(compile_validator(schema).is_valid(value))
    except Exception:  # a schema that cannot compile, or a value that is not JSON
        return False


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def check_meta(schema: dict[str, Any]) -> None:
    """Validate ``schema`` against its meta-schema; raises when it is not a JSON Schema.

    jsonschema_rs's plain ``meta.validate`` fetches a ``$schema`` it does not bundle (a
    request to any URL the schema names); the registry given here refuses that retrieval.
    """
    jsonschema_rs_module().meta.validate(schema, registry=_refusing_registry())


@functools.cache
def _refusing_registry() -> Any:
    return jsonschema_rs_module().Registry([], retriever=_refuse_retrieval)


def _refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is outside the schema; remote references are never fetched")


def jsonschema_rs_module() -> types.ModuleType:
    """The validator module, imported on first use: it is a third of the import time of a
    module that most programs import long before they validate anything."""
    import jsonschema_rs

    return jsonschema_rs


def describe_error(error: Any) -> str:
    path = "/".join(str(p) for p in error.instance_path) or "(root)"
    return f"{path}: {error.message}"


def closed_schema(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that does not say
    otherwise: the providers' JSON-schema response formats (Anthropic's always, OpenAI's in
    strict mode) accept only closed objects, and a structured output has no extra keys."""
    if isinstance(schema, list):
        return [closed_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed = {key: closed_schema(value) for key, value in schema.items()}
    if closed.get("type") == "object" and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    return closed

"""Tools: serializable specs, their implementations, argument validation and the tool library.

A :class:`ToolSpec` is data (name, description, JSON Schema of the arguments, optional result
schema) and can live in an agent spec file. A :class:`Tool` binds a spec to a callable. Schemas
are built and validators compiled once, at construction, so the per-call cost is one
``jsonschema_rs`` validation (the fastest of the three validators measured in
``bench/validators.py``) plus, only for parameters whose Python type is not plain JSON, one
pydantic conversion.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
import inspect
import json
import numbers
import re
import sys
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

from .context import RunContext

if TYPE_CHECKING:
    import docstring_parser.google
    import pydantic

ToolFunction = Callable[..., Any]


def _pydantic() -> types.ModuleType:
    """pydantic, imported on first use (about 30 ms): an agent whose tools take plain JSON
    types and that answers in free text never loads it."""
    import pydantic

    return pydantic

#: Names the OpenAI and Anthropic APIs accept for tools.
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(slots=True)
class ToolSpec:
    """The serializable description of a tool: what a model and an agent spec need to know."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    result_schema: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.result_schema is not None:
            data["result_schema"] = self.result_schema
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolSpec:
        return cls(
            name=data["name"],
            description=data.get("description", ""),
            parameters=data.get("parameters") or {"type": "object", "properties": {}},
            result_schema=data.get("result_schema"),
        )


class ToolArgumentsError(Exception):
    """Arguments failed validation; ``problems`` lists each one as ``path: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Tool[DepsT]:
    """A tool spec bound to its implementation.

    Per-tool policies: ``timeout`` (seconds, the call becomes an error observation when it
    runs out), ``concurrent`` (safe to run beside neighbouring concurrent calls of the same
    turn), ``max_calls`` (per run; further calls get an error observation), ``inline`` (a sync
    tool that is cheap and never blocks runs on the event loop instead of a worker thread,
    saving the thread hop; a timeout cannot interrupt it).
    """

    __slots__ = (
        "_adapter",
        "_validator",
        "concurrent",
        "context_param",
        "function",
        "inline",
        "is_async",
        "max_calls",
        "spec",
        "timeout",
    )

    def __init__(
        self,
        spec: ToolSpec,
        function: ToolFunction | None = None,
        *,
        timeout: float | None = None,
        concurrent: bool = False,
        max_calls: int | None = None,
        context_param: str | None = None,
        adapter: _ArgumentsAdapter | None = None,
        inline: bool = False,
        check_schema: bool = True,
    ) -> None:
        problems = _spec_problems(spec, timeout, max_calls, check_schema)
        if problems:
            from .errors import ConfigurationError

            raise ConfigurationError(problems, subject=f"tool {spec.name!r}")
        self.spec = spec
        self.function = function
        self.timeout = timeout
        self.concurrent = concurrent
        self.max_calls = max_calls
        self.context_param = context_param
        self.inline = inline
        self.is_async = function is not None and _is_async_callable(function)
        self._adapter = adapter
        self._validator: Any = None  # compiled on first use: keeps construction cheap

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        concurrent: bool = False,
        max_calls: int | None = None,
        inline: bool = False,
        localns: dict[str, Any] | None = None,
    ) -> Tool[Any]:
        """Build the spec from the signature, type hints and docstring of ``function``.

        ``localns`` resolves string annotations naming local classes (``@tool`` passes the
        caller's locals, so tools defined inside functions work under
        ``from __future__ import annotations``).
        """
        try:
            schema, context_param, adapter, doc_description = _schema_from_function(
                function, localns
            )
        except (NameError, TypeError, _pydantic().PydanticUserError,
                _pydantic().PydanticSchemaGenerationError) as exc:
            from .errors import ConfigurationError

            subject = f"tool {name or getattr(function, '__name__', function)!r}"
            raise ConfigurationError(
                [f"cannot build the argument schema from its signature: {exc}"], subject
            ) from exc
        spec = ToolSpec(
            name=name or function.__name__,
            description=description if description is not None else doc_description,
            parameters=schema,
        )
        return cls(
            spec,
            function,
            timeout=timeout,
            concurrent=concurrent,
            max_calls=max_calls,
            context_param=context_param,
            adapter=adapter,
            inline=inline,
            check_schema=False,  # generated from type hints: valid by construction
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: dict[str, Any],
        function: ToolFunction | None = None,
        *,
        result_schema: dict[str, Any] | None = None,
        timeout: float | None = None,
        concurrent: bool = False,
        max_calls: int | None = None,
        takes_context: bool = False,
        inline: bool = False,
    ) -> Tool[Any]:
        """A tool defined by JSON Schema; ``function`` receives the arguments as keywords.

        With ``takes_context=True`` the function also receives ``ctx=`` (the run context).
        """
        spec = ToolSpec(name, description, parameters, result_schema)
        return cls(
            spec,
            function,
            timeout=timeout,
            concurrent=concurrent,
            max_calls=max_calls,
            context_param="ctx" if takes_context else None,
            inline=inline,
        )

    def bind(self, function: ToolFunction) -> Tool[DepsT]:
        """The same spec and policies with another implementation (late binding)."""
        context_param = _context_param_of(function)
        return Tool(
            self.spec,
            function,
            timeout=self.timeout,
            concurrent=self.concurrent,
            max_calls=self.max_calls,
            context_param=context_param,
            adapter=_adapter_for(function, context_param),
            inline=self.inline,
        )

    # -- use --------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check ``arguments`` against the schema and convert typed parameters.

        Raises :class:`ToolArgumentsError` listing every problem with its path.
        """
        validator = self._validator
        if validator is None:
            validator = self._validator = _jsonschema_rs().validator_for(self.spec.parameters)
        if not validator.is_valid(arguments):
            raise ToolArgumentsError(
                [_describe_error(e) for e in validator.iter_errors(arguments)]
            )
        if self._adapter is None:
            return arguments
        try:
            converted: dict[str, Any] = self._adapter.validate_python(arguments)
        except _pydantic().ValidationError as exc:
            raise ToolArgumentsError(
                [
                    f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                    for err in exc.errors()
                ]
            ) from exc
        return converted

    def invoke(self, ctx: RunContext[DepsT], arguments: dict[str, Any]) -> Any:
        """Call the implementation (returns an awaitable for async tools)."""
        if self.function is None:
            raise RuntimeError(f"tool {self.name!r} has no implementation bound")
        if self.context_param is not None:
            return self.function(**arguments, **{self.context_param: ctx})
        return self.function(**arguments)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def tool(
    function: ToolFunction | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    concurrent: bool = False,
    max_calls: int | None = None,
    inline: bool = False,
) -> Any:
    """Decorator: turn a sync or async function into a :class:`Tool`.

    Usable bare (``@tool``) or with options (``@tool(timeout=5, concurrent=True)``).
    """

    localns = sys._getframe(1).f_locals

    def wrap(fn: ToolFunction) -> Tool[Any]:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            timeout=timeout,
            concurrent=concurrent,
            max_calls=max_calls,
            inline=inline,
            localns=localns,
        )

    return wrap(function) if function is not None else wrap


def as_tool(item: Tool[Any] | ToolFunction) -> Tool[Any]:
    """Accept a :class:`Tool` or a plain function wherever tools are given."""
    return item if isinstance(item, Tool) else Tool.from_function(item)


class ToolLibrary:
    """Tool implementations registered by name, bound to spec tools at run time.

    The same agent spec can run against different libraries (staging versus production, an
    A/B test, an offline replay).
    """

    def __init__(self, items: Iterable[Tool[Any] | ToolFunction] = (), name: str = "") -> None:
        self.name = name
        self._items: dict[str, Tool[Any] | ToolFunction] = {}
        for item in items:
            self.register(item)

    def register(self, item: Tool[Any] | ToolFunction, name: str | None = None) -> None:
        key = name or (item.name if isinstance(item, Tool) else item.__name__)
        self._items[key] = item

    def add(self, function: ToolFunction) -> ToolFunction:
        """Decorator form of :meth:`register` that returns the function unchanged."""
        self.register(function)
        return function

    def get(self, name: str) -> Tool[Any] | ToolFunction | None:
        return self._items.get(name)

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @classmethod
    def from_module(cls, module: types.ModuleType) -> ToolLibrary:
        """Every :class:`Tool` and every public function defined in ``module``."""
        library = cls(name=module.__name__)
        for attr, value in vars(module).items():
            if attr.startswith("_"):
                continue
            if isinstance(value, Tool):
                library.register(value)
            elif inspect.isfunction(value) and value.__module__ == module.__name__:
                library.register(value, attr)
        return library


# -- serialization of results -------------------------------------------------------------


def serialize_result(value: Any) -> tuple[str, bool]:
    """Render a tool's return value as the observation text.

    Returns ``(text, ok)``; ``ok`` is false when the value could not be turned into JSON, in
    which case the text is its ``repr`` behind a visible marker.
    """
    kind = type(value)
    if kind is str:
        return value, True
    if kind is int or kind is float:
        return repr(value), True
    try:
        return json.dumps(value, ensure_ascii=False, default=_json_default), True
    except (TypeError, ValueError) as exc:
        return (
            f"[result of type {type(value).__name__} is not JSON-serializable ({exc}); "
            f"shown as text] {value!r}",
            False,
        )


def _json_default(value: Any) -> Any:
    pydantic = sys.modules.get("pydantic")  # an instance of its models means it is loaded
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, numbers.Integral):  # numpy, mpmath and other numeric types
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# -- schema from a function --------------------------------------------------------------


def _schema_from_function(
    function: ToolFunction, localns: dict[str, Any] | None = None
) -> tuple[dict[str, Any], str | None, _ArgumentsAdapter | None, str]:
    signature = inspect.signature(function)
    hints = _type_hints(function, localns)
    description, param_docs = _parse_docstring(inspect.getdoc(function) or "")
    context_param = _context_param_of(function, hints)
    parameters = [
        (pname, param, hints.get(pname, Any))
        for pname, param in signature.parameters.items()
        if pname != context_param
        and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    ]
    simple = _simple_schema(parameters, param_docs)
    if simple is not None:  # plain JSON types: no pydantic model needed (50x faster)
        return simple, context_param, None, description

    pydantic = _pydantic()
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
    schema = _strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    adapter = _adapter_for(function, context_param, model, hints)
    return schema, context_param, adapter, description


def _type_hints(function: ToolFunction, localns: dict[str, Any] | None) -> dict[str, Any]:
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


class _ArgumentsAdapter:
    """Converts validated JSON arguments into the Python types the function declared."""

    def __init__(self, model: type[pydantic.BaseModel]) -> None:
        self._model = model
        self._names = list(model.model_fields)

    def validate_python(self, arguments: dict[str, Any]) -> dict[str, Any]:
        instance = self._model.model_validate(arguments)
        # Only the arguments the model gave: the function's own defaults fill the rest.
        return {name: getattr(instance, name) for name in self._names if name in arguments}


def _adapter_for(
    function: ToolFunction,
    context_param: str | None,
    model: type[pydantic.BaseModel] | None = None,
    hints: dict[str, Any] | None = None,
) -> _ArgumentsAdapter | None:
    """A converter only when some parameter is not plain JSON (models, enums, dates, ...)."""
    try:
        hints = hints if hints is not None else typing.get_type_hints(function)
    except (NameError, TypeError):
        return None
    typed = {k: v for k, v in hints.items() if k not in ("return", context_param)}
    if all(_is_json_native(v) for v in typed.values()):
        return None
    if model is None:
        _, _, adapter, _ = _schema_from_function(function)
        return adapter
    return _ArgumentsAdapter(model)


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


def _context_param_of(function: ToolFunction, hints: dict[str, Any] | None = None) -> str | None:
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


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they cost prompt tokens and add nothing."""
    if isinstance(schema, dict):
        return {
            k: v if k in _VALUE_KEYWORDS else _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


#: Keywords whose values are data, not schemas: a "title" key inside them is kept.
_VALUE_KEYWORDS = frozenset({"default", "enum", "const", "examples"})


def _describe_error(error: Any) -> str:
    path = "/".join(str(p) for p in error.instance_path) or "(root)"
    return f"{path}: {error.message}"


def _is_async_callable(function: ToolFunction) -> bool:
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # noqa: B004 - callable objects
    return call is not None and inspect.iscoroutinefunction(call)


def _spec_problems(
    spec: ToolSpec, timeout: float | None, max_calls: int | None, check_schema: bool
) -> list[str]:
    problems: list[str] = []
    if not TOOL_NAME_PATTERN.match(spec.name):
        problems.append(
            f"name {spec.name!r} must match {TOOL_NAME_PATTERN.pattern} (provider APIs reject it)"
        )
    if spec.parameters.get("type", "object") != "object":
        problems.append("parameters must be a JSON Schema of type 'object'")
    if check_schema:
        try:
            _jsonschema_rs().meta.validate(spec.parameters)
        except Exception as exc:  # invalid, or a schema the validator cannot even read
            problems.append(f"parameters are not a valid JSON Schema: {exc}")
    if timeout is not None and timeout <= 0:
        problems.append(f"timeout must be > 0 seconds, got {timeout}")
    if max_calls is not None and max_calls < 1:
        problems.append(f"max_calls must be >= 1, got {max_calls}")
    return problems


def _jsonschema_rs() -> types.ModuleType:
    """The validator module, imported on first use: it is a third of the import time of a
    module that most programs import long before they validate anything."""
    import jsonschema_rs

    return jsonschema_rs


AwaitableResult = Awaitable[Any]

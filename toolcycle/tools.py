"""Tools: serializable specs, their implementations, argument validation and the tool library.

A :class:`ToolSpec` is data (name, description, JSON Schema of the arguments, optional result
schema) and can live in an agent spec file. A :class:`Tool` binds a spec to a callable. Schemas
are built and validators compiled once, at construction, so the per-call cost is one
``jsonschema_rs`` validation (the fastest of the three validators measured in
``bench/validators.py``) plus, only for parameters whose Python type is not plain JSON, one
pydantic conversion.
"""

from __future__ import annotations

import inspect
import math
import sys
import types
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypedDict, Unpack, runtime_checkable

from ._observation import MAX_INT_DIGITS as MAX_INT_DIGITS  # re-exported
from ._observation import serialize_result as serialize_result  # re-exported
from ._tool_schema import TOOL_NAME_PATTERN as TOOL_NAME_PATTERN  # re-exported: public name
from ._tool_schema import (
    ArgumentsAdapter,
    adapter_for,
    check_meta,
    compile_validator,
    context_param_of,
    describe_error,
    load_pydantic,
    reference_problems,
    schema_from_function,
)
from ._tool_schema import ToolFunction as ToolFunction  # re-exported: tools' callable type
from .context import RunContext


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What a model is told about a tool: built once per agent, reused by every request.

    It lives with the tools (not with the model adapters) because the core builds it and the
    adapters only read it: the output tool is a definition, and the core must not depend on
    the adapter layer.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool = False


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


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """How the loop treats a tool's calls: the one place the per-tool policies are spelled out.

    ``Tool``, ``Tool.from_function``, ``Tool.from_schema`` and ``@tool`` take these fields as
    keywords (:class:`ToolOptions`) or a whole ``policy=``; ``Tool.bind`` and agent specs carry
    the policy over as one value, so a new field cannot be dropped on the way.
    """

    timeout: float | None = None
    """Seconds a call may run; when it runs out the call becomes an error observation."""
    concurrent: bool = False
    """Safe to run beside neighbouring concurrent calls of the same turn."""
    max_calls: int | None = None
    """Calls per run; further calls get an error observation instead of running."""
    inline: bool = False
    """A sync tool that is cheap and never blocks runs on the event loop instead of a worker
    thread, saving the thread hop; a timeout cannot interrupt it."""
    requires_approval: bool = False
    """Every call waits for a decision (the agent's ``approval=`` policy, or a person through
    a paused run: see docs/approval.md) before it runs."""
    idempotent: bool = False
    """Running a call twice has the effect of running it once. A durable run (docs/durable.md)
    re-runs such a call that a killed process left unfinished; any other such call is answered
    "interrupted" instead, since it may or may not have taken effect."""
    read_only: bool = False
    """A call changes nothing outside the run (a lookup): a learned routine may run the tool
    without the model asking for it (docs/playbook.md, "Routines")."""

    def problems(self) -> list[str]:
        problems: list[str] = []
        if self.timeout is not None and not _positive_seconds(self.timeout):
            problems.append(
                f"timeout must be a finite number of seconds > 0, got {self.timeout!r}")
        max_calls = self.max_calls
        if max_calls is not None and (
            isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1
        ):
            problems.append(f"max_calls must be an integer >= 1, got {max_calls!r}")
        for flag in ("concurrent", "inline", "requires_approval", "idempotent", "read_only"):
            if not isinstance(getattr(self, flag), bool):
                problems.append(f"{flag} must be True or False")
        return problems


class ToolOptions(TypedDict, total=False):
    """:class:`ToolPolicy`'s fields as keyword arguments (``@tool(timeout=5)``)."""

    timeout: float | None
    concurrent: bool
    max_calls: int | None
    inline: bool
    requires_approval: bool
    idempotent: bool
    read_only: bool


_DEFAULT_POLICY = ToolPolicy()


def _policy_of(policy: ToolPolicy | None, options: ToolOptions) -> ToolPolicy:
    base = policy if policy is not None else _DEFAULT_POLICY
    return replace(base, **options) if options else base


class ToolArgumentsError(Exception):
    """Arguments failed validation; ``problems`` lists each one as ``path: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Tool[DepsT]:
    """A tool spec bound to its implementation.

    Per-tool policies are a :class:`ToolPolicy` (``policy=``) or its fields as keywords; the
    loop reads them as attributes of the tool (``tool.timeout``, ``tool.requires_approval``).
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
        "policy",
        "requires_approval",
        "spec",
        "timeout",
    )

    def __init__(
        self,
        spec: ToolSpec,
        function: ToolFunction | None = None,
        *,
        policy: ToolPolicy | None = None,
        context_param: str | None = None,
        adapter: ArgumentsAdapter | None = None,
        check_schema: bool = True,
        **options: Unpack[ToolOptions],
    ) -> None:
        policy = _policy_of(policy, options)
        problems = _spec_problems(spec, check_schema)
        if policy is not _DEFAULT_POLICY:  # the shared default has none (frozen)
            problems += policy.problems()
        validator: Any = None  # compiled on first use: keeps construction cheap
        if check_schema and not problems:
            # A schema from outside is compiled now: a reference that resolves to nothing (or
            # only remotely) is a configuration error here, not a crash at the first call.
            try:
                validator = compile_validator(spec.parameters)
            except Exception as exc:
                problems.append(f"parameters cannot be compiled: {str(exc).splitlines()[0]}")
        if problems:
            from .errors import ConfigurationError

            raise ConfigurationError(problems, subject=f"tool {spec.name!r}")
        self.spec = spec
        self.function = function
        self.policy = policy
        # copied out of the policy: the loop reads these on every call
        self.timeout = policy.timeout
        self.concurrent = policy.concurrent
        self.max_calls = policy.max_calls
        self.inline = policy.inline
        self.requires_approval = policy.requires_approval
        self.context_param = context_param
        self.is_async = function is not None and _is_async_callable(function)
        self._adapter = adapter
        self._validator = validator

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        localns: dict[str, Any] | None = None,
        policy: ToolPolicy | None = None,
        **options: Unpack[ToolOptions],
    ) -> Tool[Any]:
        """Build the spec from the signature, type hints and docstring of ``function``.

        ``localns`` resolves string annotations naming local classes (``@tool`` passes the
        caller's locals, so tools defined inside functions work under
        ``from __future__ import annotations``).
        """
        try:
            schema, context_param, adapter, doc_description = schema_from_function(
                function, localns
            )
        except (NameError, TypeError, load_pydantic().PydanticUserError,
                load_pydantic().PydanticSchemaGenerationError) as exc:
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
            policy=_policy_of(policy, options),
            context_param=context_param,
            adapter=adapter,
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
        takes_context: bool = False,
        policy: ToolPolicy | None = None,
        **options: Unpack[ToolOptions],
    ) -> Tool[Any]:
        """A tool defined by JSON Schema; ``function`` receives the arguments as keywords.

        With ``takes_context=True`` the function also receives ``ctx=`` (the run context).
        """
        spec = ToolSpec(name, description, parameters, result_schema)
        return cls(
            spec,
            function,
            policy=_policy_of(policy, options),
            context_param="ctx" if takes_context else None,
        )

    def bind(self, function: ToolFunction) -> Tool[DepsT]:
        """The same spec and policies with another implementation (late binding)."""
        context_param = context_param_of(function)
        return Tool(
            self.spec,
            function,
            policy=self.policy,
            context_param=context_param,
            adapter=adapter_for(function, context_param),
        )

    # -- use --------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check ``arguments`` against the schema and convert typed parameters.

        Raises :class:`ToolArgumentsError` listing every problem with its path, also when the
        validator itself fails (the model then hears it instead of the run ending).
        """
        try:
            validator = self._validator
            if validator is None:
                validator = self._validator = compile_validator(self.spec.parameters)
            if not validator.is_valid(arguments):
                raise ToolArgumentsError(
                    [describe_error(e) for e in validator.iter_errors(arguments)]
                )
        except ToolArgumentsError:
            raise
        except Exception as exc:  # defence in depth: construction compiles checked schemas
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise ToolArgumentsError(
                [f"(schema): the tool's argument schema cannot be used: {type(exc).__name__}: "
                 f"{first}"]
            ) from exc
        if self._adapter is None:
            return arguments
        try:
            converted: dict[str, Any] = self._adapter.validate_python(arguments)
        except load_pydantic().ValidationError as exc:
            raise ToolArgumentsError(
                [f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                 for err in exc.errors()]) from exc
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
    policy: ToolPolicy | None = None,
    **options: Unpack[ToolOptions],
) -> Any:
    """Decorator: turn a sync or async function into a :class:`Tool`.

    Usable bare (``@tool``) or with options (``@tool(timeout=5, requires_approval=True)``,
    the fields of :class:`ToolPolicy`).
    """

    localns = sys._getframe(1).f_locals

    def wrap(fn: ToolFunction) -> Tool[Any]:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            localns=localns,
            policy=_policy_of(policy, options),
        )

    return wrap(function) if function is not None else wrap


@runtime_checkable
class Toolset(Protocol):
    """Tools known only once something is reached (an MCP server's tool list).

    An agent given a toolset among its ``tools`` asks it for its current tools at the start of
    each run and before each model request (return the same list object while nothing
    changed: that is what keeps the check cheap), so they are validated, limited, observed and
    traced like any other, and closes it when the agent closes.
    :class:`toolcycle.mcp.MCPTools` is one.
    """

    async def get_tools(self) -> Sequence[Tool[Any]]: ...
    async def close(self) -> None: ...


def as_tool(item: Tool[Any] | ToolFunction) -> Tool[Any]:
    """Accept a :class:`Tool` or a plain function wherever tools are given."""
    return item if isinstance(item, Tool) else Tool.from_function(item)


class ToolLibrary:
    """Tool implementations registered by name, bound to spec tools at run time.

    The same agent spec can run against different libraries (staging versus production, an
    A/B test, an offline replay).
    """

    def __init__(self, items: Iterable[Tool[Any] | ToolFunction | Toolset] = (), name: str = ""
                 ) -> None:
        self.name = name
        self._items: dict[str, Tool[Any] | ToolFunction] = {}
        #: Toolsets (an MCP server's tools): every agent bound from this library offers all
        #: their tools besides the spec's, known once the toolset is reached at a run's start.
        self.toolsets: list[Toolset] = []
        for item in items:
            self.register(item)

    def register(self, item: Tool[Any] | ToolFunction | Toolset, name: str | None = None
                 ) -> None:
        if isinstance(item, Toolset) and not isinstance(item, Tool):
            if item not in self.toolsets:
                self.toolsets.append(item)
            return
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
        """Every :class:`Tool`, :class:`Toolset` (``MCPTools``) and public function defined
        in ``module``."""
        library = cls(name=module.__name__)
        for attr, value in vars(module).items():
            if attr.startswith("_") or isinstance(value, type):
                continue
            if isinstance(value, Tool | Toolset):
                library.register(value)
            elif inspect.isfunction(value) and value.__module__ == module.__name__:
                library.register(value, attr)
        return library


def _is_async_callable(function: ToolFunction) -> bool:
    if inspect.iscoroutinefunction(function):
        return True
    if inspect.isfunction(function) or inspect.ismethod(function):
        return False  # its __call__ is the interpreter's wrapper, never a coroutine function
    call = getattr(function, "__call__", None)  # noqa: B004 - callable objects
    return call is not None and inspect.iscoroutinefunction(call)


def _spec_problems(spec: ToolSpec, check_schema: bool) -> list[str]:
    problems: list[str] = []
    if not isinstance(spec.name, str) or not TOOL_NAME_PATTERN.match(spec.name):
        problems.append(
            f"name {spec.name!r} must match {TOOL_NAME_PATTERN.pattern} (provider APIs reject it)"
        )
    if not isinstance(spec.description, str):
        problems.append(f"description must be a string, got {type(spec.description).__name__}")
    if not isinstance(spec.parameters, dict):
        problems.append("parameters must be a JSON Schema (a dict) of type 'object', got "
                        f"{type(spec.parameters).__name__}")
    elif spec.parameters.get("type", "object") != "object":
        problems.append("parameters must be a JSON Schema of type 'object'")
    elif check_schema:
        try:
            check_meta(spec.parameters)  # a remote $schema is refused, not fetched
        except Exception as exc:  # invalid, or a schema the validator cannot even read
            problems.append(f"parameters are not a valid JSON Schema: {exc}")
        else:
            problems.extend(f"parameters: {p}" for p in reference_problems(spec.parameters))
    return problems


def _positive_seconds(value: object) -> bool:
    """A usable duration: a real number, finite (NaN compares false with everything, so
    ``nan <= 0`` let it through and every call then 'timed out after nan s') and > 0."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


AwaitableResult = Awaitable[Any]

"""AgentSpec: an agent as data (JSON or gram), bound to tool implementations at run time.

A spec holds everything about an agent that can be stored, diffed, reviewed and shared: name,
description, instructions, model, tool specs (name, description, argument schema, optional
result schema), output schema, task input schema, limits and tool selection. Tool
*implementations* stay code: ``spec.bind(library)`` looks each tool up by name in a
:class:`~toolcycle.tools.ToolLibrary`, checks that the code fits the schema (see
:mod:`toolcycle.spec.binding`) and returns a runnable :class:`~toolcycle.agent.Agent`. The
same spec bound to two libraries gives two agents whose traces can be compared (A/B tests,
staging versus production, offline replays).

JSON and gram (:mod:`toolcycle.spec.gram_format`) hold the same information and convert into each
other without loss; this module reaches gram only through :data:`FORMATS`, where the gram module
registers itself. Malformed files raise :class:`SpecError` with the line and column.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pydantic

from .._tool_schema import compile_validator, schema_problems
from ..errors import ConfigurationError
from ..errors import SpecError as SpecError  # defined in errors.py (the tree); importable here
from ..limits import Limits
from ..tool_selection import ToolSelection
from ..tools import Tool, ToolFunction, ToolLibrary, ToolSpec
from .binding import bind_tools
from .bounds import load_json, read_spec_bytes
from .gram_syntax import Document

if TYPE_CHECKING:
    from ..agent import Agent
    from ..models.base import Model

#: Written into JSON specs so that later format changes can be recognised.
SPEC_VERSION = 1
_SPEC_KEYS = (
    "spec_version", "name", "description", "instructions", "model", "tools", "output_schema",
    "input_schema", "limits", "tool_selection", "metadata",
)
_TOOL_KEYS = ("name", "description", "parameters", "result_schema", "read_only")

LibraryLike = ToolLibrary | types.ModuleType | Iterable[Tool[Any] | ToolFunction]


@dataclass(frozen=True, slots=True)
class SpecFormat:
    """How one kind of spec file is read (``read(text, source)``) and written."""

    read: Callable[[str, str], AgentSpec]
    write: Callable[[AgentSpec], str]


#: Spec file formats by file suffix. JSON is this module's own; gram registers itself from
#: :mod:`toolcycle.spec.gram_format`, which the package imports, so that the data module never
#: imports a format module (the format module builds specs, so that would be an import cycle).
FORMATS: dict[str, SpecFormat] = {}


def spec_format(suffix: str, source: str = "") -> SpecFormat:
    """The format for a file suffix, or a :class:`SpecError` that names the known ones."""
    try:
        return FORMATS[suffix]
    except KeyError:
        known = " or ".join(sorted(FORMATS))
        raise SpecError(f"unknown spec format {suffix!r}: use {known}", source=source) from None


@dataclass(slots=True)
class AgentSpec:
    """A serializable agent: everything but the tool implementations."""

    name: str
    description: str = ""
    instructions: str = ""
    model: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    output_schema: dict[str, Any] | None = None
    limits: Limits | None = None
    #: The task input's JSON Schema: ``bind()`` gives the agent ``input_type`` from it.
    input_schema: dict[str, Any] | None = None
    #: :class:`~toolcycle.tool_selection.ToolSelection` settings (``min_relevance``,
    #: ``max_tools``; ``{}`` for the defaults): each run is offered only the tools related to
    #: its prompt. ``None``: every tool, every run.
    tool_selection: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The tools declared lookups (``"read_only": true`` on a tool): bound with
    #: ``read_only=True``, so that the playbook may call them for the model (its probes,
    #: routines and stand-ins; docs/playbook.md). A spec is where a team declares its tools,
    #: so that is where a lookup is said to be one.
    read_only: list[str] = field(default_factory=list)

    # -- JSON ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"spec_version": SPEC_VERSION, "name": self.name}
        if self.description:
            data["description"] = self.description
        if self.instructions:
            data["instructions"] = self.instructions
        if self.model is not None:
            data["model"] = self.model
        data["tools"] = [{**t.to_dict(), **({"read_only": True} if t.name in self.read_only
                                            else {})} for t in self.tools]
        if self.output_schema is not None:
            data["output_schema"] = self.output_schema
        if self.input_schema is not None:
            data["input_schema"] = self.input_schema
        if self.limits is not None:
            data["limits"] = limits_to_dict(self.limits)
        if self.tool_selection is not None:
            data["tool_selection"] = dict(self.tool_selection)
        if self.metadata:
            data["metadata"] = self.metadata
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, doc: Document | None = None) -> AgentSpec:
        """Build and check a spec; ``doc`` (the JSON text) lets errors give a line."""
        where = Locator(doc)
        if not isinstance(data, dict):
            raise where.error("a spec must be a JSON object")
        unknown = [k for k in data if k not in _SPEC_KEYS]
        if unknown:
            raise where.error(
                f"unknown field {unknown[0]!r}; expected any of {', '.join(_SPEC_KEYS)}",
                _key(unknown[0]),
            )
        version = data.get("spec_version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise where.error(f"spec_version {version!r} is not supported (expected 1)")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise where.error("'name' must be a non-empty string", _key("name"))
        tools = [_tool(item, k, where) for k, item in enumerate(_list(data, "tools", where))]
        spec = cls(
            name=name,
            description=_text(data, "description", where),
            instructions=_text(data, "instructions", where),
            model=_optional_text(data, "model", where),
            tools=[tool for tool, _ in tools],
            read_only=[tool.name for tool, read_only in tools if read_only],
            output_schema=_optional_schema(data, "output_schema", where),
            input_schema=_optional_schema(data, "input_schema", where),
            limits=limits_from_dict(data.get("limits"), where),
            tool_selection=tool_selection_from_dict(data.get("tool_selection"), where),
            metadata=_mapping(data, "metadata", where),
        )
        spec.check_tools(where)
        return spec

    @classmethod
    def from_json(cls, text: str, source: str = "") -> AgentSpec:
        data = load_json(text, source)  # size, depth and number bounds first (rel-09)
        return cls.from_dict(data, Document([], text, source))

    # -- gram and files --------------------------------------------------------------------

    def to_gram(self) -> str:
        return spec_format(".gram").write(self)

    @classmethod
    def from_gram(cls, text: str, source: str = "") -> AgentSpec:
        return spec_format(".gram").read(text, source)

    @classmethod
    def load(cls, path: str | Path) -> AgentSpec:
        """Read a ``.gram`` or ``.json`` file (chosen by its suffix)."""
        path = Path(path)
        found = spec_format(path.suffix, str(path))
        return found.read(read_spec_bytes(path), str(path))

    def dump(self, path: str | Path) -> None:
        """Write a ``.gram`` or ``.json`` file (chosen by its suffix)."""
        path = Path(path)
        path.write_text(spec_format(path.suffix).write(self), encoding="utf-8")

    # -- binding ---------------------------------------------------------------------------

    def check(self, library: LibraryLike) -> list[str]:
        """Every reason binding to ``library`` would fail (empty: it binds)."""
        return bind_tools(self.tools, as_library(library), set(self.read_only))[1]

    def bind(
        self, library: LibraryLike, *, model: Any = None, **agent_options: Any
    ) -> Agent[Any, Any]:
        """A runnable :class:`~toolcycle.agent.Agent` with the library's implementations.

        ``model`` (a model object or string) overrides the spec's model; ``agent_options`` go
        to :class:`~toolcycle.agent.Agent` (callbacks, trace_store, ``output`` to replace the
        spec's output schema with a typed one, ...). Raises
        :class:`~toolcycle.errors.ConfigurationError` listing every problem at once.
        """
        from ..agent import Agent
        from ..models import resolve_model

        library = as_library(library)
        tools, problems = bind_tools(self.tools, library, set(self.read_only))
        chosen = model if model is not None else self.model
        resolved: Model | None = None
        if chosen is None:
            problems.append("model: the spec names none and none was given to bind()")
        else:
            try:
                if isinstance(chosen, str):
                    chosen = model_string(chosen)
                resolved = resolve_model(chosen)
            except (ValueError, ImportError) as exc:
                problems.append(f"model: {exc}")
        selection: ToolSelection | None = None
        if self.tool_selection is not None:  # checked on reading, but the field is mutable
            try:
                selection = tool_selection(self.tool_selection)
            except ConfigurationError as exc:
                problems.extend(f"tool_selection: {p}" for p in exc.problems)
        if problems or resolved is None:
            raise ConfigurationError(problems, subject=f"binding of agent spec {self.name!r}")
        options: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "limits": self.limits,
        }
        if selection is not None:
            options["tool_selection"] = selection
        if self.output_schema is not None:
            options["output"] = output_type(self.output_schema)
        if self.input_schema is not None:
            options["input_type"] = output_type(self.input_schema)
        options.update(agent_options)
        return Agent(resolved, self.instructions, [*tools, *library.toolsets], **options)

    def check_tools(self, where: Locator | None = None) -> None:
        """Tool names are unique and every schema is a valid JSON Schema."""
        where = where or Locator(None)
        seen: dict[str, int] = {}
        for tool in self.tools:
            # The n-th definition of a name is found by searching for it n times.
            seen[tool.name] = seen.get(tool.name, 0) + 1
            needles = [where.tool(tool.name)] * seen[tool.name]
            if seen[tool.name] > 1:
                raise where.error(f"two tools are named {tool.name!r}", *needles)
            field = "parameters" if where.gram else _key("parameters")
            for label, schema in (("parameters", tool.parameters),
                                  ("result_schema", tool.result_schema)):
                problems = [] if schema is None else schema_problems(schema)
                if problems:
                    raise where.error(f"tool {tool.name!r}: {label} {_unusable(problems)}",
                                      *needles, field)
            if tool.parameters.get("type") != "object":
                raise where.error(
                    f"tool {tool.name!r}: parameters must be a JSON Schema of type 'object'",
                    *needles, field,
                )
        undeclared = [n for n in self.read_only if n not in seen]
        if undeclared:
            raise where.error(f"read_only names {undeclared[0]!r}, which is no tool of the spec")
        for key, schema in (("output", self.output_schema), ("input", self.input_schema)):
            problems = [] if schema is None else schema_problems(schema)
            if problems:
                raise where.error(f"{key}_schema {_unusable(problems)}", rf"\b{key}")


FORMATS[".json"] = SpecFormat(AgentSpec.from_json, AgentSpec.to_json)


def model_string(model: str) -> str:
    """toolcycle's ``provider:model`` for the gram agent examples' ``Provider/model`` form.

    ``"OpenAI/gpt-4o-mini"`` becomes ``"openai:gpt-4o-mini"``; other strings pass unchanged.
    """
    provider, slash, name = model.partition("/")
    if slash and ":" not in provider and provider.lower() in ("openai", "anthropic"):
        return f"{provider.lower()}:{name}"
    return model


def as_library(library: LibraryLike) -> ToolLibrary:
    """A :class:`ToolLibrary` from a library, a module, or a list of tools and functions."""
    if isinstance(library, ToolLibrary):
        return library
    if isinstance(library, types.ModuleType):
        return ToolLibrary.from_module(library)
    return ToolLibrary(library)


def output_type(schema: dict[str, Any]) -> Any:
    """A type the agent's output layer accepts, carrying ``schema`` and validating with it.

    The output tool shows the model exactly ``schema``; arguments are checked by the same
    JSON Schema validator as tool arguments and the output is the plain JSON value.
    """
    problems = schema_problems(schema)  # untrusted: a $ref is refused here, never fetched
    if problems:
        raise ConfigurationError(problems, subject="output schema")
    validator = compile_validator(schema)

    def check(value: Any) -> Any:
        errors = [
            f"{'/'.join(str(p) for p in e.instance_path) or '(root)'}: {e.message}"
            for e in validator.iter_errors(value)
        ]
        if errors:
            raise ValueError("; ".join(errors))
        return value

    return Annotated[Any, pydantic.WithJsonSchema(schema), pydantic.AfterValidator(check)]


# -- limits --------------------------------------------------------------------------------


def limits_to_dict(limits: Limits) -> dict[str, Any]:
    return {k: v for k, v in limits.to_dict().items() if v is not None}


def limits_from_dict(data: Any, where: Locator | None = None) -> Limits | None:
    where = where or Locator(None)
    if data is None:
        return None
    if not isinstance(data, dict):
        raise where.error("'limits' must be a record of limit names and values", "limits")
    known = Limits.__dataclass_fields__
    unknown = [k for k in data if k not in known]
    if unknown:
        raise where.error(
            f"unknown limit {unknown[0]!r}; expected any of {', '.join(known)}",
            "limits", re.escape(unknown[0]),  # the key is the file's text, not a pattern
        )
    try:
        return Limits(**data)
    except ConfigurationError as exc:
        raise where.error("limits: " + "; ".join(exc.problems), "limits") from exc


def tool_selection_from_dict(data: Any, where: Locator | None = None) -> dict[str, Any] | None:
    """The ``tool_selection`` record, checked by building the selection it describes."""
    where = where or Locator(None)
    if data is None:
        return None
    if not isinstance(data, dict):
        raise where.error("'tool_selection' must be a record like {min_relevance: 0.12, "
                          "max_tools: 8} ({} for the defaults)", "tool_selection")
    try:
        tool_selection(data)
    except ConfigurationError as exc:
        unknown = [k for k in data if k not in _SELECTION_KEYS]
        needles = [re.escape(str(unknown[0]))] if unknown else []  # the file's text, not a regex
        raise where.error("tool_selection: " + "; ".join(exc.problems),
                          "tool_selection", *needles) from exc
    return dict(data)


def tool_selection(settings: dict[str, Any]) -> ToolSelection:
    """The :class:`ToolSelection` a spec's settings describe; every problem in one
    :class:`ConfigurationError` (unknown settings included)."""
    unknown = [k for k in settings if k not in _SELECTION_KEYS]
    problems = [f"unknown setting {k!r}; expected any of {', '.join(_SELECTION_KEYS)}"
                for k in unknown]
    try:
        selection = ToolSelection(**{k: v for k, v in settings.items() if k in _SELECTION_KEYS})
    except ConfigurationError as exc:
        problems.extend(exc.problems)
    if problems:
        raise ConfigurationError(problems, subject="tool selection")
    return selection


#: What a spec can set; the embedder is code (pass ``tool_selection=`` to ``bind()`` for
#: another one), a spec always uses the offline hashing embedder.
_SELECTION_KEYS = ("min_relevance", "max_tools")


# -- reading helpers -----------------------------------------------------------------------


@dataclass(slots=True)
class Locator:
    """Turns a problem into a :class:`SpecError` pointing into the text when there is one.

    Internal, shared with :mod:`toolcycle.spec.gram_format`.
    """

    doc: Document | None
    gram: bool = False

    def error(self, message: str, *needles: str) -> SpecError:
        """An error at the last of ``needles`` (regexes searched one after another)."""
        if self.doc is None:
            return SpecError(message)
        line, column = self.doc.locate(*needles) if needles else (0, 0)
        return SpecError(message, line, column, self.doc.source)

    def tool(self, name: str) -> str:
        """A regex finding where the tool ``name`` is defined."""
        if self.gram:
            return r"[\[(]\s*`?" + re.escape(name) + r"\b"
        return r'"name"\s*:\s*' + re.escape(json.dumps(name))


def _key(key: str) -> str:
    """A regex finding a JSON key."""
    return re.escape(json.dumps(key)) + r"\s*:"


def _text(data: dict[str, Any], key: str, where: Locator) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise where.error(f"{key!r} must be a string", _key(key))
    return value


def _optional_text(data: dict[str, Any], key: str, where: Locator) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise where.error(f"{key!r} must be a string", _key(key))
    return value


def _list(data: dict[str, Any], key: str, where: Locator) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise where.error(f"{key!r} must be a list", _key(key))
    return value


def _mapping(data: dict[str, Any], key: str, where: Locator) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise where.error(f"{key!r} must be an object", _key(key))
    return value


def _optional_schema(data: dict[str, Any], key: str, where: Locator) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise where.error(f"{key!r} must be a JSON Schema object", _key(key))
    return value


def _tool(item: Any, index: int, where: Locator) -> tuple[ToolSpec, bool]:
    """A tool of the file, and whether it is declared read-only."""
    label = f"tools[{index}]"
    if not isinstance(item, dict):
        raise where.error(f"{label} must be an object with name, description and parameters")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise where.error(f"{label}: 'name' must be a non-empty string", _key("tools"))
    needle = where.tool(name)
    unknown = [k for k in item if k not in _TOOL_KEYS]
    if unknown:
        raise where.error(
            f"tool {name!r}: unknown field {unknown[0]!r}; expected any of "
            f"{', '.join(_TOOL_KEYS)}", needle, _key(unknown[0]),
        )
    description = item.get("description", "")
    if not isinstance(description, str):
        raise where.error(f"tool {name!r}: 'description' must be a string", needle)
    parameters = item.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        raise where.error(f"tool {name!r}: 'parameters' must be a JSON Schema object", needle)
    result = item.get("result_schema")
    if result is not None and not isinstance(result, dict):
        raise where.error(f"tool {name!r}: 'result_schema' must be a JSON Schema object", needle)
    read_only = item.get("read_only", False)
    if not isinstance(read_only, bool):
        raise where.error(f"tool {name!r}: 'read_only' must be true or false", needle,
                          _key("read_only"))
    return ToolSpec(name, description, parameters, result), read_only


def _unusable(problems: list[str]) -> str:
    """Why a schema from the file cannot be used: invalid, or a ``$ref`` that would have to
    be fetched or points to nothing (spec files are untrusted; nothing is ever fetched)."""
    return f"is not a valid JSON Schema: {'; '.join(problems)}"

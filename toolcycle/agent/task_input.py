"""Typed task input: ``Agent(..., input_type=Ticket)`` and ``agent.run(input=ticket)``.

The input type is anything pydantic can validate, as for outputs (a model, a dataclass, a
``TypedDict``, a spec's JSON Schema). A run's ``input=`` is validated first (every problem
listed in one :class:`~toolcycle.errors.InputError`, nothing sent to the model); the validated
value is ``ctx.input`` for tools, validators and callable instructions, and, unless a prompt is
given too, the user message is the input as JSON.

Instructions over an input are one of:

- a plain string (no ``{``): used as it is;
- a template such as ``"Triage ticket {title} from {customer.name}"``: each field is a dotted
  path into the input's JSON form (``{{`` writes a brace). The template is rendered by a
  :class:`string.Formatter` whose field lookup only walks the JSON data (dict keys and list
  indexes); ``str.format_map`` over the object itself would let a template (from a spec file
  someone else wrote) reach attributes such as ``{title.__class__.__init__.__globals__}``.
  Field paths are checked against the input schema at construction, and format widths are
  bounded so a template cannot ask for a gigabyte of padding;
- a callable ``instructions(ctx) -> str`` of the :class:`~toolcycle.context.RunContext`, which
  holds the input as ``ctx.input`` (and ``deps``).
"""

from __future__ import annotations

import inspect
import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._tool_schema import strip_titles
from ..context import RunContext
from ..errors import InputError

Instructions = str | Callable[[RunContext[Any]], str]
"""An agent's ``instructions``: a string (or template) or a callable of the run's context."""

_FIELD_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+))*")
_LARGE_NUMBER = re.compile(r"[0-9]{4,}")


class _JsonFormatter(string.Formatter):
    """``str.format`` whose fields are dotted paths into plain JSON data, nothing else."""

    def get_field(self, field_name: str, args: Sequence[Any],
                  kwargs: Mapping[str, Any]) -> tuple[Any, str]:
        value: Any = kwargs
        for key in field_name.split("."):
            if isinstance(value, Mapping) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                raise KeyError(field_name)
        return value, field_name


_FORMATTER = _JsonFormatter()


def template_fields(template: str) -> tuple[list[str], list[str]]:
    """The field paths of ``template`` and the problems with it (syntax, unsafe fields)."""
    fields: list[str] = []
    problems: list[str] = []
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        return [], [f"instructions template: {exc} (write {{{{ for a literal brace)"]
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not _FIELD_PATH.fullmatch(name) or "__" in name:
            problems.append(f"instructions template: field {{{name}}} must be a dotted path of "
                            "input field names (no attributes, indexes or positional fields)")
            continue
        if conversion not in (None, "s", "r"):
            problems.append(f"instructions template: conversion !{conversion} is not allowed")
        if spec and ("{" in spec or _LARGE_NUMBER.search(spec)):
            problems.append(f"instructions template: format spec {spec!r} of {{{name}}} must "
                            "be a plain spec with widths under 1000")
        fields.append(name)
    return fields, problems


class TaskInput:
    """An agent's input type: its validator, schema and how its instructions are built."""

    def __init__(self, input_type: Any, instructions: Instructions) -> None:
        """Raises nothing: :attr:`problems` lists every configuration problem."""
        import pydantic

        self.type = input_type
        self.problems: list[str] = []
        self.adapter: pydantic.TypeAdapter[Any] | None = None
        self.schema: dict[str, Any] = {}
        try:
            self.adapter = pydantic.TypeAdapter(input_type)
            self.schema = strip_titles(self.adapter.json_schema())
        except Exception as exc:
            self.problems.append(f"input_type {input_type!r} has no JSON Schema: {exc}")
        self.template: str | None = None
        if isinstance(instructions, str) and "{" in instructions:
            fields, problems = template_fields(instructions)
            self.problems.extend(problems)
            if self.adapter is not None:
                self.problems.extend(
                    f"instructions template: the input has no field {name!r}"
                    for name in fields if not _schema_has(self.schema, name.split(".")))
            self.template = instructions

    def validate(self, value: Any) -> Any:
        """The validated input, or an :class:`InputError` listing every problem."""
        import pydantic

        assert self.adapter is not None
        try:
            return self.adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            raise InputError([
                f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                for err in exc.errors()
            ], subject=f"input for {_type_name(self.type)}") from None

    def data(self, value: Any) -> Any:
        """The input's JSON form (what templates and the default prompt read)."""
        assert self.adapter is not None
        return self.adapter.dump_python(value, mode="json")

    def prompt(self, value: Any) -> str:
        """The default user message: the input as JSON."""
        return json.dumps(self.data(value), ensure_ascii=False, indent=2)

    def instructions(self, value: Any) -> str | None:
        """The template rendered over ``value`` (``None`` without a template)."""
        if self.template is None:
            return None
        data = self.data(value)
        try:
            return _FORMATTER.vformat(self.template, (), data if isinstance(data, dict) else {})
        except (KeyError, IndexError) as exc:  # an optional field left out, or a short list
            raise InputError([f"the instructions template needs {exc.args[0]!r}, which this "
                              "input does not have"], subject="input") from None


def _schema_has(schema: dict[str, Any], path: list[str]) -> bool:
    """Whether ``path`` can exist in data of ``schema`` (lenient where the schema is open)."""
    defs = schema.get("$defs", {})
    node: Any = schema
    for key in path:
        node = _resolved(node, defs)
        if not isinstance(node, dict):
            return True
        properties = node.get("properties")
        if isinstance(properties, dict):
            if key not in properties:
                return bool(node.get("additionalProperties", False))
            node = properties[key]
        elif node.get("type") == "array" and key.isdigit():
            node = node.get("items", {})
        else:  # a scalar has no fields; a union or free-form object: the run decides
            return node.get("type") not in ("string", "integer", "number", "boolean", "null")
    return True


def _resolved(node: Any, defs: dict[str, Any]) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        name = node["$ref"].rsplit("/", 1)[-1]
        node = defs.get(name)
    return node


def _type_name(type_: Any) -> str:
    return getattr(type_, "__name__", None) or repr(type_)


def start_run(task: TaskInput | None, instructions: Instructions, value: Any,
              prompt: str | None) -> tuple[Any, str | None, Instructions | None]:
    """A run's ``(input, user prompt, instructions)`` from its ``input=`` and prompt.

    ``instructions`` is ``None`` when the agent's plain string stands; a callable is passed on
    to be called once the run's context (holding the input) exists.
    """
    if task is None:
        if value is not None:
            raise InputError(["input= needs an agent with input_type= (or pass a prompt)"])
        return None, prompt, None if isinstance(instructions, str) else instructions
    if value is None:
        raise InputError([f"this agent takes input= ({_type_name(task.type)}); none was given"])
    validated = task.validate(value)
    rendered = task.instructions(validated)
    chosen: Instructions | None = rendered if rendered is not None else (
        None if isinstance(instructions, str) else instructions)
    return validated, prompt if prompt is not None else task.prompt(validated), chosen


def check_callable_instructions(instructions: Callable[..., Any]) -> list[str]:
    """A callable of the run's context: one positional parameter."""
    try:
        inspect.signature(instructions).bind(None)
    except TypeError:
        return ["instructions must be a string or a callable instructions(ctx) -> str"]
    except ValueError:  # no signature to read (a builtin): let the run find out
        pass
    return []

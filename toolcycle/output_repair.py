"""Structured output a small model can produce: the answer given as a string, repaired.

An output type with exactly one required string field (``class Answer(BaseModel): answer:
str``) is the commonest structured output a newcomer writes, and the one small models miss
most: they answer in plain text instead of calling the output tool, or call it with the bare
string (``final_result("Paris")``), or with the string under another name (``{"result":
"Paris"}``). In each case the answer is there and only its wrapping is wrong; refusing it
costs an attempt (often the only one) for no gain. So the reply is repaired into the object the
tool wants, and the repair is recorded beside the reply's other repairs
(:func:`toolcycle.models.repair.repair_reply`), so the trace shows what the model wrote.

Nothing is guessed where the shape is not that one: a schema with two required fields, a
non-string field, an object under another name or a non-JSON string are left as they are, and
the output tool refuses them as before, with errors that say what to change
(:func:`schema_problems`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Protocol

from .messages import Message, Part, ToolCall, bounded_repr
from .tools import ToolDefinition


class OutputTools(Protocol):
    """What the repair reads of an :class:`~toolcycle.output.Output` (which imports this module,
    so it is named by its shape): the output tool, reflection's ``submit``, the tool's name."""

    @property
    def tool(self) -> ToolDefinition | None: ...

    @property
    def submit_tool(self) -> ToolDefinition | None: ...

    @property
    def name(self) -> str: ...

#: How much of a repaired value the trace's repair note quotes.
_QUOTED = 80


def lone_string_field(output: OutputTools) -> str | None:
    """The name of the output tool's one required field when it is a string, else ``None``.

    A wrapped type (``Output(str | int)``, lists) has ``response`` as its one field; it counts
    only when that field is a plain string too. Reflection is left alone: there, ``submit``
    ends the attempt, and an answer in text has no preview to submit.
    """
    tool = output.tool
    if tool is None or output.submit_tool is not None:
        return None
    schema = tool.parameters
    required = schema.get("required")
    properties = schema.get("properties")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(properties, dict):
        return None
    name: object = required[0]
    if not isinstance(name, str):
        return None
    field = properties.get(name)
    return name if isinstance(field, dict) and field.get("type") == "string" else None


def text_as_output(output: OutputTools, text: str) -> dict[str, Any] | None:
    """A text answer given where the output tool was due, as that tool's arguments; ``None``
    when the output is not a lone string field or the text is blank."""
    field = lone_string_field(output)
    if field is None or not text.strip():
        return None
    return {field: text.strip()}


def repair_output_reply(
    message: Message, output: OutputTools, repairs: list[str]
) -> Message:
    """``message`` with its output-tool calls' arguments repaired where the answer is a string
    in the wrong wrapping; a note per repair is appended to ``repairs``.

    A text-only reply that :func:`text_as_output` takes as the output is noted here too (the
    message is unchanged: the loop ends the attempt with it), so the reply's trace step says so.
    The same object comes back when nothing is repaired (the common case allocates nothing).
    """
    field = lone_string_field(output)
    if field is None:
        return message
    parts = message.parts
    repaired: list[Part] | None = None
    calls = 0
    for index, part in enumerate(parts):
        kept: Part = part
        if isinstance(part, ToolCall):
            calls += 1
            if part.name == output.name and part.original_name is None:
                kept = _repaired_call(part, field, output, repairs)
        if kept is not part and repaired is None:
            repaired = list(parts[:index])
        if repaired is not None:
            repaired.append(kept)
    if calls == 0 and text_as_output(output, message.text) is not None:
        repairs.append(f"the answer was written as text, not as a call of `{output.name}`; "
                       f"taken as its `{field}`")
    return message if repaired is None else replace(message, parts=repaired)


def _repaired_call(call: ToolCall, field: str, output: OutputTools, repairs: list[str]
                   ) -> ToolCall:
    """The output call with ``{field: the string}`` where it gave a bare JSON string, or an
    object whose one entry is a string under another name; the call itself otherwise."""
    value: str | None = None
    arguments = call.arguments
    if arguments is None:
        value = _json_string(call.raw_arguments)
        written = "a bare string"
    elif field not in arguments and len(arguments) == 1 and _one_property(output):
        (key, only), = arguments.items()
        if isinstance(only, str):
            value = only
            written = f"a string under `{bounded_repr(key)[:_QUOTED]}`"
    if value is None:
        return call
    fixed = {field: value}
    repairs.append(f"`{call.name}` was given {written} ({bounded_repr(value)[:_QUOTED]}); "
                   f"taken as its `{field}`")
    return replace(call, arguments=fixed, raw_arguments=json.dumps(fixed, ensure_ascii=False),
                   parse_error=None)


def _one_property(output: OutputTools) -> bool:
    """Whether the output object has no field but the one: only then is a string under another
    name surely meant for it (with optional fields beside, the name may be one of theirs)."""
    assert output.tool is not None
    properties = output.tool.parameters.get("properties")
    return isinstance(properties, dict) and len(properties) == 1


def _json_string(raw: str) -> str | None:
    """``raw`` as a JSON string value, else ``None``; never raises (model output)."""
    text = raw.strip()
    if not text.startswith('"'):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) and value.strip() else None


# -- errors that say what to change -------------------------------------------------------------


def schema_problems(errors: list[Any], top: tuple[str, ...], schema: dict[str, Any]
                    ) -> list[str]:
    """pydantic's errors for the output tool's arguments, each saying what to change: the
    field (as the model wrote its path), what it expects (pydantic's message, and the schema's
    type, format or enum where pydantic's message does not name it), and what was given.

    ``errors`` are pydantic's ``ValidationError.errors()`` dicts (typed data, not text);
    ``top`` the wrapper key when the type is wrapped; ``schema`` the output tool's parameters.
    """
    found: list[str] = []
    for error in errors:
        loc = (*top, *(str(p) for p in error.get("loc", ())))
        path = ".".join(loc) or "(root)"
        text = f"{path}: {error.get('msg', 'invalid')}"
        expected = _expected(schema, loc)
        if expected and error.get("type") == "missing":
            text += f" (expected {expected})"
        elif "input" in error and error.get("type") != "missing":
            text += f"; given {bounded_repr(error['input'])[:_QUOTED]}"
            if expected and error.get("type") in ("string_type", "model_type", "dict_type"):
                text += f", expected {expected}"
        found.append(text)
    return found


def _expected(schema: dict[str, Any], loc: tuple[str, ...]) -> str | None:
    """What the schema wants at ``loc`` (a top-level field), in words."""
    properties = schema.get("properties")
    if len(loc) != 1 or not isinstance(properties, dict):
        return None
    return expected(properties.get(loc[0]))


def expected(field: object) -> str | None:
    """What a field's (or a tool parameter's) schema wants, in words: its enum, else its type
    and format; ``None`` when the schema says neither (a union, a ``$ref``)."""
    if not isinstance(field, dict):
        return None
    enum = field.get("enum")
    if isinstance(enum, list) and enum:
        shown = ", ".join(bounded_repr(v)[:40] for v in enum[:12])
        return f"one of {shown}" + (" ..." if len(enum) > 12 else "")
    kind, fmt = field.get("type"), field.get("format")
    if not isinstance(kind, str):
        return None
    article = "an" if kind[:1] in ("a", "i", "o") else "a"  # array, integer, object
    if kind == "array":  # "an array" alone says nothing to a model that passed one, nested
        item = expected(field.get("items"))
        return f"an array, each item {item}" if item else "an array"
    return f"{article} {kind} in {fmt[:40]} format" if isinstance(fmt, str) else f"{article} {kind}"

"""Native output mode over a text protocol: the answer written under the output's schema.

A cloud API takes ``response_format`` and constrains its model's reply; a text model has no
such field, but llama.cpp (in-process, or ``llama_cpp.server``) turns a JSON Schema into a
grammar that masks every token leaving it. So in native mode (``Output(..., mode="native")``)
the JSON protocol's answer is no longer ``{"answer": "<text>"}`` but
``{"answer": <an instance of the output's schema>}``, and every reply is written under the
union of the offered calls and that answer (:func:`.constrained.reply_schema`): a small
model's structured answer is valid JSON of the right shape by construction, whatever the
pack's constrained default (the grammar *is* the mode). The union goes to the inner model as
its typed :attr:`~toolcycle.models.base.ModelSettings.response_format`, which each inner
adapter sends its own way (llama.cpp's grammar, an OpenAI-compatible server's
``response_format``). The answer's value is handed to the run as JSON text, which the run
parses and validates as in every mode.
"""

from __future__ import annotations

import json
from typing import Any

from ...output_modes import ResponseFormat
from ..base import ModelSettings
from .constrained import ANSWER_KEY, reply_schema
from .describe import describe_object

#: The name the union schema goes by on the inner request.
REPLY_FORMAT = "reply"


def answer_schema(settings: ModelSettings) -> dict[str, Any] | None:
    """The schema the answer must follow this request (``None``: not native mode)."""
    return settings.response_format.schema if settings.response_format is not None else None


def reply_format(settings: ModelSettings) -> ResponseFormat | None:
    """The inner request's response format in native mode: the offered calls (unless tools
    are withdrawn) or the answer in the output's schema; ``None`` outside native mode."""
    answer = answer_schema(settings)
    if answer is None:
        return None
    tools = settings.tools if settings.tool_choice != "none" else ()
    schema = reply_schema(tools, settings.tool_choice if tools else "none",
                          parallel=bool(settings.parallel_tool_calls), answer=answer)
    assert schema is not None, "an answer schema always gives a reply schema"
    return ResponseFormat(REPLY_FORMAT, schema)


def answer_form(settings: ModelSettings) -> str:
    """How the prompt shows the answer: ``{"answer": "..."}``, or in native mode the output's
    fields (``{"answer": {city: string, population: integer}}``)."""
    answer = answer_schema(settings)
    value = '"..."' if answer is None else describe_object(answer)
    form = f'{{"{ANSWER_KEY}": {value}}}'
    return f"[{form}]" if settings.parallel_tool_calls else form


def answer_only_instructions(settings: ModelSettings) -> str:
    """The system prompt's words when no tool is offered: none in free text; in native mode,
    the one form every reply takes (the grammar admits nothing else)."""
    if answer_schema(settings) is None:
        return ""
    return f"Reply with one JSON object: {answer_form(settings)}, your answer to the user."


def rendered_answer(text: str, settings: ModelSettings) -> Any:
    """A past answer's value as the model wrote it: in native mode the JSON object itself
    (the run holds it as JSON text), so the history shows the form the model is asked for."""
    if answer_schema(settings) is not None:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value
    return text

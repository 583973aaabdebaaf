"""How a structured output reaches the run: the three output modes and what each needs.

- ``"tool"``: the output tool; its arguments are the output (today's default).
- ``"native"``: the provider's own JSON-schema response format; the reply's text is the output.
- ``"prompted"``: the model is told the schema in the prompt; its JSON answer is parsed.

A model's profile (:meth:`toolcycle.models.base.Model.output_modes`) lists the modes it takes,
best first. A run starts in the output's mode (or the profile's first) and, when the model
fails a mode (it gives no output in that mode's form), moves on to the next of the chain for
its next attempt: a model that cannot call the output tool still answers in JSON. Validation,
reflection and the forced answer at a limit are the same in every mode: the output is parsed
into the same arguments the output tool would have had.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

OutputMode = Literal["tool", "native", "prompted"]
"""``"tool"`` (the output tool), ``"native"`` (the provider's response format) or
``"prompted"`` (JSON text asked for in the prompt)."""

OUTPUT_MODES: tuple[OutputMode, ...] = ("tool", "native", "prompted")


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """The JSON Schema a reply's text must follow (``Output(..., mode="native")``): each
    adapter sends it in its provider's own field (OpenAI ``response_format``, Responses
    ``text.format``, Gemini ``responseJsonSchema``, Anthropic ``output_config.format``)."""

    name: str
    schema: dict[str, Any]


class NotJSON(ValueError):
    """A native or prompted reply whose text holds no JSON object."""


def mode_chain(first: OutputMode | None, profile: tuple[OutputMode, ...]) -> tuple[OutputMode, ...]:
    """The modes a run tries, in order: ``first`` (the output's own, else the profile's best),
    then the rest of the model's profile. An explicit mode the profile lacks is still tried
    first: the caller asked for it, and the fallback covers a model that cannot."""
    start = first or (profile[0] if profile else "tool")
    return (start, *(mode for mode in profile if mode != start))


def prompted_instructions(schema: dict[str, Any]) -> str:
    """What the prompt says in prompted mode: the schema, and the shape of the answer."""
    return ("Give your final answer as one JSON object that conforms to this JSON Schema, and "
            "nothing else (no prose, no code fence):\n"
            f"{json.dumps(schema, separators=(',', ':'))}")


def parse_json_answer(text: str) -> dict[str, Any]:
    """The JSON object of a native or prompted reply. Models in prompted mode often wrap it in
    a code fence or a sentence, so the outermost ``{...}`` is read when the whole text is not
    JSON. Raises :class:`NotJSON` when there is no object."""
    stripped = text.strip()
    candidates = [stripped]
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise NotJSON("your answer holds no JSON object")

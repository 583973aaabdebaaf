"""The provider-neutral conversation.

Everything inside the loop speaks these types; adapters in :mod:`toolcycle.models` convert to
and from a wire format at the edge. The shapes follow the decisions in DESIGN.md: one assistant
message carries every tool call of an iteration, and one ``tool`` message carries every result
of that iteration, in call order. Adapters split or merge those as their protocol demands.
"""

from __future__ import annotations

import base64
import difflib
import json
import math
import re
import reprlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._media_part import MediaPart
from .usage import Usage as Usage  # re-exported: its home before it grew a cost

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True)
class TextPart:
    """Plain text written by the user, the system or the model."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ThinkingPart:
    """Model reasoning that providers return beside the answer (kept so it can be sent back).

    ``signature`` is the provider's opaque integrity token (Anthropic) and must round-trip.
    ``redacted`` holds reasoning the provider returned encrypted (Anthropic
    ``redacted_thinking``): ``text`` is empty then, and the data must go back unchanged, or the
    next request of a tool-using turn with thinking on is rejected.
    """

    text: str
    signature: str | None = None
    redacted: str | None = None
    kind: Literal["thinking"] = "thinking"


@dataclass(slots=True)
class ToolCall:
    """One call the model asked for.

    ``arguments`` is the parsed JSON object, or ``None`` when ``raw_arguments`` was not a JSON
    object; then ``parse_error`` says why, and the loop answers the call with an error
    observation instead of invoking the tool.

    ``original_name`` and ``original_id`` are set only on a call repaired before it entered
    the history (:func:`toolcycle.models.repair.repair_reply`): the model wrote a name or an
    id that providers refuse or that repeats, and these keep what it wrote, for the trace and
    for the observation that answers the call.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    parse_error: str | None = None
    original_name: str | None = None
    original_id: str | None = None
    kind: Literal["tool_call"] = "tool_call"

    @classmethod
    def from_raw(cls, id: str, name: str, raw: str) -> ToolCall:
        """Build a call from the model's raw argument string, recording a parse failure."""
        if not raw.strip():
            return cls(id=id, name=name, arguments={}, raw_arguments=raw)
        arguments, problem = parse_json_object(raw)
        return cls(id, name, arguments, raw, problem)

    @classmethod
    def from_args(cls, id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
        """Build a call from already-parsed arguments (the raw string is derived).

        Never raises: a value without a JSON form makes a call with a ``parse_error``.
        """
        if type(arguments) is dict:
            try:
                return cls(id, name, arguments, _ARGUMENTS_JSON.encode(arguments))
            except (TypeError, ValueError, RecursionError):
                pass
        return cls.from_value(id, name, arguments)

    @classmethod
    def from_value(cls, id: str, name: str, value: Any, raw: str | None = None) -> ToolCall:
        """Build a call from arguments a lenient parser decoded, which may hold Python-only
        values (``ast.literal_eval`` gives tuples, sets, bytes, complex numbers).

        Tuples become lists (their JSON form); anything else without a faithful JSON form
        makes a call with a ``parse_error`` naming it, so the model hears what was wrong.
        ``raw``, the text the model wrote, is kept as ``raw_arguments`` of such a call (a
        call that converts gets the JSON text instead, which is what providers expect back).
        """
        try:
            arguments = _json_form(value, "", 0)
            if not isinstance(arguments, dict):
                raise _NoJsonForm(f"arguments must be a JSON object, got {type(value).__name__}")
            text = _ARGUMENTS_JSON.encode(arguments)
        except (_NoJsonForm, ValueError) as exc:  # ValueError: an int past the digit limit
            shown = raw if raw is not None else bounded_repr(value)
            return cls(id, name, None, shown, str(exc))
        return cls(id, name, arguments, text)


def parse_json_object(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Model-written JSON as an object, or ``None`` and why not; never raises.

    Besides malformed text, Python's ``json`` refuses text that is valid JSON: integers past
    ``sys.get_int_max_str_digits()`` (``ValueError``) and nesting deeper than the recursion
    limit (``RecursionError``). Model output is untrusted, so those are parse failures too.
    So are ``NaN``, ``Infinity`` and numbers past the float range (``1e999``), which it accepts
    although JSON has no such values: kept, they make the next request unserialisable on
    wires that send the arguments as an object (Anthropic, Gemini), r2-18.
    """
    try:
        parsed = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON: {exc}"
    except ValueError as exc:
        return None, f"arguments cannot be read: {exc}"
    except RecursionError:
        return None, "arguments cannot be read: they are nested too deeply"
    if not isinstance(parsed, dict):
        return None, f"arguments must be a JSON object, got {type(parsed).__name__}"
    return parsed, None


def _refuse_constant(name: str) -> Any:
    """``json.loads`` hook for ``NaN`` and ``Infinity`` (read as arguments that cannot be read)."""
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """``json.loads`` hook for floats: ``1e999`` would become infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is past the range of a number")
    return value


def tool_name_key(name: str) -> str:
    """A tool name a model wrote, compared loosely: without case, separators and an
    OpenAI-style ``functions.`` prefix (``Final Answer``, ``final_answer`` and
    ``functions.finalAnswer`` are one key)."""
    name = name.strip().casefold()
    name = name.removeprefix("functions.").removeprefix("functions_")
    return _NOT_ALNUM.sub("", name)


def names_an_answer(name: str) -> bool:
    """Whether ``name`` is one a model gives a tool it invents to answer through (``answer``,
    ``final_answer``, ``respond``...). Where no such tool is offered, a text protocol reads
    the call as the answer and the loop tells the model to give its answer instead
    (Qwen2.5-Coder-1.5B wrote ``answer({"price": "2.215"})`` and, told "Unknown tool",
    wrote it again to the iteration limit)."""
    return tool_name_key(name) in _ANSWER_TOOL_KEYS


def nearest_tool_name(name: str, offered: Iterable[str]) -> str | None:
    """The offered tool a model most likely meant by a name no tool has, or None.

    Why: a small model misspells a name (``ad`` for ``add``), or blends two it was shown
    (``stacks_find_now`` from ``stacks_find`` and ``library_now``), and told only "Unknown
    tool" plus the whole list, Qwen2.5-Coder-1.5B wrote the same call until the iteration
    limit. Naming the nearest tool says what would work. Near means a string similarity of at
    least 0.75 between the loose forms (:func:`tool_name_key`), and clearly nearer than the
    next best, so two equally plausible tools name neither."""
    key = tool_name_key(name[:_NAME_READ])
    if not key or len(name) > _NAME_READ:  # (a name that long meant no offered tool)
        return None
    scored = sorted(((difflib.SequenceMatcher(None, key, tool_name_key(t)).ratio(), t)
                     for t in offered if t != name), reverse=True)
    if not scored or scored[0][0] < _NEAR_NAME:
        return None
    if len(scored) > 1 and scored[1][0] > scored[0][0] - 0.05:
        return None
    return scored[0][1]


_NEAR_NAME = 0.75
#: The longest unknown name compared (the comparison costs its length times each name's).
_NAME_READ = 200
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_ANSWER_TOOL_KEYS = frozenset({"answer", "finalanswer", "giveanswer", "provideanswer",
                               "final", "respond", "response", "reply"})

#: Arguments nested deeper than this have no JSON form we accept (the walk stays far from
#: the recursion limit).
MAX_ARGUMENT_DEPTH = 256

#: One encoder for every call's arguments: ``json.dumps`` with any option builds a new
#: ``JSONEncoder`` per call (~1.5 us, once per tool call on the loop's hot path).
#: NaN and infinity have no JSON form; a provider would reject them.
_ARGUMENTS_JSON = json.JSONEncoder(allow_nan=False)


class _NoJsonForm(Exception):
    """A decoded value holds something JSON cannot express; the message says what and where."""


def _json_form(value: Any, path: str, depth: int) -> Any:
    """``value`` with tuples as lists; raises :class:`_NoJsonForm` for anything else that is
    not JSON (sets, bytes, complex numbers, non-string keys, non-finite floats)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if value.bit_length() > _MAX_INT_BITS:  # Python refuses to write it out as digits
            raise _NoJsonForm(f"arguments hold an integer of over "
                              f"{sys.get_int_max_str_digits()} digits at {path or '(root)'}")
        return value
    if kind is float:
        if value != value or value in (_INFINITY, -_INFINITY):
            raise _NoJsonForm(f"arguments hold {value!r} at {path or '(root)'}, not a JSON number")
        return value
    if depth >= MAX_ARGUMENT_DEPTH:
        raise _NoJsonForm(f"arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels")
    if kind is dict:
        converted: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NoJsonForm(f"arguments hold the key {bounded_repr(key)} at "
                                  f"{path or '(root)'}; JSON keys are strings")
            converted[key] = _json_form(item, f"{path}/{key}" if path else key, depth + 1)
        return converted
    if kind is list or kind is tuple:
        return [_json_form(item, f"{path}/{i}" if path else str(i), depth + 1)
                for i, item in enumerate(value)]
    raise _NoJsonForm(f"arguments hold a {kind.__name__} value ({bounded_repr(value)}) at "
                      f"{path or '(root)'}, which has no JSON form")


_INFINITY = float("inf")
#: Integers of up to this many bits have at most ``sys.get_int_max_str_digits()`` digits
#: (4,300 by default), the most Python writes out.
_MAX_INT_BITS = int((sys.get_int_max_str_digits() or 1 << 60) / 0.30103)


class _BoundedRepr(reprlib.Repr):
    """``repr`` with bounded work and output: limited depth, items and lengths, and guarded
    against values whose ``repr`` raises (reprlib already guards plain instances)."""

    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:  # past the int -> str digit limit
            return f"<int of {x.bit_length()} bits>"

    def repr1(self, x: Any, level: int) -> str:
        try:
            return super().repr1(x, level)
        except Exception as exc:  # a container subclass whose __repr__ or iteration fails
            return f"<{type(x).__name__} object; repr failed: {type(exc).__name__}>"


_BOUNDED_REPR = _BoundedRepr(maxlevel=6, maxlist=100, maxtuple=100, maxdict=100, maxset=100,
                             maxfrozenset=100, maxstring=2_000, maxlong=2_000, maxother=2_000)


def bounded_repr(value: Any) -> str:
    """``repr(value)`` at bounded cost and length, for untrusted values shown in messages and
    observations; never raises."""
    return _BOUNDED_REPR.repr(value)


@dataclass(slots=True)
class ToolResult:
    """The observation answering one :class:`ToolCall`, matched by ``call_id``.

    ``content`` is the text every model reads; ``media`` the images, documents or audio the
    tool returned (:mod:`toolcycle.media`), which ``content`` names in place by media type,
    size and digest. A model that takes media in tool results gets both, in its provider's
    own form; a text model reads the names only (docs/media.md).
    """

    call_id: str
    name: str
    content: str
    is_error: bool = False
    kind: Literal["tool_result"] = "tool_result"
    media: tuple[MediaPart, ...] = field(default=(), kw_only=True)


Part = TextPart | ThinkingPart | ToolCall | ToolResult | MediaPart


@dataclass(slots=True)
class Message:
    """One turn of the conversation.

    ``usage`` and ``finish_reason`` are set on assistant messages that came from a model
    request; ``model_name`` records which model wrote it. ``asked_again``: the text of each
    reply this one replaced, where the adapter asked the model again before answering (a text
    protocol making ``tool_choice`` hold); their tokens are in ``usage``, and the trace keeps
    their words, so every reply paid for can be read.
    """

    role: Role
    parts: list[Part] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model_name: str | None = None
    asked_again: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A string where the parts belong iterates as characters, none of them a part, so
        # the message would read as empty and the model would never see the question (the
        # BFCL bench lost every prompt this way). Say so at construction instead.
        if isinstance(self.parts, str):
            raise TypeError(
                f"Message parts must be a list of parts, not a string: use "
                f"Message({self.role!r}, [TextPart(...)]) or Message.user/system/assistant")

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", [TextPart(text)])

    @classmethod
    def user(cls, text: str, *media: MediaPart) -> Message:
        """A user turn: its text, then any images, documents or audio (:mod:`toolcycle.media`)."""
        return cls("user", [TextPart(text), *media])

    @classmethod
    def assistant(cls, text: str = "", tool_calls: list[ToolCall] | None = None) -> Message:
        parts: list[Part] = [TextPart(text)] if text else []
        parts.extend(tool_calls or ())
        return cls("assistant", parts)

    @classmethod
    def tool_results(cls, results: list[ToolResult]) -> Message:
        return cls("tool", list(results))

    # List comprehensions, not generator expressions: since Python 3.12 they are inlined (no
    # generator object to allocate and collect), and the loop reads these on every reply.
    @property
    def text(self) -> str:
        """All text parts joined (thinking excluded)."""
        return "".join([p.text for p in self.parts if isinstance(p, TextPart)])

    @property
    def thinking(self) -> str:
        return "".join([p.text for p in self.parts if isinstance(p, ThinkingPart)])

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "parts": [_part_to_dict(p) for p in self.parts]}
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        if self.finish_reason is not None:
            data["finish_reason"] = self.finish_reason
        if self.model_name is not None:
            data["model_name"] = self.model_name
        if self.asked_again:
            data["asked_again"] = list(self.asked_again)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        usage = data.get("usage")
        return cls(
            role=data["role"],
            parts=[_part_from_dict(p) for p in data.get("parts", [])],
            usage=Usage.from_dict(usage) if usage else None,
            finish_reason=data.get("finish_reason"),
            model_name=data.get("model_name"),
            asked_again=tuple(data.get("asked_again") or ()),
        )


def _part_to_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"kind": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        data = {"kind": "thinking", "text": part.text, "signature": part.signature}
        if part.redacted is not None:
            data["redacted"] = part.redacted
        return data
    if isinstance(part, ToolCall):
        call: dict[str, Any] = {
            "kind": "tool_call",
            "id": part.id,
            "name": part.name,
            "arguments": part.arguments,
            "raw_arguments": part.raw_arguments,
            "parse_error": part.parse_error,
        }
        if part.original_name is not None:
            call["original_name"] = part.original_name
        if part.original_id is not None:
            call["original_id"] = part.original_id
        return call
    if isinstance(part, MediaPart):
        return media_to_dict(part)
    result = {
        "kind": "tool_result",
        "call_id": part.call_id,
        "name": part.name,
        "content": part.content,
        "is_error": part.is_error,
    }
    if part.media:
        result["media"] = [media_to_dict(m) for m in part.media]
    return result


def media_to_dict(part: MediaPart) -> dict[str, Any]:
    """The bytes too: a history (a snapshot, a stored conversation) must come back whole, or
    a resumed run would ask about an image the model can no longer see."""
    return {"kind": "media", "media_type": part.media_type, "name": part.name,
            "data": part.base64}


def media_from_dict(data: dict[str, Any]) -> MediaPart:
    """A media part from :func:`media_to_dict`; raises ``KeyError``, ``TypeError`` or
    ``ValueError`` (a :class:`~toolcycle.media.MediaError`) for a damaged one."""
    return MediaPart(base64.b64decode(data["data"], validate=True), data["media_type"],
                     data.get("name"))


def _part_from_dict(data: dict[str, Any]) -> Part:
    kind = data.get("kind")
    if kind == "text":
        return TextPart(data["text"])
    if kind == "thinking":
        return ThinkingPart(data["text"], data.get("signature"), data.get("redacted"))
    if kind == "tool_call":
        return ToolCall(
            id=data["id"],
            name=data["name"],
            arguments=data.get("arguments"),
            raw_arguments=data.get("raw_arguments", ""),
            parse_error=data.get("parse_error"),
            original_name=data.get("original_name"),
            original_id=data.get("original_id"),
        )
    if kind == "tool_result":
        return ToolResult(
            data["call_id"], data["name"], data["content"], data.get("is_error", False),
            media=tuple(media_from_dict(m) for m in data.get("media") or ()),
        )
    if kind == "media":
        return media_from_dict(data)
    raise ValueError(f"unknown message part kind: {kind!r}")

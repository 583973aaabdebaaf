"""Tool calls written as text, parsed tolerantly.

Small local models rarely emit the exact tool-call syntax their chat template documents:
measured on the packs we ship, Qwen2.5-Coder 1.5B wraps a call in a fenced ```json block,
the 0.5B writes bare JSON, SmolLM2 writes whatever it likes. This module finds every call in a
reply, in the order written, in any of these forms:

- ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (closing tag optional at the end),
- a fenced code block (```json or plain ```) holding a call or a list of calls,
- bare JSON objects (or a list of them) anywhere in the text,

with the keys spelled ``name``/``tool``/``function`` and ``arguments``/``parameters``/``args``,
the OpenAI shape ``{"function": {"name", "arguments"}}``, arguments given as a JSON string,
Python-literal dicts (single quotes, ``True``) and missing closing braces (unless the reply
stopped at the token limit: then the open call was cut, see :data:`TRUNCATED`). A tool name written
loosely (``Algebra Quadratic Roots``, ``math.hypot``, ``functions.add``) becomes the one offered
tool it can only mean (:func:`resolve_tool_name`); a name that could mean none or several is
kept as written, and the loop answers it as an unknown tool. Text outside the
calls becomes the *thought*. ``{"answer": ...}`` (the shape the constrained grammar allows for
a final answer) becomes the answer text. Call ids are synthesized deterministically from a
prefix the caller chooses, so the same reply always yields the same ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from ...messages import ToolCall, ToolResult, bounded_repr
from .cut import TRUNCATED as TRUNCATED  # (public here before cut.py)
from .cut import closing_end, complete_items_of_cut_list, values_one_per_line
from .cut import unclosed as unclosed  # (public here before cut.py)
from .decoding import before_surplus_closings
from .decoding import decode_lenient as decode_lenient  # (public here before it moved)
from .names import ANSWER_KEYS, answer_written_as_call, resolve_tool_name
from .placeholders import calls_before_placeholder as calls_before_placeholder  # (its home before)

NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "action_input", "tool_input")

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
#: An arguments key and its separator, before the object or list of an undecodable call.
_ARGUMENTS_AT = re.compile(r"""(?<!\w)["']?(?:""" + "|".join(ARGUMENT_KEYS)
                           + r""")["']?\s*:\s*(?=[{\[])""")
_NAME_ONLY = re.compile(r"""["']?(?:name|tool|function)["']?\s*:\s*["']([A-Za-z0-9_.\- ]+)["']""")


@dataclass(slots=True)
class ParsedReply:
    """What a text reply meant: a thought, the calls in order, and an answer if one was given."""

    thought: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    answer: str | None = None


@dataclass(slots=True)
class _Span:
    start: int
    end: int
    value: Any  # the decoded JSON/Python value, or None when undecodable
    raw: str


def parse_tool_calls(
    text: str, id_prefix: str = "call", tool_names: Collection[str] | None = None,
    *, truncated: bool = False,
) -> ParsedReply:
    """Find every tool call in ``text``; ids are ``{id_prefix}_{n}`` (1-based, in order).

    Inside tags or fences any call-shaped object counts. Bare JSON in running text counts only
    when it names one of ``tool_names`` or carries an ``arguments`` key, so that an answer
    quoting a record such as ``{"name": "Ada"}`` is not mistaken for a call.
    ``truncated``: the reply stopped at the output token limit (finish reason ``length``); a
    last call left open is then cut off (:data:`TRUNCATED`), not a call missing its closing
    braces, which small models also write on complete replies.
    """
    spans = _tagged_spans(text)
    if not spans:
        spans = _fenced_spans(text, truncated)
    bare = not spans
    if bare:
        spans = _bare_spans(text)
    calls: list[ToolCall] = []
    answers: list[str] = []
    used: list[_Span] = []
    for span in spans:
        span.value = _keyed_by_tool(span.value, tool_names)
        if bare and not _plausible_bare_call(span.value, tool_names):
            found = []
        else:
            found = _calls_in(span, id_prefix, len(calls), truncated and span is spans[-1])
        if found:
            calls.extend(found)
            used.append(span)
        elif (answer := _answer_in(span.value)) is not None:
            answers.append(answer)
            used.append(span)
    thought = _remove_spans(text, used)
    if tool_names is not None:
        for index, call in enumerate(calls):
            name = resolve_tool_name(call.name, tool_names)
            if name != call.name:
                calls[index] = replace(call, name=name)
        if calls and not answers and (written := answer_written_as_call(calls, tool_names)):
            calls, answers = [], [written]
    answer = "\n".join(answers) if answers else None
    return ParsedReply(thought=thought, calls=calls, answer=answer)


# -- locating candidate spans -----------------------------------------------------------------


def _tagged_spans(text: str) -> list[_Span]:
    return [
        _Span(m.start(), m.end(), decode_lenient(m.group(1)), m.group(1))
        for m in _TAGGED.finditer(text)
    ]


def _fenced_spans(text: str, truncated: bool) -> list[_Span]:
    spans = []
    for m in _FENCED.finditer(text):
        body = m.group(1).strip()
        if body.startswith(("{", "[")):
            # cut by the token limit inside the fence: its calls one per line, each once
            cut = truncated and not m.group(0).endswith("```") and body.startswith("{")
            value: Any = values_one_per_line(body, cut=True) if cut else None
            if value is None:
                value = decode_lenient(body)
            if value is None:
                value = _several_values(body)
            if value is None and not cut:
                value = values_one_per_line(body, cut=False)
            if value is None:
                value = answer_before_broken_json(body)
            spans.append(_Span(m.start(), m.end(), value, body))
    return spans


_ANSWER_OPENING = re.compile(
    r'\s*\{\s*"(?:' + "|".join(ANSWER_KEYS) + r')"\s*:\s*("(?:[^"\\]|\\.)*")')


def answer_before_broken_json(body: str) -> dict[str, str] | None:
    """``{"answer": <its string>}`` of an object that opens with a whole answer string and
    breaks after it, else ``None``. Seen on the 1.5B: ``{"answer": "The exam counts for 60
    percent.", "arguments": {"passages": [[grading#0]]}}`` (an unquoted id after the answer),
    which left the whole fenced JSON as the answer's text."""
    opening = _ANSWER_OPENING.match(body)
    if opening is None:
        return None
    try:
        answer = json.loads(opening.group(1))
    except ValueError:
        return None
    return {ANSWER_KEYS[0]: answer} if isinstance(answer, str) else None


def _several_values(body: str) -> list[Any] | None:
    """The values of a block that holds several complete JSON objects one after another
    (a call per line, no list around them: Qwen2.5-Coder-1.5B's parallel calls in a fence),
    as a list; ``None`` when anything else stands between or after them."""
    values: list[Any] = []
    decoder = json.JSONDecoder()
    index = 0
    while index < len(body):
        try:
            value, index = decoder.raw_decode(body, index)
        except (ValueError, RecursionError):
            return None
        values.append(value)
        while index < len(body) and body[index] in " \t\r\n,":
            index += 1
    return values if len(values) > 1 else None


def _bare_spans(text: str) -> list[_Span]:
    """Top-level JSON objects or arrays anywhere in the text, left to right."""
    decoder = json.JSONDecoder()
    spans: list[_Span] = []
    index = 0
    while True:
        start = _next_opening(text, index)
        if start < 0:
            return spans
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # malformed, or JSON that Python refuses
            value, end = _decode_prefix_leniently(text, start)
        if end <= start:
            index = start + 1
            continue
        spans.append(_Span(start, end, value, text[start:end]))
        index = end


def _next_opening(text: str, index: int) -> int:
    positions = [p for p in (text.find("{", index), text.find("[{", index)) if p >= 0]
    return min(positions) if positions else -1


def _decode_prefix_leniently(text: str, start: int) -> tuple[Any, int]:
    """Decode the balanced (or truncated) brace block at ``start`` with the lenient decoder."""
    end = _balanced_end(text, start)
    raw = text[start:end]
    value = decode_lenient(raw)
    if value is None:
        value = answer_before_broken_json(raw)
    if value is None and not _looks_like_call(raw):
        return None, start
    return value, end


def _balanced_end(text: str, start: int) -> int:
    """Index after the bracket that closes ``text[start]`` (or the end of the text)."""
    end = closing_end(text, start)
    return len(text) if end is None else end


def decode_first_object(raw: str) -> Any:
    """The first balanced brace block of ``raw`` (after leading blanks), decoded leniently.

    For text that holds more after a complete object: seen from Qwen2.5-Coder-1.5B, one
    ``Action Input: {...}`` followed by more ``Action Input:`` lines. ``None`` when ``raw``
    does not start with an object or it does not decode.
    """
    raw = raw.lstrip()
    if not raw.startswith("{"):
        return None
    return decode_lenient(raw[: _balanced_end(raw, 0)])


def _looks_like_call(raw: str) -> bool:
    return _NAME_ONLY.search(raw) is not None


# -- interpreting values ----------------------------------------------------------------------


def _calls_in(span: _Span, id_prefix: str, already: int, truncated: bool = False
              ) -> list[ToolCall]:
    values = span.value if isinstance(span.value, list) else [span.value]
    if span.value is None and (complete := complete_items_of_cut_list(span.raw)):
        values = complete  # the complete items only: the cut one is not among them
    cut = unclosed(span.raw) and span.value is not None
    calls: list[ToolCall] = []
    for i, value in enumerate(values):
        call_id = f"{id_prefix}_{already + len(calls) + 1}"
        if (cut and i == len(values) - 1 and (truncated or _cut_before_arguments(value))
                and (name := _name_of(_call_body(value) or {})) is not None):
            # '{"name": "add' repaired by closing reads as add({}): arguments nobody wrote
            problem = TRUNCATED if truncated else "the call was cut off before its arguments"
            calls.append(ToolCall(call_id, name, None, span.raw, problem))
            continue
        call = _call_from_value(value, call_id)
        if call is not None:
            calls.append(call)
    if calls or span.value is not None:
        return calls
    # Undecodable but clearly meant as a call: keep it, so the model hears what went wrong.
    match = _NAME_ONLY.search(span.raw)
    if match is None:
        return []
    call_id = f"{id_prefix}_{already + 1}"
    return [ToolCall(call_id, match.group(1), None, _arguments_written(span.raw),
                     "the call could not be read as JSON")]


def _arguments_written(raw: str) -> str:
    """The arguments of an undecodable call as the model wrote them: the object after its
    arguments key (``{"value": 226 + 168}``), else the whole text. A call's raw arguments are
    its arguments' text, as a provider's call carries them; the whole call in their place
    reads back in the history as a call whose arguments are a string holding a call."""
    match = _ARGUMENTS_AT.search(raw)
    if match is None:
        return raw
    return raw[match.end():_balanced_end(raw, match.end())]


def _keyed_by_tool(value: Any, tool_names: Collection[str] | None) -> Any:
    """``value`` with each object of one key that is an offered tool's name, holding an
    object, written as the call it means: ``{"lookup": {"id": "A-1"}}`` is
    ``{"name": "lookup", "arguments": {"id": "A-1"}}``; anything else as it is.

    Why: the 1.5B on the JSON protocol answered "Article WT9598: what is its units on
    hand?" with ``{"supply_feed": {"article": "WT9598"}}``, read as its final answer: a
    ``success`` with a call for an answer. A key that is exactly an offered tool's name, over
    an object, names no field of an answer."""
    if tool_names is None:
        return value
    if isinstance(value, list):  # a list of calls, one level (no recursion into a reply's depth)
        return [_keyed_call(item, tool_names) for item in value]
    return _keyed_call(value, tool_names)


def _keyed_call(value: Any, tool_names: Collection[str]) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        [(key, arguments)] = value.items()
        if key in tool_names and isinstance(arguments, dict):
            return {"name": key, "arguments": arguments}
    return value


def _call_body(value: Any) -> dict[str, Any] | None:
    """The object that names the call: ``value`` or, OpenAI-style, its ``function``."""
    if not isinstance(value, dict):
        return None
    function = value.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return function
    return value


def _name_of(body: dict[str, Any]) -> str | None:
    return next((body[k] for k in NAME_KEYS if isinstance(body.get(k), str)), None)


def _cut_before_arguments(value: Any) -> bool:
    """A call object that names a tool and holds nothing else: in a reply cut off before its
    closing bracket, the arguments were never written (not "no arguments")."""
    body = _call_body(value)
    return body is not None and _name_of(body) is not None and all(k in NAME_KEYS for k in body)


def _plausible_bare_call(value: Any, tool_names: Collection[str] | None) -> bool:
    if value is None:
        return True  # undecodable: _calls_in keeps it only when it names a tool
    items = value if isinstance(value, list) else [value]
    if len(items) > 1:  # [call, {"answer": ...}]: the calls count (the answer came too early)
        items = [item for item in items if _answer_in(item) is None] or items
    for item in items:
        if not isinstance(item, dict):
            return False
        if isinstance(item.get("function"), dict) or any(k in item for k in ARGUMENT_KEYS):
            continue
        name = next((item[k] for k in NAME_KEYS if isinstance(item.get(k), str)), None)
        if name is None or tool_names is None or name not in tool_names:
            return False
    return True


def _call_from_value(value: Any, call_id: str) -> ToolCall | None:
    body = _call_body(value)
    if body is None:
        return None
    value = body
    name = _name_of(value)
    if not name:
        return None
    arguments = next((value[k] for k in ARGUMENT_KEYS if k in value), None)
    if arguments is None:
        arguments = {k: v for k, v in value.items() if k not in NAME_KEYS}
    arguments = _unwrapped_call(arguments, name)
    if isinstance(arguments, str):
        call = ToolCall.from_raw(call_id, name.strip(), arguments)
        if call.parse_error is not None and isinstance(
                repaired := before_surplus_closings(arguments.strip()), dict):
            return ToolCall.from_value(call_id, name.strip(), repaired)
        return call
    return ToolCall.from_value(call_id, name.strip(), arguments)


def _unwrapped_call(arguments: Any, name: str) -> Any:
    """The arguments of a call written again inside its own arguments: ``{"name": "get_ward",
    "arguments": {"name": "get_ward", "arguments": {"ward_name": "Oak"}}}`` is
    ``get_ward(ward_name="Oak")``; anything else as it is.

    Only an object that is a call of the same tool and nothing more (a name key naming it,
    one arguments key): a tool whose own parameters were ``name`` and ``arguments`` would be
    called with its own name as a value, which no schema means. Why: the 1.5B wrapped every
    call that way through one first-hour run (held-out set 6809, issue 68), was refused
    for the wrong arguments three times over, and the loop guard ended the run."""
    for _ in range(3):  # (a model that nests once nests twice)
        if not isinstance(arguments, dict) or len(arguments) != 2:
            return arguments
        inner_name = _name_of(arguments)
        inner = next((arguments[k] for k in ARGUMENT_KEYS if k in arguments), None)
        if inner_name is None or inner_name.strip() != name.strip() or not isinstance(
                inner, dict | str):
            return arguments
        arguments = inner
    return arguments


def _answer_in(value: Any) -> str | None:
    if isinstance(value, list):  # [{"answer": "..."}], the answer of the parallel-call form
        answers = [_answer_in(item) if isinstance(item, dict) else None for item in value]
        if not answers or None in answers:
            return None
        return "\n".join(a for a in answers if a is not None)
    if not isinstance(value, dict):
        return None
    for key in ANSWER_KEYS:
        if key in value and not any(k in value for k in NAME_KEYS):
            answer = value[key]
            if isinstance(answer, str):
                return answer
            try:
                return json.dumps(answer)
            except (TypeError, ValueError, RecursionError):  # a Python literal such as a set
                return bounded_repr(answer)
    return None


def _remove_spans(text: str, spans: list[_Span]) -> str:
    pieces: list[str] = []
    cursor = 0
    for span in sorted(spans, key=lambda s: s.start):
        pieces.append(text[cursor : span.start])
        cursor = max(cursor, span.end)
    pieces.append(text[cursor:])
    return re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()


def render_tool_call(call: ToolCall) -> str:
    """The canonical text form of a call, as the JSON protocol asks models to write it."""
    name = call.original_name if call.original_name is not None else call.name  # as written
    return (f'{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": '
            f"{arguments_as_written(call)}}}")


def arguments_as_written(call: ToolCall) -> str:
    """A past call's arguments as the JSON protocol shows them again: their JSON, or, where
    the model's text did not decode, that text as it was written when it is a closed object
    or list (``{"value": 226 + 168}``), so the model reads back the call it made next to the
    error that says what was wrong with it. Quoted as a string, it read as a call whose arguments
    are a string, a shape the model never wrote (the 1.5B went on to write ``{}`` for that
    tool, twice in a run: whether because of it, not known). The Hermes protocol keeps the
    string: it writes what the model's own chat template writes, token for token."""
    if call.arguments is not None:
        return json.dumps(call.arguments, ensure_ascii=False)
    raw = call.raw_arguments.strip()
    whole = raw.startswith(("{", "[")) and closing_end(raw, 0) == len(raw)  # (not cut off)
    return raw if whole else json.dumps(raw, ensure_ascii=False)


def render_observation_text(result: ToolResult) -> str:
    """``Result of add: 3`` / ``Error from add: ...`` (shared by the text protocols)."""
    label = "Error from" if result.is_error else "Result of"
    return f"{label} {result.name}: {result.content}"

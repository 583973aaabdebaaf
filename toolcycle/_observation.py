"""A tool's return value as the observation text the model reads.

Kept apart from :mod:`toolcycle.tools` because it is about untrusted output, not about
declaring tools: whatever a tool returns (a broken ``__repr__``, an integer past Python's digit
limit, a structure nested past the recursion limit), the result is text or a marked
``is_error`` observation, never an exception that ends the run.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import numbers
import sys
from dataclasses import dataclass
from typing import Any

from ._media_part import MAX_MEDIA_BYTES, MediaPart
from .messages import bounded_repr


@dataclass(frozen=True, slots=True)
class Observation:
    """A tool's return value that holds media: the text the model reads, with each image,
    document or audio clip named in place (:meth:`MediaPart.describe`), and the parts to send
    beside it where the model takes them (``ToolResult.media``)."""

    text: str
    media: tuple[MediaPart, ...]


#: At most this many media parts go with one tool result, and at most
#: :data:`~toolcycle.media.MAX_MEDIA_BYTES` in all (the providers' inline limit for a whole
#: request is of that order); the rest are named in the text, marked as not sent.
MAX_RESULT_MEDIA = 8


def holds_media(value: Any) -> bool:
    """Whether ``value`` is a media part or a list or tuple with one at its top level."""
    kind = type(value)
    if kind is MediaPart:
        return True
    return (kind is list or kind is tuple) and any(type(v) is MediaPart for v in value)


def observe_media(value: Any) -> tuple[Observation, bool]:
    """A media part, or a list mixing text, values and media parts, as an
    :class:`Observation`: items in order, one per line, each text as is, each other value as
    its JSON, each media part by its description. Never raises (see
    :func:`serialize_result`); ``ok`` is false when an item has no JSON form."""
    items = value if type(value) is not MediaPart else (value,)
    lines: list[str] = []
    media: list[MediaPart] = []
    total = 0
    ok = True
    for item in items:
        if type(item) is MediaPart:
            size = len(item.data)
            if len(media) < MAX_RESULT_MEDIA and total + size <= MAX_MEDIA_BYTES:
                media.append(item)
                total += size
                lines.append(item.describe())
            else:
                lines.append(f"{item.describe()} (not sent: a tool result carries at most "
                             f"{MAX_RESULT_MEDIA} media parts and {MAX_MEDIA_BYTES:,} bytes)")
            continue
        text, item_ok = serialize_result(item)
        ok = ok and item_ok
        lines.append(text)
    return Observation("\n".join(lines), tuple(media)), ok


def serialize_result(value: Any) -> tuple[str, bool]:
    """Render a tool's return value as the observation text; never raises.

    Returns ``(text, ok)``; ``ok`` is false when the value could not be turned into JSON, in
    which case the text is a bounded ``repr`` behind a visible marker (the loop makes that an
    ``is_error`` observation). Whatever a tool returns, a broken ``__repr__``, an integer past
    Python's digit limit or a structure nested past the recursion limit included, the run goes
    on: a tool's output is untrusted and must not end the run.
    """
    kind = type(value)
    if kind is str:
        return value, True
    if kind is float:
        return repr(value), True
    if kind is int:
        try:
            return repr(value), True
        except ValueError:  # more digits than int -> str allows (a DoS guard, not a JSON rule)
            return _int_text(value)
    try:
        return _RESULT_JSON.encode(value), True
    except Exception as exc:  # TypeError, ValueError (int digits), RecursionError (depth), ...
        reason = f"{type(value).__name__} is not JSON-serializable ({type(exc).__name__}: {exc})"
        return _unserializable(value, reason), False


#: Integers up to this many digits are written out in full (about 6 ms at the cap, since
#: decimal conversion is quadratic); the default observation limit is the same size.
MAX_INT_DIGITS = 20_000


def _int_text(value: int) -> tuple[str, bool]:
    """An integer past ``sys.get_int_max_str_digits()`` as JSON text (up to a cap)."""
    digits = int(value.bit_length() * _LOG10_2) + 1
    if digits <= MAX_INT_DIGITS:
        import decimal  # not limited; only needed for such large values

        return str(decimal.Decimal(value)), True
    reason = f"an integer of about {digits} digits is too long to write out (over {MAX_INT_DIGITS})"
    return _unserializable(value, reason), False


_LOG10_2 = 0.30103


def _unserializable(value: Any, reason: str) -> str:
    return f"[unserializable result: {reason}; shown as text] {bounded_repr(value)}"


def _json_default(value: Any) -> Any:
    pydantic = sys.modules.get("pydantic")  # an instance of its models means it is loaded
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, MediaPart):  # nested in a structure: named, not sent (only a part at
        return value.describe()       # the top level or in a top-level list is sent)
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


#: Built once: ``json.dumps`` with options builds a new encoder per call (once per tool
#: result). Non-ASCII text stays readable to the model.
_RESULT_JSON = json.JSONEncoder(ensure_ascii=False, default=_json_default)

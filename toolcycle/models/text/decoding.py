"""Model-written JSON read leniently: what :mod:`.calls` and :mod:`.react` decode a call with.

Apart from :mod:`.calls` (which finds the calls in a reply and reads what each is) because
this is one concern of its own: turning text a small model meant as JSON into a value, after
light repairs, each seen in real replies, or ``None``; never raising on any text.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from typing import Any

from .comments import without_comments

_CLOSINGS = ("", "}", "}}", "}}}", '"}', '"}}', '"}}}')
_PREFIX_DECODER = json.JSONDecoder(strict=False)
_UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:")


def decode_lenient(raw: str) -> Any:
    """JSON, else a Python literal, after light repairs; ``None`` when nothing works.

    Repairs, each seen in real replies: doubled outer braces, unquoted keys
    (``{a: 1}``), and a reply cut off by the token limit (a missing closing quote and up to
    three closing braces).
    """
    raw = raw.strip()
    if raw.startswith("{{") and raw.endswith("}}"):
        # Seen from Qwen2.5-Coder-1.5B: a call wrapped in doubled braces, template-style.
        # One level only: stripping them recursively would recurse once per brace.
        inner = _decode_candidates(raw[1:-1].strip())
        if inner is not None:
            return inner
    return _decode_candidates(raw)


def _decode_candidates(raw: str) -> Any:
    plain = without_comments(raw)
    sources = (raw,) if plain is None else (raw, plain)
    for candidate in (c for text in sources for c in (text, _UNQUOTED_KEY.sub(r'\1"\2":', text))):
        for suffix in _CLOSINGS:
            value = _decode(candidate + suffix)
            if value is not None:
                return value
    return before_surplus_closings(raw)


def before_surplus_closings(raw: str) -> Any:
    """The JSON object or list that ``raw`` opens with, where all that follows it is closing
    brackets: the model closed a wrapper it never opened. Seen from Qwen2.5-Coder-1.5B on
    the JSON protocol: ``{"name": "add", "arguments": "{\"numbers\": [3551,
    40.77]}}"}`` and a tagged call with one ``}`` too many; each refused, the model gave
    up the sum and answered one of its figures."""
    try:
        value, end = _PREFIX_DECODER.raw_decode(raw)
    except (ValueError, RecursionError):
        return None
    rest = raw[end:].strip()
    return value if isinstance(value, dict | list) and rest and not rest.strip("}] \t\n") \
        else None


def _decode(candidate: str) -> Any:
    """JSON, else a Python literal (which may hold tuples, sets, bytes: ToolCall.from_value
    turns those into JSON or a parse error); ``None`` when neither reads it."""
    try:
        # strict=False: grammar-constrained strings may hold raw newlines (seen from SmolLM2).
        return json.loads(candidate, strict=False)
    except json.JSONDecodeError:
        pass
    except (ValueError, RecursionError):  # JSON, but too many digits or too deep for Python
        return None
    try:
        with warnings.catch_warnings():  # "\[" in a model's text is no warning of ours
            warnings.simplefilter("ignore", SyntaxWarning)
            value = ast.literal_eval(_pythonize(candidate))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _pythonize(raw: str) -> str:
    """Let ``ast.literal_eval`` read JSON's ``true``/``false``/``null`` too."""
    for json_word, python_word in (("true", "True"), ("false", "False"), ("null", "None")):
        raw = re.sub(rf"\b{json_word}\b", python_word, raw)
    return raw

"""Bounds on spec files, checked before any parser sees the text (spec files are untrusted).

A spec nested ~8,000 levels deep crashed the process (a stack overflow in the native gram
parser); 1,000 levels, or a deep JSON spec, ended in ``RecursionError``; a 5,000-digit JSON
integer, ``NaN`` or bytes that are not UTF-8 ended in other tracebacks (rel-09). Every such
file is now a :class:`~toolcycle.errors.SpecError`:

- :func:`read_spec_bytes` reads at most :data:`MAX_SPEC_BYTES` and decodes UTF-8 strictly;
- :func:`check_text` refuses text over :data:`MAX_SPEC_BYTES` or nested deeper than
  :data:`MAX_SPEC_DEPTH`, found by one linear scan of the raw text that counts brackets,
  braces and parentheses outside strings and comments (no recursion, so any depth is safe);
- :func:`load_json` parses JSON only after that check and refuses integers longer than
  :data:`MAX_INT_DIGITS` digits and ``NaN`` / ``Infinity`` / overflowing numbers.

The bounds are far above what real specs use (the examples nest 6 levels deep; a JSON Schema
nested 20 objects deep is about 45) and far below what the parsers survive.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..errors import SpecError

#: Largest spec file or text accepted, in UTF-8 bytes (a spec with thousands of tools fits).
MAX_SPEC_BYTES = 8 * 1024 * 1024
#: Deepest nesting of ``[``, ``{`` and ``(`` (outside strings) accepted in a spec, and the
#: most relationships in one gram path.
MAX_SPEC_DEPTH = 100
#: Longest integer literal accepted in a JSON spec (an unsigned 128-bit value has 39 digits).
MAX_INT_DIGITS = 40

#: In gram, a ``)`` followed by an arrow (``-->``, ``<--``, ``==>``, ``~~>``, ``-[r]->``) links
#: two nodes of a path; the parser nests a path one level per link, and a path of 30,000
#: links crashed it like deep brackets do, so links count against the same bound.
_GRAM_TOKENS = re.compile(r"(?P<link>\)(?=\s*[-=~<]))|```|//|[\[\]{}()\"'`]")
_JSON_TOKENS = re.compile(r'[\[\]{}"]')
#: The rest of a string after its opening quote, up to and including the closing one.
_STRING_REST = {
    quote: re.compile(rf"[^{quote}\\]*(?:\\.[^{quote}\\]*)*{quote}", re.DOTALL)
    for quote in "\"'`"
}


def read_spec_bytes(path: Path) -> str:
    """The text of a spec file: at most :data:`MAX_SPEC_BYTES`, strictly UTF-8 (BOM allowed).

    Raises :class:`SpecError` (not ``UnicodeDecodeError``) naming the line and byte column of
    the first byte that is not UTF-8; ``OSError`` (a missing file, say) passes through.
    """
    with path.open("rb") as file:
        data = file.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(f"the file is larger than {MAX_SPEC_BYTES} bytes", source=str(path))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.end].hex(" ")
        raise SpecError(
            f"not UTF-8 text: cannot decode byte(s) {bad}", line, column, str(path)
        ) from None


def check_text(text: str, source: str = "", *, gram: bool) -> None:
    """Refuse ``text`` that is too large or too deeply nested to hand to a parser.

    ``gram`` picks the lexical rules: gram strings are quoted with ``"``, ``'`` or backquotes
    or fenced with ```` ``` ````, and ``//`` starts a comment; JSON has only ``"`` strings.
    """
    if len(text) > MAX_SPEC_BYTES or (
        len(text) * 4 > MAX_SPEC_BYTES and len(text.encode("utf-8", "surrogatepass"))
        > MAX_SPEC_BYTES
    ):
        raise SpecError(f"the spec is larger than {MAX_SPEC_BYTES} bytes", source=source)
    offset, what = _too_deep(text, gram)
    if offset >= 0:
        raise SpecError(what, *_line_column(text, offset), source)


def load_json(text: str, source: str = "") -> Any:
    """``json.loads`` for untrusted text: every problem is a :class:`SpecError` with a line."""
    check_text(text, source, gram=False)
    try:
        return json.loads(
            text,
            parse_int=lambda literal: _integer(literal, text, source),
            parse_float=lambda literal: _float(literal, text, source),
            parse_constant=lambda literal: _refuse(
                f"{literal} is not a JSON number", literal, text, source
            ),
        )
    except json.JSONDecodeError as exc:
        raise SpecError(exc.msg, exc.lineno, exc.colno, source) from None
    except RecursionError:  # cannot happen below MAX_SPEC_DEPTH; never a traceback anyway
        message = f"nested too deeply to read (over {MAX_SPEC_DEPTH})"
        raise SpecError(message, source=source) from None


def _integer(literal: str, text: str, source: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        _refuse(
            f"an integer with {len(literal.lstrip('-'))} digits (at most {MAX_INT_DIGITS})",
            literal, text, source,
        )
    return int(literal)


def _float(literal: str, text: str, source: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        _refuse(f"the number {literal[:40]} is too large", literal, text, source)
    return number


def _refuse(message: str, literal: str, text: str, source: str) -> Any:
    """Raise :class:`SpecError` at the first place ``literal`` occurs as a number in ``text``."""
    found = re.search(r"(?<![\w.])" + re.escape(literal) + r"(?![\w.])", text)
    line, column = _line_column(text, found.start()) if found else (0, 0)
    raise SpecError(message, line, column, source)


def _too_deep(text: str, gram: bool) -> tuple[int, str]:
    """Where and how ``text`` first goes beyond :data:`MAX_SPEC_DEPTH`, or ``(-1, "")``.

    A regex jumps from one token that matters to the next (and over whole strings), so the
    scan is linear and fast even for a file at :data:`MAX_SPEC_BYTES`.
    """
    tokens = _GRAM_TOKENS if gram else _JSON_TOKENS
    depth, links, i = 0, 0, 0
    while (found := tokens.search(text, i)) is not None:
        token, i = found.group(), found.end()
        if token in "[{(":
            depth += 1
            if depth > MAX_SPEC_DEPTH:
                brackets = "brackets, braces or parentheses" if gram else "brackets or braces"
                return found.start(), f"nested more than {MAX_SPEC_DEPTH} levels deep ({brackets})"
        elif token in "]})":
            depth = max(0, depth - 1)
            if token == ")":
                links = links + 1 if found.group("link") else 0
                if links > MAX_SPEC_DEPTH:
                    return found.start(), f"a path of more than {MAX_SPEC_DEPTH} relationships"
        elif token == "//":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
        elif token == "```":
            fence = text.find("```", i)
            i = len(text) if fence < 0 else fence + 3
        else:  # a quote: skip the string (backslash escapes), to the end if unterminated
            end = _STRING_REST[token].match(text, i)
            i = len(text) if end is None else end.end()
    return -1, ""


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1

"""Gram text <-> the raw patterns of ``relateby-pattern``, with positions and value literals.

The gram project's own parser (``relateby.gram``) does the parsing. It accepts
``(personName:String)`` but not two spellings that gram agent files use:

- ``(personName::String)``, the Haskell-style type annotation, and
- ``(tags::[String])``, a list type in label position.

Rather than write a second parser, :func:`parse` *normalises* the text first with a small
string-aware scan (strings, fenced ```` ``` ```` strings, backquoted names, ``//`` comments and
``{...}`` property records are left untouched): ``::`` becomes ``:`` and a bracketed type
becomes a backquoted label (```` `[String]` ````), which the parser keeps verbatim. Every
normalised character remembers the original offset it came from, so the parser's syntax
errors are reported at the line and column of the file the user wrote. Both spellings mean
the same; :mod:`toolcycle.spec` always writes ``::``.

The other half of this module writes values back as gram literals in a form the parser reads
to the same value (checked by the round-trip tests): strings with the escapes it supports,
fenced strings for multi-line text, plain decimals (it reads no exponents), ``null``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from ..errors import SpecError
from .bounds import check_text

#: A bare gram identifier; anything else is written between backquotes.
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITION = re.compile(r" at (\d+):(\d+)")
#: The largest integer the parser reads (a signed 64-bit value).
_MAX_INT = 2**63 - 1
_TAGGED_KINDS = frozenset({"symbol", "range", "measurement", "tagged"})


class GramError(SpecError):
    """A gram text that cannot be read: ``line`` and ``column`` are 1-based (0 when unknown)."""

    unnamed = "<gram>"


RawPattern = dict[str, Any]


@dataclass(slots=True)
class Document:
    """Parsed gram text: the raw patterns plus what is needed to point back into the text."""

    patterns: list[RawPattern]
    text: str
    source: str = ""

    def locate(self, *needles: str, start: int = 0) -> tuple[int, int]:
        """Line and column of the last of ``needles`` (regexes), each searched after the last.

        The raw patterns carry no positions, so errors about their *meaning* (an unknown type,
        say) find their place by searching the text: first the enclosing tool, then the
        parameter inside it. Returns ``(0, 0)`` when a needle is not found.
        """
        offset, search_from = start, start
        for needle in needles:
            found = re.compile(needle).search(self.text, search_from)
            if found is None:
                return 0, 0
            offset, search_from = found.start(), found.start() + 1
        return line_column(self.text, offset)

    def error(self, message: str, *needles: str) -> GramError:
        line, column = self.locate(*needles) if needles else (0, 0)
        return GramError(message, line, column, self.source)


def parse(text: str, source: str = "") -> Document:
    """Parse gram ``text`` (either label spelling) into raw patterns.

    Raises :class:`GramError` with the line and column of ``text`` where parsing failed.
    """
    try:
        from relateby.gram import GramParseError, parse_raw
    except ImportError as exc:  # the parser ships in the ``gram`` extra
        raise ImportError(
            "reading gram needs relateby-pattern: pip install 'toolcycle[gram]'"
        ) from exc

    # Files saved with Windows line endings read like any other (a fenced string would
    # otherwise keep a carriage return on every line).
    text = text.replace("\r\n", "\n")
    try:  # before the native parser, which a deep enough text crashes (rel-09)
        check_text(text, source, gram=True)
    except SpecError as exc:
        raise GramError(exc.message, exc.line, exc.column, source) from None
    normalised, origins = normalise(text)
    try:
        patterns = cast(list[RawPattern], parse_raw(normalised))
    except GramParseError as exc:
        raise _located_error(exc.cause, text, normalised, origins, source) from exc
    return Document(patterns, text, source)


def normalise(text: str) -> tuple[str, list[int]]:
    """Rewrite ``::`` labels and ``[T]`` type labels into the form the parser reads.

    Returns the new text and, for each of its characters, the offset in ``text`` it came from.
    """
    out: list[str] = []
    origins: list[int] = []

    def emit(chunk: str, origin: int) -> None:
        out.append(chunk)
        origins.extend([origin] * len(chunk))

    i, n, depth = 0, len(text), 0
    while i < n:
        char = text[i]
        if text.startswith("```", i):
            end = text.find("```", i + 3)
            end = n if end < 0 else end + 3
            _copy(text, i, end, out, origins)
            i = end
        elif char in "\"'`":
            end = _string_end(text, i)
            _copy(text, i, end, out, origins)
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            _copy(text, i, end, out, origins)
            i = end
        elif char == "{":
            depth += 1
            emit(char, i)
            i += 1
        elif char == "}":
            depth = max(0, depth - 1)
            emit(char, i)
            i += 1
        elif char == ":" and depth == 0:
            # A label: "::" is the same as ":"; "[T]" after it becomes a backquoted label.
            emit(":", i)
            i += 2 if text.startswith("::", i) else 1
            if i < n and text[i] == "[":
                end = _bracket_end(text, i)
                emit("`", i)
                _copy(text, i, end, out, origins)
                emit("`", end - 1)
                i = end
        else:
            emit(char, i)
            i += 1
    return "".join(out), origins


def _copy(text: str, start: int, end: int, out: list[str], origins: list[int]) -> None:
    out.append(text[start:end])
    origins.extend(range(start, end))


def _string_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)


def _bracket_end(text: str, start: int) -> int:
    depth, i = 0, start
    while i < len(text):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        elif text[i] in "(){}\n":
            break
        i += 1
    return i


def _located_error(
    cause: str, text: str, normalised: str, origins: list[int], source: str
) -> GramError:
    """Translate the parser's ``line:column`` (UTF-8 bytes, normalised text) back to ``text``."""
    found = _POSITION.search(cause)
    detail = _POSITION.sub("", cause, count=1)
    detail = detail.removeprefix("Parse error: ").strip()
    if found is None:
        return GramError(detail, 0, 0, source)
    offset = _offset_of(normalised, int(found.group(1)), int(found.group(2)))
    original = origins[offset] if offset < len(origins) else len(text)
    line, column = line_column(text, original)
    return GramError(detail, line, column, source)


def _offset_of(text: str, line: int, byte_column: int) -> int:
    """Character offset of a 1-based line and 1-based UTF-8 byte column."""
    lines = text.split("\n")
    offset = sum(len(lines[k]) + 1 for k in range(min(line - 1, len(lines))))
    row = lines[line - 1] if 0 < line <= len(lines) else ""
    encoded = row.encode("utf-8")[: max(byte_column - 1, 0)]
    return offset + len(encoded.decode("utf-8", errors="ignore"))


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and character column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


# -- values read from the parser ------------------------------------------------------------


def to_python(value: Any, where: str = "value") -> Any:
    """A parser value as plain JSON data (``null`` arrives as a symbol; other tags are refused).

    The interchange format tags symbols, ranges, measurements and tagged strings as maps with a
    ``type`` key; those have no JSON meaning in an agent spec, so they are errors here.
    """
    if isinstance(value, list):
        return [to_python(item, f"{where}[{k}]") for k, item in enumerate(value)]
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and kind in _TAGGED_KINDS and set(value) <= {
            "type", "value", "lower", "upper", "unit", "tag", "content"
        }:
            if kind == "symbol" and value.get("value") == "null":
                return None
            raise GramError(f"{where}: gram {kind} values are not supported here")
        return {k: to_python(v, f"{where}.{k}") for k, v in value.items()}
    return value


# -- writing gram ---------------------------------------------------------------------------


def name(text: str) -> str:
    """An identity, label or key: bare when it can be, otherwise backquoted."""
    if _BARE_NAME.fullmatch(text):
        return text
    return "`" + text.replace("\\", "\\\\").replace("`", "\\`") + "`"


def string(text: str) -> str:
    """A string literal; multi-line text is fenced (```` ``` ````) so it stays readable."""
    if (
        "\n" in text
        and "```" not in text
        and "\r" not in text
        and not text.startswith("\n")
        and not text.endswith("`")
    ):
        return "```\n" + text + "```"
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
        .replace("\b", "\\b")
        .replace("\f", "\\f")
    )
    return f'"{escaped}"'


def value(data: Any, indent: str = "") -> str:
    """A JSON value as a gram literal. Maps nest with the given ``indent`` when multi-line."""
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "true" if data else "false"
    if isinstance(data, int):
        if abs(data) > _MAX_INT:
            raise GramError(f"integer {data} is too large for gram (64-bit limit)")
        return str(data)
    if isinstance(data, float):
        return _float(data)
    if isinstance(data, str):
        return string(data)
    if isinstance(data, list | tuple):
        return "[" + ", ".join(value(item, indent) for item in data) + "]"
    if isinstance(data, dict):
        return record(data, indent)
    raise GramError(f"cannot write a {type(data).__name__} as a gram value")


def record(data: dict[str, Any], indent: str = "", multiline: bool = False) -> str:
    """A property record ``{key: value, ...}``; ``multiline`` puts one entry per line."""
    if not data:
        return "{}"
    inner = indent + "  "
    entries = [f"{name(k)}: {value(v, inner)}" for k, v in data.items()]
    if not multiline:
        return "{" + ", ".join(entries) + "}"
    return "{\n" + ",\n".join(inner + e for e in entries) + "\n" + indent + "}"


def _float(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        raise GramError(f"{number} cannot be written in gram")
    text = repr(number)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
        if "." not in text:
            text += ".0"
    return text

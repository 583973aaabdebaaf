"""Comments a model writes inside its JSON: ``// October gross pay`` after a value.

Qwen2.5-Coder writes JSON the way code is annotated (first-hour agents, issue 68: an ``add``
call whose list carried ``10000, // October gross pay``); JSON has no comments, so the whole
call was unreadable and the model, told so, answered with the parser's complaint. Removing
``//`` line comments and ``/* */`` blocks outside strings leaves the JSON it meant.
"""

from __future__ import annotations


def without_comments(raw: str) -> str | None:
    """``raw`` without the ``//`` and ``/* */`` comments outside its strings, or ``None``
    when it has none (so the caller tries nothing more)."""
    if "//" not in raw and "/*" not in raw:
        return None
    out: list[str] = []
    quote = ""
    index = 0
    found = False
    while index < len(raw):
        char = raw[index]
        if quote:
            out.append(char)
            if char == "\\" and index + 1 < len(raw):
                out.append(raw[index + 1])
                index += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            out.append(char)
        elif raw.startswith("//", index):
            found = True
            end = raw.find("\n", index)
            index = len(raw) if end < 0 else end
            continue
        elif raw.startswith("/*", index):
            found = True
            end = raw.find("*/", index + 2)
            index = len(raw) if end < 0 else end + 2
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out) if found else None

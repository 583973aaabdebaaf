"""What a reply the output token limit cut still says: the calls written whole.

A small model under greedy decoding that starts repeating its calls goes on until the token
limit cuts one mid-way (measured on BFCL: SmolLM2-135M in a JSON list, Qwen2.5-Coder-0.5B in
a fence of calls one per line). Read whole, such a reply is one unreadable call and the calls
the model meant are lost; read here, its complete calls are kept, each distinct one once, and
the cut one is dropped. A last call left open by the limit while its arguments were being
written is reported (:data:`TRUNCATED`), never closed and run with arguments nobody wrote.
The bracket matching these readings share (:func:`closing_end`) is here too: it is how a cut
is seen.
"""

from __future__ import annotations

import json
from typing import Any

from .decoding import decode_lenient

#: The parse error of a call whose reply stopped at the output token limit while its arguments
#: were being written: the lenient decoder would close them into a call nobody wrote whole.
TRUNCATED = (
    "the reply hit the output token limit (max_tokens) while the model was writing this "
    "call's arguments, so they are incomplete; call the tool again with complete arguments"
)


def closing_end(text: str, start: int) -> int | None:
    """Index after the bracket that closes ``text[start]``; ``None`` when none does."""
    depth = 0
    in_string: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == in_string:
                in_string = None
        elif ch in "\"'":
            in_string = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def unclosed(raw: str) -> bool:
    """Whether ``raw`` opens an object or a list that it never closes (a cut-off call)."""
    raw = raw.strip()
    return raw[:1] in ("{", "[") and closing_end(raw, 0) is None


def complete_items_of_cut_list(raw: str) -> list[Any]:
    """The complete items of a list of calls cut off before its ``]``, each distinct one once.

    Measured on BFCL with SmolLM2-135M under the parallel grammar: the model opens a list and
    writes the same call again and again until the token limit cuts it mid-item
    (``[{"name": "math_factorial", "arguments": {"number": 5}}, {... the same ...}, {"name":
    "math_fa``). Read whole, that reply is one unreadable call; its complete items are the
    calls the model meant. A list that runs into the token limit is a repetition loop, so an
    item written again verbatim is taken once (running it again would repeat a side effect
    nobody asked for), and the item the limit cut is dropped. A list the model closed itself
    keeps every item as written ("roll the die twice").
    """
    text = raw.strip()
    if not text.startswith("["):
        return []
    items: list[Any] = []
    seen: set[str] = set()
    index = 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] == "]":
            return [] if index < len(text) else items  # closed: not a cut-off list
        end = closing_end(text, index)
        if end is None:
            return items  # the item the token limit cut
        item = decode_lenient(text[index:end])
        if item is None:
            return []  # a broken item, not a cut: leave the reply to the usual path
        key = json.dumps(item, sort_keys=True, default=repr)
        if key not in seen:
            seen.add(key)
            items.append(item)
        index = end


def values_one_per_line(body: str, cut: bool) -> list[Any] | None:
    """The values of a fence of calls one per line; ``None`` when its first value is not
    complete or something other than values stands between.

    ``cut``: the reply stopped at the token limit inside the fence. That is the loop of
    :func:`complete_items_of_cut_list` in the sequence form: measured on BFCL with
    Qwen2.5-Coder-0.5B in its family's own layout, a fence of calls one per line that goes
    on writing the same calls until the token limit cuts one. Read whole, that reply was one
    unreadable call and the complete ones were lost; its complete values are the calls the
    model meant, a value written again verbatim is taken once, and the value the limit cut is
    dropped. A fence the model closed itself keeps every value as written, the last one
    closed leniently (a missing closing brace, which small models write on complete
    replies)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    seen: set[str] = set()
    index = 0
    while index < len(body):
        end = closing_end(body, index) if body[index] in "{[" else None
        if end is None:
            break  # the last value, which does not close (or no value at all)
        try:
            value, _ = decoder.raw_decode(body[:end], index)
        except (ValueError, RecursionError):
            return None
        key = json.dumps(value, sort_keys=True, default=repr)
        if not cut or key not in seen:
            seen.add(key)
            values.append(value)
        index = end
        while index < len(body) and body[index] in " \t\r\n,":
            index += 1
    if not values:
        return None
    if index >= len(body):  # every value closes (cut just after one, or written whole)
        return values
    if not cut:
        last = decode_lenient(body[index:])
        if last is None:
            return None
        values.append(last)
    return values

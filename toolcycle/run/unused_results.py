"""Whether an answer uses what the run's tools found: grounding's check of the other direction.

Grounding (:mod:`.grounding`) asks whether what an answer asserts comes from a source. This
module asks the converse: where the tools found figures the request did not already hold,
does the answer use any of them? An answer that uses none (``"No loans found for title
AV3814."`` after a call returned ``{"title": "AV3814", "loans": 93}``) did not answer from
what was found: seen on the 1.5B (JSON protocol, generated suites), which got the figure,
made one more call that returned ``[]``, and answered from the last result alone, a
``success``.

A fact here is a figure: a JSON number of a successful tool result (or a string that is
one), or the length of a non-empty list in it (a count an answer may give); it is new when
the request does not hold it. A result that is not JSON holds none: a tool that returns
"Error 404: no such page" as text, or a fallback's "failed: 429 ...; found nothing too",
writes figures that are no answer. Ids, names and
words are left out on purpose: an id is often a handle passed on to the next call, and an
answer rightly leaves it unsaid ("It is in stock." after a lookup returned the product's
id); a name or a state an answer may put in its own words.

What follows is a re-ask, inside grounding's one check (:data:`.grounding.MAX_CHECKS`): the
model is shown the results it left out and asked to answer from them or to say why they do
not answer. The run's status does not change with it: an answer may rightly use no figure a
tool found ("Yes, it is in stock." after a call returned the count), so this is a second
look, not a verdict.
"""

from __future__ import annotations

import json
from typing import Any

from ..messages import ToolResult, bounded_repr
from .figures import FIGURE, figure_key
from .state import RunState

#: Results shown in the re-ask, at most, and the characters of each.
_SHOWN = 2
_EXCERPT = 300
#: Leaves read per result, at most (a huge result is read on its start).
_LEAVES = 500


def unused(state: RunState, answer: str) -> list[tuple[str, str]]:
    """The ``(tool, result)`` pairs of the results holding new facts, where ``answer`` uses
    none of the new facts of any of them; empty where it uses one, or no result held one."""
    request_figures = {figure_key(f) for f in FIGURE.findall(_request(state))}
    ending = {d.name for d in state.output.tool_definitions}
    answer_figures = {figure_key(f) for f in FIGURE.findall(answer)}
    fell_through = state.trace.trace.fell_through()
    holding: list[tuple[str, str]] = []
    for message in state.messages:
        for part in message.parts:
            if (not isinstance(part, ToolResult) or part.is_error or part.name in ending
                    or part.call_id in fell_through):
                continue
            new = {figure_key(f) for f in _facts(part.content)} - request_figures
            if not new:
                continue
            if new & answer_figures:
                return []
            holding.append((part.name, part.content))
    return holding


def reask(state: RunState, holding: list[tuple[str, str]]) -> str:
    """The re-ask: the question again, and the results the answer left out (the latest
    first). Why the question: told only that its answer used nothing found, the 1.5B wrote
    about the results ("the output of X is correct, but Y is empty") instead of answering."""
    shown = "; ".join(f"`{tool}` returned {bounded_repr(content)[:_EXCERPT]}"
                      for tool, content in list(reversed(holding))[:_SHOWN])
    question = _prompt(state)[:_EXCERPT]
    return (f"your answer uses nothing the tools found. The question: {question!r}. "
            f"{shown}. Answer the question from that, or say why it does not answer it")


def _prompt(state: RunState) -> str:
    """The run's prompt: its first user message from where this run's messages start."""
    for message in state.messages[state.new_message_index:]:
        if message.role == "user":
            return message.text
    return ""


def _request(state: RunState) -> str:
    """The run's request: the messages up to its prompt (later user messages are the loop's
    own feedback)."""
    texts = []
    for index, message in enumerate(state.messages):
        if message.role not in ("user", "system"):
            continue
        texts.append(message.text)
        if index >= state.new_message_index and message.role == "user":
            break
    return "\n".join(texts)


def _facts(content: str) -> list[str]:
    """The facts a result holds: its JSON numbers (and strings that are one) and the length
    of each list in it (an answer may count the rows); none in a result that is not JSON."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return []
    leaves: list[str] = []
    stack: list[Any] = [value]
    while stack and len(leaves) < _LEAVES:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            if item:
                leaves.append(str(len(item)))  # (a count an answer may give of it)
            stack.extend(item)
        elif isinstance(item, int | float) and not isinstance(item, bool):
            leaves.append(str(abs(item)))  # (an answer writes the sign its own way)
        elif isinstance(item, str) and FIGURE.fullmatch(text := item.strip()):
            leaves.append(text)
    return leaves

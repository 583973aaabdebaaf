"""Tools and a model for ``toolcycle run --approve`` tests (named on the command line)."""

from __future__ import annotations

from typing import Any

from toolcycle import tool
from toolcycle.models.scripted import ScriptedModel, call


@tool(requires_approval=True)
def sayHello(personName: str = "world") -> str:  # the spec's names, so camelCase
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}! Nice to meet you."


def two_greetings() -> ScriptedModel:
    """Greets Ada and Bo in one turn, then repeats what the tools answered."""

    def answer(messages: Any, settings: Any) -> str:
        return " | ".join(r.content for r in messages[-1].results)

    return ScriptedModel([[call("sayHello", {"personName": "Ada"}),
                           call("sayHello", {"personName": "Bo\x1b[2J"})], answer])


def greetings_answered() -> ScriptedModel:
    """:func:`two_greetings` in the process that resumes its paused run: the turn after."""

    def answer(messages: Any, settings: Any) -> str:
        return " | ".join(r.content for r in messages[-1].results)

    return ScriptedModel([answer])

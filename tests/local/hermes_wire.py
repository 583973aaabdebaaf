"""What Qwen2.5's chat template would take: a checker for conversations in its tool layout.

The template (the GGUF's ``tokenizer.chat_template``) renders an OpenAI-style conversation;
a text protocol hands llama.cpp the same conversation already written out as plain turns. This
checker reads such plain turns back into what the template's structure requires, and raises
:class:`WireError` for a history the template's API could not have produced: a system turn
that is not first or lacks the tools block, turns that do not alternate, a ``<tool_call>``
that is not a JSON call in the template's form, or ``<tool_response>`` blocks whose count
differs from the calls of the assistant turn before them (each tool message answers one call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from toolcycle.messages import Message

_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\n.*?\n</tool_response>", re.DOTALL)
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)


class WireError(AssertionError):
    """A conversation the template could not have rendered from a valid chat history."""


def check_conversation(messages: Sequence[Message]) -> None:
    """Raise :class:`WireError` unless ``messages`` are turns the template would produce."""
    if not messages or messages[0].role != "system":
        raise WireError("the first turn must be the system turn with the tools block")
    tools = _TOOLS.search(messages[0].text)
    if tools is None:
        raise WireError("the system turn has no <tools> block")
    for line in tools.group(1).splitlines():
        if json.loads(line).get("type") != "function":
            raise WireError(f"{line!r} in <tools> is no function")
    expected_role = "user"
    calls_before = 0
    for index, message in enumerate(messages[1:], 1):
        if message.role != expected_role:
            raise WireError(f"turn {index} is {message.role}, expected {expected_role}")
        if message.role == "assistant":
            calls = _CALL.findall(message.text)
            for raw in calls:  # (a past call may name an unknown tool: its error follows)
                try:
                    call = json.loads(raw)
                except json.JSONDecodeError:
                    call = None
                if not isinstance(call, dict) or set(call) != {"name", "arguments"} \
                        or not isinstance(call["name"], str):
                    raise WireError(f"turn {index}: {raw!r} is not a call in the template's "
                                    "form")
            calls_before = len(calls)
            expected_role = "user"
            continue
        responses = _RESPONSE.findall(message.text)
        if responses and len(responses) != calls_before:
            raise WireError(f"turn {index}: {len(responses)} tool responses answer "
                            f"{calls_before} calls")
        if calls_before and not responses:
            raise WireError(f"turn {index}: the calls before it got no tool response")
        calls_before = 0
        expected_role = "assistant"
    if expected_role != "assistant":
        raise WireError("the conversation must end with a user turn for the model to answer")

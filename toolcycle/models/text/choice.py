"""What the loop's ``tool_choice`` asks of a text model, and what a reply that does not do it
gets: the directive that says it in words, whether a text answer may end the turn, the way
forward after a reply that only repeats calls, and one more ask after a reply that calls no
tool where a call was required. A native API enforces ``tool_choice``; a text protocol has
only words, and these are the rules measured on small models that make the words hold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ...messages import Message, Part, ToolCall
from ..base import ModelSettings


def answer_allowed(settings: ModelSettings) -> bool:
    """Whether a text answer may end this request's turn (not when a call is required)."""
    return settings.tool_choice in ("auto", "none")


# Measured on Qwen2.5-Coder-1.5B at the second step of a two-tool task: "if these results
# answer the question, answer" made it answer "soon" without the second call; naming the next
# call first made it call latest_order with the id it had just read.
_AFTER_OBSERVATION = "Call the next tool, or reply {answer} if you already know the answer."
# When only a call may end the attempt (structured output: the loop sends "required"), the
# {"answer": ...} form is not offered at all. Measured on Qwen2.5-Coder-1.5B (README
# quickstart): offered it, it answered {"answer": "It is 21 degrees in Paris."} three
# attempts running instead of calling the output tool.
_AFTER_OBSERVATION_CALL_ONLY = (
    "Call the next tool; once you know the answer, call the tool that gives the final answer."
)


def after_observation(settings: ModelSettings, answer: str = '{"answer": "..."}') -> str:
    """The line that follows a turn's observations: the ways on from here (small models
    otherwise repeat the call they just made); ``answer`` is the answer's form."""
    if not answer_allowed(settings):
        return _AFTER_OBSERVATION_CALL_ONLY
    return _AFTER_OBSERVATION.format(answer=answer)


def directive_for(settings: ModelSettings) -> str:
    """What the loop's ``tool_choice`` asks of this turn, said in words."""
    choice = settings.tool_choice
    if choice == "auto" or not settings.tools:
        return ""
    if choice == "none" and settings.response_format is not None:  # native output mode
        return "Answer now with your answer's JSON, without calling any tool."
    if choice == "none":
        return "Answer now in plain text, without calling any tool."
    if choice == "required":
        return "Call one of the tools now."
    return f"Call the tool {choice} now."


#: The turn that follows a reply which called no tool where one was required; the request's
#: directive ("Call the tool country_info now.") comes after it.
NO_CALL_MADE = "That reply called no tool, and this turn must call one."

#: The turn that follows a reply which called a tool where the answer was asked for
#: (``"none"``); the directive ("Answer now in plain text, without calling any tool.") follows.
CALL_MADE = ("That reply called a tool, and this turn must answer without one, from what the "
             "tools returned.")


def call_required(settings: ModelSettings) -> bool:
    """Whether this request must end in a tool call: ``"required"`` or a tool named."""
    return bool(settings.tools) and settings.tool_choice not in ("auto", "none")


def ignored_call(settings: ModelSettings, parts: Sequence[Part]) -> bool:
    """Whether a reply called no tool where ``settings`` required one."""
    return call_required(settings) and not any(isinstance(p, ToolCall) for p in parts)


def call_prefix(messages: Sequence[Message]) -> str:
    """The prefix of the call ids a reply to ``messages`` gets: ``call_<turn>``, the turn
    counted in assistant messages, so ids never repeat within a conversation."""
    return f"call_{sum(1 for m in messages if m.role == 'assistant') + 1}"


def answer_required(settings: ModelSettings) -> bool:
    """Whether this request must end in an answer: ``"none"`` with tools to refuse."""
    return bool(settings.tools) and settings.tool_choice == "none"


def insisting(messages: Sequence[Message], parts: Sequence[Part], line: str = NO_CALL_MADE
              ) -> list[Message]:
    """The history to ask again with after a reply that ignored ``tool_choice``: that reply,
    then ``line`` (:data:`NO_CALL_MADE`, or :data:`CALL_MADE` after a call where the answer
    was asked for; the directive follows it, see
    :meth:`.TextProtocolModel.render_conversation`; a reply that renders as nothing is left
    out there).

    Why: a native API never answers a required call with text, and the loop trusts that
    (a playbook's first call, structured output's ``"required"``); a text protocol has only
    words to say it. Under "Call the tool country_info now." the 1.5B (ReAct, `chains` test
    split, 3a4347d) answered a currency and a parcel question from memory in its first turn,
    and the text was taken as the run's answer. The first reply's text is kept in the
    message's ``asked_again`` (and so in the trace's step), its usage in the message's.
    The reply asked for this way takes its call ids from ``messages`` (:func:`call_prefix`):
    the turn added here is not the conversation's, and counted it made the next turn's ids
    repeat these (found by tests/local/test_protocol_fuzz.py).

    The other way round, a reply that calls a tool where the answer was asked for (``"none"``:
    at a limit, or once a playbook's learned calls are done) was taken as the answer under
    the JSON protocol, the call's JSON itself (rail test-07 replayed at the iteration limit,
    2026-11-28), and under ReAct it was a call the run then made; a native API answers.
    """
    return [*messages, Message("assistant", list(parts)), Message.user(line)]


def way_forward(settings: ModelSettings, repeated: frozenset[str]) -> str | None:
    """The ``tool_choice`` to ask again with when the reply only repeats calls, else ``None``.

    Small models ask again for exactly what they were just given (measured: SmolLM2 and Qwen
    0.5B repeat sayHello("Alice") until the iteration limit), so they are asked once more for
    the way forward the run chose in ``settings.on_repeat`` (``submit`` after a repeated output
    preview in reflection mode; by default the answer, with tools withdrawn).
    """
    if (settings.tool_choice not in ("auto", "required") or not repeated
            or settings.on_repeat == "auto"):
        return None
    forward = settings.on_repeat
    if forward in ("none", "required"):
        return forward
    offered = {t.name for t in settings.tools}
    return forward if forward in offered - repeated else "none"


def repeated_call_names(parts: Sequence[Part], messages: Sequence[Message]) -> frozenset[str]:
    """The tool names, when every call in ``parts`` repeats a successful call of the last turn.

    Empty when there is a new call among them (or no call at all).
    """
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if not calls or len(messages) < 2 or messages[-1].role != "tool":
        return frozenset()
    previous = messages[-2]
    succeeded = {r.call_id for r in messages[-1].results if not r.is_error}
    done = {(c.name, json.dumps(c.arguments, sort_keys=True))
            for c in previous.tool_calls if c.id in succeeded}
    if all((c.name, json.dumps(c.arguments, sort_keys=True)) in done for c in calls):
        return frozenset(c.name for c in calls)
    return frozenset()

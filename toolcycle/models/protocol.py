"""The rules real provider APIs enforce on a conversation, checked on the neutral history.

A history that OpenAI or Anthropic would reject with a 400 must fail our tests too, so the
test model runs every request through :class:`HistoryChecker`. The checker is incremental: it
remembers how far it has checked and only looks at appended messages, so checking a long run
costs O(1) per request (and it re-checks from scratch if the history was rewritten).

Wire shapes:
- ``"openai"``: Chat Completions with ``tools``;
- ``"openai-functions"``: legacy ``functions`` (at most one call per assistant message);
- ``"anthropic"``: Messages API (first turn from the user, non-empty user turns; a blank
  assistant turn is what the model said and stays in the history: the Anthropic adapter
  patches it on the wire, see :data:`~toolcycle.models.repair.EMPTY_TURN_TEXT`);
- ``"both"``: the union of the OpenAI and Anthropic rules (the default for tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Literal

from ..errors import ToolcycleError
from ..media import MediaPart
from ..messages import Message, TextPart
from ..tools import TOOL_NAME_PATTERN
from .repair import CALL_ID_PATTERN

Wire = Literal["openai", "openai-functions", "anthropic", "both"]


class ProtocolViolation(ToolcycleError, AssertionError):
    """The history breaks a rule the provider's API enforces (it would answer 400)."""


class HistoryChecker:
    def __init__(self, wire: Wire = "both") -> None:
        self.wire = wire
        self._checked = 0
        self._last: Message | None = None
        self._open: list[str] = []
        self._seen_ids: set[str] = set()
        self._seen_non_system = False

    @property
    def seen_ids(self) -> AbstractSet[str]:
        """Every tool call id of the history checked so far: ids a new call must not reuse."""
        return self._seen_ids

    def check(self, messages: Sequence[Message]) -> None:
        """Raise :class:`ProtocolViolation` if the history (as a request) would be rejected."""
        if self._checked and (
            len(messages) < self._checked or messages[self._checked - 1] is not self._last
        ):
            self.__init__(self.wire)  # type: ignore[misc]  # history rewritten: start over
        for index in range(self._checked, len(messages)):
            self._check_message(index, messages[index])
        self._checked = len(messages)
        self._last = messages[-1] if messages else None
        if not messages:
            raise ProtocolViolation("a request needs at least one message")
        if self._open:
            raise ProtocolViolation(
                f"tool call(s) {self._open} have no result: every tool call must be answered "
                "before the next request"
            )
        if messages[-1].role == "system":
            raise ProtocolViolation("the last message of a request cannot be a system message")

    def _check_message(self, index: int, message: Message) -> None:
        role = message.role
        anthropic = self.wire in ("anthropic", "both")
        if role == "system":
            if index != 0 and anthropic:
                raise _violation(index, role, "system instructions must come first")
            return
        if self._open and role != "tool":
            raise _violation(
                index, role, f"tool call(s) {self._open} must be answered in the message right "
                "after the assistant message that made them"
            )
        if not self._seen_non_system and anthropic and role != "user":
            raise _violation(index, role, "the first non-system message must be from the user")
        self._seen_non_system = True
        if role == "assistant":
            self._check_assistant(index, message, anthropic)
        elif role == "tool":
            self._check_results(index, message)
        elif role == "user":
            if not message.parts or any(not isinstance(p, TextPart | MediaPart)
                                        for p in message.parts):
                raise _violation(index, role, "a user message needs text (and media) parts only")
            if anthropic and not message.text.strip():
                raise _violation(index, role, "text content blocks must be non-empty")

    def _check_assistant(self, index: int, message: Message, anthropic: bool) -> None:
        calls = message.tool_calls
        if self.wire == "openai-functions" and len(calls) > 1:
            raise _violation(index, message.role, "legacy functions allow one function_call")
        ids = []
        for call in calls:
            if not call.id:
                raise _violation(index, message.role, "a tool call without an id")
            if anthropic and not CALL_ID_PATTERN.match(call.id):
                raise _violation(index, message.role, f"tool call id {call.id!r} does not "
                                 f"match {CALL_ID_PATTERN.pattern}")
            if call.id in self._seen_ids or call.id in ids:
                raise _violation(index, message.role, f"tool call id {call.id!r} is not unique")
            if not TOOL_NAME_PATTERN.match(call.name):
                raise _violation(index, message.role, f"tool name {call.name!r} is not allowed")
            ids.append(call.id)
        self._seen_ids.update(ids)
        self._open = ids

    def _check_results(self, index: int, message: Message) -> None:
        results = message.results
        if len(results) != len(message.parts) or not results:
            raise _violation(index, message.role, "a tool message carries tool results only")
        got = [r.call_id for r in results]
        if not self._open:
            raise _violation(
                index, message.role, f"tool result(s) {got} answer no preceding tool call"
            )
        if got != self._open:
            raise _violation(
                index, message.role,
                f"results {got} must answer the calls {self._open} exactly once each, "
                "in call order",
            )
        for result in results:
            if not isinstance(result.content, str):
                raise _violation(index, message.role, "tool result content must be a string")
        self._open = []


def _violation(index: int, role: str, problem: str) -> ProtocolViolation:
    """Name the offending message only when there is a problem (the check runs per request)."""
    return ProtocolViolation(f"message {index} ({role}): {problem}")


# -- repairing a reply before it enters the history ----------------------------------------------

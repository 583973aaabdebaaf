"""Testing agents without a provider: the one import a user's tests need.

:class:`ScriptedModel` replays scripted replies (``"text"``, ``call("tool", {...})``, lists of
calls, messages, or a function of the conversation) and checks every request against the
rules real provider APIs enforce, so a history OpenAI or Anthropic would reject fails the test
with :class:`ProtocolViolation`. :class:`HistoryChecker` is that check on its own.

    from toolcycle.testing import ScriptedModel, call

    model = ScriptedModel([call("add", {"a": 1, "b": 2}), "3"])
"""

from .models.protocol import HistoryChecker, ProtocolViolation, Wire
from .models.scripted import RecordedRequest, ScriptedModel, ScriptExhausted, ScriptItem, call

__all__ = [
    "HistoryChecker",
    "ProtocolViolation",
    "RecordedRequest",
    "ScriptExhausted",
    "ScriptItem",
    "ScriptedModel",
    "Wire",
    "call",
]

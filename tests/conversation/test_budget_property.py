"""The context budget over random histories with tool calls: a suffix of whole turns that never
separates a call from its result and never starts with a tool result."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolcycle.conversation import fit_budget
from toolcycle.messages import Message, ToolCall, ToolResult
from toolcycle.run.state import message_chars


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    ids = 0
    for _ in range(draw(st.integers(0, 6))):
        messages.append(Message.user("u" * draw(st.integers(0, 200))))
        for _ in range(draw(st.integers(0, 3))):  # rounds of calls, each answered
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                ids += 1
                calls.append(ToolCall.from_args(f"c{ids}", "t", {"x": "a" * draw(
                    st.integers(0, 100))}))
            messages.append(Message.assistant("t" * draw(st.integers(0, 50)), calls))
            messages.append(Message.tool_results(
                [ToolResult(c.id, "t", "r" * draw(st.integers(0, 300))) for c in calls]))
        messages.append(Message.assistant("a" * draw(st.integers(0, 100))))
    return messages


@settings(max_examples=300, deadline=None)
@given(histories(), st.one_of(st.none(), st.integers(1, 600)))
def test_budget_never_orphans_a_call(history: list[Message], budget: int | None) -> None:
    kept = fit_budget(history, budget)
    assert kept == history[len(history) - len(kept):]  # a suffix
    if history:
        assert kept, "the newest turn is always kept"
        assert kept[0].role == "user"
    calls = {c.id for m in kept for c in m.tool_calls}
    results = {r.call_id for m in kept for r in m.results}
    assert calls == results
    if budget is not None and len(kept) < len(history):
        dropped_to = len(history) - len(kept)
        # Either it fits, or only the newest turn is left; and the turn before did not fit.
        size = sum(message_chars(m) for m in kept)
        newest_turn = max(i for i, m in enumerate(history) if m.role == "user")
        assert size <= budget * 4 or dropped_to == newest_turn
        previous = max(i for i, m in enumerate(history[:dropped_to]) if m.role == "user")
        assert sum(message_chars(m) for m in history[previous:]) > budget * 4

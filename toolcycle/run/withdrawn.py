"""Refused answers, withdrawn from what the model reads next (grounding on).

When grounding or the asked check refuses an answer (a figure from nowhere, a figure of
another field or unit), the re-ask says what was wrong and what would work, quoting the
refused figure. The answer itself stays in the run's history and trace, but the requests
after it no longer send it as the model's own turn.

Why: a small model copies its own earlier turns. Over 684 traced first-hour runs of the
1.5B (2026-12-06 and 07, development and held-out sets), 27 of the runs that went past a
refusal ended on an answer that repeated a figure an earlier attempt had been refused for
and that no tool gave, none of them a success; one had just made the call the re-ask named
("`add` over 400.1 and 622.8", 1022.9) and answered its first refused figure, 12000, again
(``bench/runs/2026-12-07/firsthour45/README.md``). The fix of such an answer is a new
answer from the results, not an edit of the old one, so the old one need not be shown;
the re-ask still names what it asserted.

Only an answer the model gave alone is withdrawn: a text reply without calls, or a reply
whose only call is the output tool's (with the tool message that answered it, so every
call the model reads stays answered). A schema failure is not withdrawn (its fix is an edit
of that reply), nor a reply that also called other tools (their results are the run's).
The history keeps its shape for every provider: what remains is the conversation without
those turns (two user turns in a row are merged where a provider needs it,
:mod:`toolcycle.models.anthropic`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message
from .state import RunState

#: The checks whose refusals withdraw the answer: its content was wrong, not its form.
WITHDRAWN_BY = frozenset({"grounding", "asked"})


def withdraw(state: RunState, validator: str | None) -> None:
    """Withdraw the answer that ended this attempt, refused by ``validator``, from the
    requests that follow (the history itself is unchanged)."""
    if not state.setup.core.grounding or validator not in WITHDRAWN_BY:
        return
    messages = state.messages
    last = next((i for i in range(len(messages) - 1, -1, -1)
                 if messages[i].role == "assistant"), None)
    if last is None or last < state.new_message_index:
        return
    calls = messages[last].tool_calls
    if not calls:
        if last == len(messages) - 1:
            state.withdrawn.add(last)
        return
    enders = {t.name for t in (state.output.tool, state.output.submit_tool) if t is not None}
    answered = last + 1 == len(messages) - 1 and messages[last + 1].role == "tool"
    if answered and len(calls) == 1 and calls[0].name in enders:
        state.withdrawn.update((last, last + 1))


def shown(messages: Sequence[Message], withdrawn: set[int], start: int = 0) -> list[Message]:
    """``messages`` (the history from index ``start``) without the withdrawn ones."""
    if not withdrawn:
        return list(messages)
    return [m for i, m in enumerate(messages, start) if i not in withdrawn]

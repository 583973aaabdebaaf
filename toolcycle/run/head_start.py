"""The head start: a tool call the run's tool selection makes before the first model request.

Why in the loop: the call must be the run's own, answered once, validated, limited, traced,
counted and shown to callbacks like any call, and stand in the history the model reads as its
first turn's call. So the loop makes it as a turn: an assistant message holding the one call
(the text empty), then the call executed by :func:`~toolcycle.run.calls.execute_turn`, then
the turn closed, which appends its result. The turn is iteration 0 of the first attempt: it
is no model request, so ``RunResult.iterations``, ``Trace.iterations`` and the usage's
``requests`` do not count it, and the usage's ``tool_calls`` does. Providers accept such a
history (a call, its result, then the request); the model may call the tool again.

Who asks for one: a selection that is a :class:`~toolcycle.run.state.HeadStart` (the
playbook's, :mod:`toolcycle.playbook.sequence`), once per run, never for a resumed run, nor
where a call can need approval (the approval is a person's decision about a call the model
asked for).
"""

from __future__ import annotations

from ..messages import Message, ToolCall, Usage
from .calls import close_turn, execute_turn
from .state import RunState, Turn

#: The id of a head start's call, before the run id's first characters: unique in the run.
HEAD_START_ID = "head_start_"


async def make_head_start(state: RunState) -> None:
    """Make the run's head start, if it has one and none was made: append the call, run it,
    append its result."""
    core = state.setup.core
    head = core.head_start
    if (head is None or state.resumed is not None or state.iteration or state.turn is not None
            or state.executed_calls or core.gated):
        return
    name, arguments = head
    if name not in core.tools:  # the run's tools changed since the selection (a toolset)
        return
    call = ToolCall.from_args(f"{HEAD_START_ID}{state.setup.run_id[:24]}", name, dict(arguments))
    if call.id in state.call_ids:  # a history passed in that holds this run's id: none
        return
    state.call_ids.add(call.id)
    state.append(Message.assistant("", [call]))
    counted = Usage(tool_calls=1)  # the run's usage stays the sum of its steps'
    state.spend(counted)
    state.trace.head_start(state.attempt, counted)
    turn = state.turn = Turn(state.attempt, 0, [call])
    state.phase = "tool_execution"
    await execute_turn(state, turn)
    state.phase = "between_iterations"
    close_turn(state, turn)

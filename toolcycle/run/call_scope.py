"""What a tool call may do on its run's behalf, set up once per call that takes a context.

- :func:`call_context`: the run's :class:`~toolcycle.context.RunContext` with the call's id
  and tool name;
- the calls it makes itself (a routine, a fallback) counted against the run's budgets
  (``RunContext.admit_call``, :func:`admit`);
- what it did for the model when it stands in for it (a routine, a fallback: the calls it
  made, ``RunContext.record_stand_in``), kept typed on the call's record in the trace;
- the model requests it causes (an MCP server's sampling request served by the run's model)
  recorded (``RunContext.record_sampling``): a step nested under the call in the trace, its
  usage counted once, in the run's total and in the step of the call's iteration, so a run's
  usage stays the sum of its steps (and a team's, of its members').
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..context import CountedTool, RunContext, SampledRequest
from ..messages import ToolCall
from ..tools import Tool
from .state import RunState
from .team import refuse_in_team


def call_context(state: RunState, tool: Tool[Any], call: ToolCall) -> RunContext[Any]:
    """The run's context with the call's id and tool name, for a tool that takes one."""
    base = state.ctx
    return RunContext(
        deps=base.deps, usage=base.usage, cancel_token=base.cancel_token, run_id=base.run_id,
        agent_name=base.agent_name, iteration=base.iteration, attempt=base.attempt,
        run_state=base.run_state, attempt_state=base.attempt_state,
        tool_call_id=call.id, tool_name=call.name, input=base.input, prompt=base.prompt,
        admit_call=_nested_admission(state, call.name), model=base.model,
        record_sampling=_sampling_recorder(state, call),
        record_stand_in=lambda what: state.trace.stood_in(call.id, what),
    )


def _nested_admission(state: RunState, own: str) -> Callable[[CountedTool], str | None]:
    """How the call of ``own`` has the calls it makes itself counted (``RunContext.admit_call``).

    Why: a routine, a fallback or a repair runs several of the agent's tools inside one call;
    counted as one, they let a run pass ``max_calls`` and ``max_tool_calls``. The first call of
    ``own`` inside is the call the loop admitted already.
    """
    covered = False

    def admit_inside(tool: CountedTool) -> str | None:
        nonlocal covered
        if tool.name == own and not covered:
            covered = True
            return None
        return admit(state, tool, tool.name)

    return admit_inside


def admit(state: RunState, tool: CountedTool, name: str) -> str | None:
    """Count the call to ``tool`` (found by ``name``) against the per-tool and per-run budgets;
    say why if it is refused."""
    used = state.tool_counts.get(name, 0)
    if tool.max_calls is not None and used >= tool.max_calls:
        return (f"`{tool.name}` may be called at most {tool.max_calls} time(s) per run; "
                "it was not called. Use what you have.")
    if state.limits.max_tool_calls is not None:
        refusal = state.limits.refuse_call(state)
        if refusal is not None:
            return f"{refusal}; `{tool.name}` was not called."
    if state.ancestors:
        refusal = refuse_in_team(state)
        if refusal is not None:
            return f"{refusal}; `{tool.name}` was not called."
        for outer in state.ancestors:  # the team's tool calls, counted as they happen
            outer.executed_calls += 1
    state.tool_counts[name] = used + 1
    state.executed_calls += 1
    return None


def _sampling_recorder(state: RunState, call: ToolCall) -> Callable[[SampledRequest], None]:
    """How a request made on behalf of ``call`` is counted and traced (see the docstring).
    Synchronous: it is called from the MCP client's task while the call waits, and tells no
    callbacks (nothing of the run's own flow happens there)."""

    def record(request: SampledRequest) -> None:
        state.spend(request.usage)
        state.trace.sampled(call.id, request)

    return record

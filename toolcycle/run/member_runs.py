"""The runs of team members that ended before a pause, carried by the paused run's snapshot
(``runs``), so that ``result.runs`` of the resumed run lists every agent's run, as one that
never paused does (docs/teams.md).

Each member's trace already sits nested under the call that ran it in the run's trace; the
snapshot adds what the trace does not hold: the member's history, where its own messages
start, its usage and ending, and its output in its JSON form (a structured output comes back
as that JSON, not as its type: the agent that typed it is not known here). The members that
paused are not among them: their runs go on when the team resumes and join ``runs`` then.
"""

from __future__ import annotations

from typing import Any

from ..messages import Message, Usage
from ..result import RunResult, Termination
from ..tracing.trace import Trace
from .state import RunState


def ended_runs(state: RunState) -> list[dict[str, Any]]:
    """The JSON form of the member runs of ``state`` that ended (paused members, and the runs
    inside them, go on on resume and are left out)."""
    turn = state.turn
    paused = (turn.paused_members or {}) if turn is not None else {}
    going_on = {id(run) for result in paused.values() for run in (result, *result.runs)}
    return [{"run_id": run.run_id, "messages": [m.to_dict() for m in run.messages],
             "new_message_index": run.new_message_index, "usage": run.usage.to_dict(),
             "termination": run.termination.to_dict(), "output": _jsonable(run.output)}
            for run in state.runs if id(run) not in going_on]


def revived_runs(recorded: list[dict[str, Any]], trace: Trace) -> list[RunResult[Any]]:
    """The ended member runs of a checked snapshot (:func:`problems` passed), each with its
    trace as nested in ``trace``."""
    traces = nested_traces(trace)
    return [RunResult(output=run["output"],
                      messages=[Message.from_dict(m) for m in run["messages"]],
                      new_message_index=run["new_message_index"],
                      usage=Usage.from_dict(run["usage"]), trace=traces[run["run_id"]],
                      termination=Termination(**run["termination"]), run_id=run["run_id"])
            for run in recorded]


def problems(recorded: Any, trace: Trace | None) -> list[str]:
    """What keeps a snapshot's ``runs`` from being read back (empty when nothing does)."""
    if recorded is None:
        return []
    if not isinstance(recorded, list):
        return ["runs: must be a list of the member runs that ended"]
    known = set() if trace is None else set(nested_traces(trace))
    found = []
    for index, run in enumerate(recorded):
        try:
            if not isinstance(run, dict) or not isinstance(run.get("messages"), list):
                raise TypeError("run_id, messages, new_message_index, usage, termination "
                                "and output are needed")
            [Message.from_dict(m) for m in run["messages"]]
            Usage.from_dict(run["usage"])
            Termination(**run["termination"])
            if not (isinstance(run["new_message_index"], int)
                    and 0 <= run["new_message_index"] <= len(run["messages"])):
                raise ValueError("new_message_index must index its messages")
            if trace is not None and run["run_id"] not in known:
                raise ValueError(f"no call of the run ran {run['run_id']!r}")
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            found.append(f"runs[{index}]: {exc}")
    return found


def nested_traces(trace: Trace) -> dict[str, Trace]:
    """Every run nested under ``trace``'s calls, however deep, by run id."""
    found: dict[str, Trace] = {}
    for record in trace.tool_calls:
        if record.run is not None:
            found[record.run.run_id] = record.run
            found.update(nested_traces(record.run))
    return found


def _jsonable(value: Any) -> Any:
    import pydantic_core  # (only when a run with members pauses)

    return pydantic_core.to_jsonable_python(value, fallback=repr)

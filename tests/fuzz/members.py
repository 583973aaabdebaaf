"""Teams in the engine fuzzer: some seeds give the fuzzed agent other agents among its tools
(``as_tool``), now and then two levels deep, and a handoff target.

The drawing has a random stream of its own (``members:<seed>``), so a seed's scenario is the
one it always was; only the calls the model makes to the members are new. The members run on
scripted models of their own that call the fuzz tools at random (so their tool bodies count
against the team's budgets, invariant 11), answer, or fail now and then; their limits and
``on_limit`` are random too. A handoff target is the fuzzed agent's twin (the same model,
tools, output and approval policy, other instructions): the conversation it takes over keeps
every check of a single run, and the handoff itself (system message, tools, trace, events)
is exercised.

What a member's run must keep, for every run in ``result.runs`` (:func:`check_members`):
  M1 its history is one a provider accepts (every call id answered once, in order);
  M2 its usage adds up exactly: its steps' plus the runs nested under its calls, and the
     root's own steps plus its direct members' make the root's usage (checked in
     invariants 2);
  M3 it ended: a termination, a finished trace status, the trace's usage its own;
  M5 ``result.runs`` lists every run nested in the trace, once (a member's run that paused
     and was closed on a cancelled resume included).
A member's events reach the fuzzed agent's callbacks between its ``RunStart`` and its end
event; :func:`own_events` takes them out before the single-run checks (so members never run
concurrently here: a drawn team turns ``parallel`` off).

Teams are drawn with approvals too (tests/fuzz/approvals.py): then each member also has
``stamp``, a side effect that requires approval, and no policy of its own (the fuzzed agent's
governs it), so the team pauses deep inside a member and is resumed with the person's answers:
  M4 a ``stamp`` call ran at most once, and only if the policy or the person approved that
     very call (its run and call id).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolcycle import Agent, Limits, Message, Price, RunContext, RunResult, Usage, tool
from toolcycle.events import Event, RunFailure, RunPaused, RunResumed, RunStart, RunSuccess
from toolcycle.models.base import ModelSettings
from toolcycle.testing import ScriptedModel, call

from .teams import nested_ids, nested_usage
from .tools import ALL_TOOLS, valid_arguments

MEMBER_ODDS = 0.2
#: What the fuzzed agent's model costs in a team, so that costs add up across its members
#: (exactly: invariant 2 and M2 compare usage, cost included); some teams get a budget.
LEAD_PRICE = Price("2.50", "10")
HANDOFF_TARGET = "specialist"
_MEMBER_TOOLS = ("add", "echo", "nap", "boom")
#: (run id, call id) of every ``stamp`` that ran (M4), cleared by the runner per run.
STAMPED: list[tuple[str, str]] = []


@tool(requires_approval=True)
def stamp(ctx: RunContext[Any], mark: str) -> str:
    """Stamp a document: a side effect that needs a person's yes."""
    STAMPED.append((ctx.run_id, str(ctx.tool_call_id)))
    return f"stamped {mark}"


@dataclass
class Crew:
    """The agents drawn for one seed: tools for the fuzzed agent, and handoff targets."""

    tools: list[Any] = field(default_factory=list)
    names: tuple[str, ...] = ()
    handoff: bool = False


def drawn(seed: int) -> tuple[int, bool, str | None] | None:
    """How many members (1-2), whether a handoff target, and a budget (``max_cost``), or
    ``None`` for no team."""
    rng = random.Random(f"members:{seed}")
    if rng.random() >= MEMBER_ODDS:
        return None
    return (rng.choice([1, 1, 2]), rng.random() < 0.4,
            rng.choice([None, None, "0.0005", "0.01", "0.5"]))


def build(seed: int, count: int, gated: bool = False) -> Crew:
    """``count`` members (``helper_0``...), the first one with a member of its own at times;
    ``gated`` (the scenario has approvals): each with ``stamp`` too (M4)."""
    rng = random.Random(f"crew:{seed}")
    crew = Crew()
    own = [stamp] if gated else []
    for index in range(count):
        inner = [_member(rng, f"{seed}:{index}:inner", f"deputy_{index}", own)] if (
            rng.random() < 0.3) else []
        agent = _member(rng, f"{seed}:{index}", f"helper_{index}",
                        [*own, *(a.as_tool(description="Ask the deputy.") for a in inner)])
        crew.tools.append(agent.as_tool(description=f"Ask helper {index} to do a task."))
    crew.names = tuple(t.name for t in crew.tools)
    return crew


def handoff_target(model: Any, tools: list[Any], output: Any, policy: Any) -> Agent[Any, Any]:
    """The fuzzed agent's twin, to hand the conversation to."""
    return Agent(model, "You are the specialist; go on where the other agent stopped.", tools,
                 output=output, approval=policy, name=HANDOFF_TARGET)


def _member(rng: random.Random, key: str, name: str, extra: list[Any]) -> Agent[Any, Any]:
    tools = [ALL_TOOLS[t] for t in rng.sample(_MEMBER_TOOLS, rng.randint(0, 3))] + extra
    limits = Limits(max_iterations=rng.choice([None, 1, 2, 4]),
                    on_limit=rng.choice(["final_answer", "partial", "error"]))
    price = Price(rng.choice(["0.15", "3", "1000"]), rng.choice(["0.6", "15", "2000"]))
    return Agent(ScriptedModel(_script(random.Random(key)), price=price), f"You are {name}.",
                 tools, name=name, limits=limits)


def _script(rng: random.Random) -> Any:
    """A member's model: calls what it is offered at random, answers, fails rarely."""
    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        offered = [t.name for t in settings.tools]
        roll = rng.random()
        if roll < 0.04:
            raise ConnectionError("the fuzzed member's model failed")
        if settings.tool_choice == "none" or not offered or roll < 0.35:
            return rng.choice(["member answer", "done", ""])
        names = ([settings.tool_choice] if settings.tool_choice in offered else offered)
        return [call(n, _arguments(n, rng.randint(0, 999)))
                for n in (rng.choice(names) for _ in range(rng.choice([1, 1, 2])))]
    return reply


def _arguments(name: str, n: int) -> dict[str, Any]:
    if name in ALL_TOOLS:
        return valid_arguments(name, n)
    if name == "stamp":
        return {"mark": f"form {n}"}
    return {"input": f"sub-task {n}"}


def member_call(name: str, n: int) -> Any:
    """The fuzzed model's call of a member (or of the handoff)."""
    return call(name, {} if name.startswith("transfer_to_") else {"input": f"task {n}"})


# -- checks ---------------------------------------------------------------------------------


def own_events(events: list[Event], run_id: str) -> tuple[list[Event], list[str]]:
    """The events of the fuzzed run ``run_id`` itself (those between a member's ``RunStart``,
    or its ``RunResumed`` when a paused team goes on, and its end event left out), and what
    did not bracket (a member's run that never ended). A member's end events are told by
    run: a cancel landing while its ``on_success`` is told adds a ``RunFailure`` after its
    ``RunSuccess`` (docs/loop.md, r2-16), and one landing while its ``on_pause`` is told ends
    it cancelled after its ``RunPaused`` (its closing events, then its ``RunFailure``)."""
    own: list[Event] = []
    open_runs: set[str] = set()
    for index, event in enumerate(events):
        if (isinstance(event, RunStart) and event.parent_run_id is not None) or (
                isinstance(event, RunResumed) and event.run_id != run_id):
            open_runs.add(event.run_id)
        elif isinstance(event, RunSuccess | RunFailure | RunPaused) and (
                (ended := _run_of(event)) is not None and ended != run_id):
            if not (isinstance(event, RunPaused) and _fails_next(events, index, ended)):
                open_runs.discard(ended)
        elif not open_runs:
            own.append(event)
    problems = [f"M3 {len(open_runs)} member run(s) told RunStart and never an end event"
                ] if open_runs else []
    return own, problems


def _fails_next(events: list[Event], index: int, run: str) -> bool:
    """Whether the next event of member ``run`` after ``events[index]`` that starts or ends
    it is its ``RunFailure`` (a pause cut by a cancel), not a ``RunResumed``."""
    for event in events[index + 1:]:
        if isinstance(event, RunResumed) and event.run_id == run:
            return False
        if isinstance(event, RunFailure) and _run_of(event) == run:
            return True
    return False


def _run_of(event: RunSuccess | RunFailure | RunPaused) -> str | None:
    result = event.result
    return result.run_id if result is not None else None


def member_usage(result: RunResult[Any]) -> Usage:
    """The usage of the runs nested directly under the result's calls (theirs included)."""
    total = Usage()
    for record in result.trace.tool_calls:
        if record.run is not None:
            total.add(record.run.usage)
    return total


def check_members(result: RunResult[Any], history: Any) -> list[str]:
    """M1-M3 and M5 for every member run of ``result`` (``history``: invariant 1's check)."""
    found: list[str] = []
    nested = sorted(nested_ids(result.trace))
    if sorted(run.run_id for run in result.runs) != nested:
        found.append(f"M5 result.runs lists {len(result.runs)} runs, the trace nests "
                     f"{len(nested)}")
    for run in result.runs:
        who = f"member {run.agent_name}"
        found += [f"M1 {who}: {line}" for line in history(run)]
        if nested_usage(run.trace) != run.usage:
            found.append(f"M2 {who}: usage {run.usage.to_dict()} is not its steps' plus its "
                         f"members' {nested_usage(run.trace).to_dict()}")
        if run.trace.usage != run.usage:
            found.append(f"M3 {who}: trace.usage differs from result.usage")
        if run.termination is None or run.trace.status in ("running", "crashed"):
            found.append(f"M3 {who}: ended without a termination (status "
                         f"{run.trace.status!r})")
    return found


def check_stamps(stamped: list[tuple[str, str]], approved: set[tuple[str, str]]) -> list[str]:
    """M4: each ``stamp`` ran at most once, and only where its very call was approved."""
    found = [f"M4 stamp {key} ran {n} times" for key, n in Counter(stamped).items() if n > 1]
    found += [f"M4 stamp {key} ran without an approval" for key in dict.fromkeys(stamped)
              if key not in approved]
    return found

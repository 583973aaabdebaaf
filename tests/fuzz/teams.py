"""The team fuzzer: random teams of agents (agents called as tools at random depths, handoffs,
failing members, cancels and deadlines landing inside members, guardrails that trip, halt or
raise), run through the public API,
checked against the promises a single run keeps.

    python -m tests.fuzz.teams --runs 2000 [--seed 0] [--show]

Invariants, for the root run and every run in ``result.runs``:
  T1 every history is one a provider accepts (every call id answered once, in order): the
     ``ScriptedModel`` each agent runs on rejects any request that breaks it, and the final
     histories are checked again;
  T2 usage adds up exactly: a run's usage is its steps' plus the runs nested under its calls;
  T3 every run ended: a termination, a finished trace status;
  T4 the run ends with a result, an ``AgentError`` carrying one, or ``CancelledError`` when
     the test cancelled its task; never another exception, never a hang;
  T5 the root's tool-call budget bounds the team: tools ran (agents called included) at
     most ``max_tool_calls`` times.

Approvals inside the team: some agents have ``danger`` (``requires_approval``) and some an
approval policy that approves, denies or defers at random, so calls wait for a person at any
depth and the whole team pauses. A paused team's snapshot goes through JSON and is resumed
with random answers (approve or deny each pending call), now and then under a cancelled
token, and now and then replayed after its resume; for every pause and resume:
  T6 an approved side effect runs at most once, and only if a policy or a person approved
     that very call (run and call id); a denied or unanswered call never runs;
  T7 a replayed snapshot raises ``SnapshotConsumed`` and runs nothing;
  T8 a paused result waits on something: a pending request for each paused run of the team,
     each naming its run (``run_id``) and, inside a member, the calls that lead to it;
  T9 ``result.runs`` lists every agent's run nested in the trace, once, a resumed run's
     included (the members that ended before its pause too).

Now and then the task of a run or of a resume is cancelled: at once or a little later, or,
for a resume, as the resumed run is announced (``on_resume``), before any paused member goes
on. The result the root's ``on_failure`` was handed is then checked like any other (T1-T3,
T9: every paused member's run closed, cancelled, and listed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolcycle import (
    Agent,
    AgentError,
    Approve,
    CancelToken,
    Defer,
    Deny,
    Limits,
    Message,
    RunContext,
    RunResult,
    SnapshotConsumed,
    Trip,
    Usage,
    input_guardrail,
    output_guardrail,
    tool,
    tool_guardrail,
)
from toolcycle.models.base import ModelSettings
from toolcycle.testing import HistoryChecker, ScriptedModel, call
from toolcycle.tracing.trace import Trace


@dataclass
class Team:
    """One drawn team and what its run did."""

    seed: int
    root: Agent[Any, Any]
    limits: Limits
    token: CancelToken
    cancel_task_after: float | None
    features: set[str] = field(default_factory=set)
    ran: list[str] = field(default_factory=list)  # every plain tool run started
    members: set[str] = field(default_factory=set)  # the run ids of every member run
    rng: random.Random = field(default_factory=random.Random)
    #: (run id, call id) of every ``danger`` call that ran, and of every one approved (by a
    #: policy or a person); the problems found across pauses and resumes (T6-T8).
    dangers: list[tuple[str, str]] = field(default_factory=list)
    approved: set[tuple[str, str]] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    #: The root's run id; the results its ``on_failure`` was handed (the last is checked when
    #: the test cancelled a task, T4); how many resumes ran, and whether one was cancelled.
    run_id: str = field(default_factory=lambda: f"team-{uuid.uuid4().hex[:12]}")
    failures: list[RunResult[Any]] = field(default_factory=list)
    resumes: int = 0
    resume_cancelled: bool = False

    def failed(self, event: Any) -> None:
        if event.result is not None and event.result.run_id == self.run_id:
            self.failures.append(event.result)


def _script(rng: random.Random, team: Team, tools: list[str], handoffs: list[str],
            depth: int) -> Any:
    """A model that calls what it has at random, answers now and then, fails rarely."""
    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        choice = settings.tool_choice
        offered = [t.name for t in settings.tools]
        if choice == "none" or not offered:
            return rng.choice(["an answer", "done", ""])
        roll = rng.random()
        if roll < 0.04:
            team.features.add("model_error")
            raise ConnectionError("the fuzzed model failed")
        if choice == "auto" and roll < 0.3:
            return rng.choice(["an answer", "final words", ""])
        names = [n for n in offered if n in tools or n in handoffs] or offered
        if choice not in ("auto", "required") and choice in offered:
            names = [choice]
        picks = [rng.choice(names) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        return [call(n, _arguments(rng, n)) for n in picks]
    return reply


def _arguments(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "echo":
        return {"text": rng.choice(["a", "b", "a"])}
    if name == "danger":
        return {"what": rng.choice(["x", "y"])}
    if name.startswith("transfer_to_") or name in ("boom", "stop_everything", "nap"):
        return {}
    return {"input": rng.choice(["task one", "task two"])}


def build(seed: int) -> Team:
    rng = random.Random(seed)
    token = CancelToken()
    limits = Limits(
        max_iterations=rng.choice([None, 2, 4, 8]),
        max_tool_calls=rng.choice([None, None, 3, 6]),
        timeout=rng.choice([None, None, None, 0.05, 0.3]),
        max_total_tokens=rng.choice([None, None, 400]),
        on_limit=rng.choice(["final_answer", "final_answer", "partial", "error"]),
    )
    team = Team(seed, None, limits, token,  # type: ignore[arg-type]
                rng.choice([None, None, None, 0.0, 0.01]), rng=rng)

    @tool(requires_approval=True)
    def danger(ctx: RunContext[Any], what: str) -> str:
        """A side effect that needs a person's yes."""
        team.ran.append("danger")
        team.dangers.append((ctx.run_id, str(ctx.tool_call_id)))
        return f"did {what}"

    def policy(request: Any, ctx: Any) -> Any:
        """Approves, denies or defers at random (what it approves is noted for T6)."""
        roll = rng.random()
        if roll < 0.4:
            team.approved.add((request.run_id, str(request.call_id)))
            return Approve()
        team.features.add("policy_defer" if roll < 0.8 else "policy_deny")
        return Defer() if roll < 0.8 else Deny("the fuzzed policy says no")

    @tool
    def echo(text: str) -> str:
        """Echo."""
        team.ran.append("echo")
        return text

    @tool
    def boom() -> str:
        """Fails."""
        team.ran.append("boom")
        raise RuntimeError("boom")

    @tool
    async def nap() -> str:
        """Sleeps a little."""
        team.ran.append("nap")
        await asyncio.sleep(rng.choice([0.0, 0.005, 0.05]))
        return "rested"

    @tool
    def stop_everything() -> str:
        """Cancels the whole team's run (from inside whichever agent calls it)."""
        team.ran.append("stop_everything")
        team.features.add("cancel_inside")
        token.cancel("a member cancelled the team")
        return "stopping"

    plain = [echo, boom, nap] + ([stop_everything] if rng.random() < 0.3 else [])
    if rng.random() < 0.6:
        plain.append(danger)

    def guards() -> list[Any]:
        """Guardrails at random: tool ones that block, withhold or halt now and then, an
        input one that trips rarely, an output one (sync or async, some that raise)."""
        chosen: list[Any] = []
        odds = rng.random()

        def verdict(ctx: Any, value: Any) -> Any:
            roll = rng.random()
            if roll < odds * 0.2:
                team.features.add("guardrail_trip")
                return Trip("fuzzed trip", halt=rng.random() < 0.3)
            if roll < odds * 0.25:
                raise ValueError("a fuzzed guardrail failed")
            return None

        async def slow_verdict(ctx: Any, value: Any) -> Any:
            await asyncio.sleep(rng.choice([0.0, 0.002]))
            return verdict(ctx, value)

        for kind in ("arguments", "result"):
            if rng.random() < 0.3:
                chosen.append(tool_guardrail(on=kind)(rng.choice([verdict, slow_verdict])))
        if rng.random() < 0.15:
            chosen.append(input_guardrail(beside=rng.random() < 0.5)(slow_verdict))
        if rng.random() < 0.15:
            chosen.append(output_guardrail(verdict))
        if chosen:
            team.features.add("guardrails")
        return chosen

    def agent(depth: int, index: int) -> Agent[Any, Any]:
        tools: list[Any] = [t for t in plain if rng.random() < 0.6]
        members = []
        if depth < 3:
            for n in range(rng.choice([0, 1, 1, 2])):
                member = agent(depth + 1, index * 3 + n)
                members.append(member)
                team.features.add(f"depth_{depth + 1}")
        tools += [m.as_tool(concurrent=rng.random() < 0.3) for m in members]
        handoffs = []
        if depth < 3 and rng.random() < 0.3:
            handoffs.append(agent(depth + 1, index * 3 + 2))
            team.features.add("handoff")
        name = f"a{depth}_{index}"
        own = Limits(max_iterations=rng.choice([None, 1, 3]),
                     on_limit=rng.choice([None, "error", "partial"]),
                     max_attempts=rng.choice([None, 1]))
        tool_names = [t.name for t in tools]
        return Agent(ScriptedModel(_script(rng, team, tool_names,
                                           [f"transfer_to_{h.name}" for h in handoffs], depth)),
                     f"You are {name}.", tools, name=name, limits=own, handoffs=handoffs,
                     guardrails=guards(), approval=policy if rng.random() < 0.3 else None,
                     callbacks={"on_run_start": lambda e: _count(team, e)})
    team.root = agent(0, 0)
    return team


def _count(team: Team, event: Any) -> None:
    """A member's run started (each agent's callbacks and its callers' hear it: a set)."""
    if event.parent_call_id is not None:
        team.members.add(event.run_id)


async def run_team(team: Team) -> tuple[RunResult[Any] | None, BaseException | None]:
    """The team's run, then its resumes while it pauses (at most four)."""
    task = asyncio.ensure_future(team.root.run("fuzz the team", cancel_token=team.token,
                                               limits=team.limits, run_id=team.run_id,
                                               callbacks={"on_failure": team.failed}))
    if team.cancel_task_after is not None:
        team.features.add("task_cancel")
        await asyncio.sleep(team.cancel_task_after)
        task.cancel()
    try:
        result = await asyncio.wait_for(task, 20)
    except BaseException as exc:  # checked below (T4)
        return None, exc
    for _ in range(4):
        if result.status != "paused":
            break
        try:
            result = await _resume(team, result)
        except BaseException as exc:
            return None, exc
    return result, None


async def _resume(team: Team, paused: RunResult[Any]) -> RunResult[Any]:
    """Answer a paused team at random and resume it from its snapshot (through JSON): now and
    then under a cancelled token, now and then replayed afterwards (T7)."""
    rng = team.rng
    team.features.add("paused")
    _check_paused(team, paused)
    snapshot = json.loads(json.dumps(paused.snapshot))
    answers = []
    for request in paused.pending_approvals:
        if request.via:
            team.features.add("paused_in_member")
        if rng.random() < 0.6:
            team.approved.add((request.run_id, str(request.call_id)))
            answers.append(request.approve())
        else:
            answers.append(request.deny("the fuzzed person says no"))
    token = team.token
    if not token.cancelled and rng.random() < 0.1:
        team.features.add("resume_cancelled")
        token = CancelToken()
        token.cancel("the person walked away")
    announced = asyncio.Event()  # the root's on_resume: the snapshot is claimed
    drawn = random.Random(f"resume-task:{team.seed}:{team.resumes}")  # (team.rng's draws stay)
    cancel = drawn.choice([None] * 8 + ["announced", "soon"])
    team.resumes += 1

    async def on_resume(event: Any) -> None:
        if event.run_id == paused.run_id and not announced.is_set():
            announced.set()
            if cancel == "announced":  # held: the test cancels the task here
                await asyncio.sleep(3600)

    task = asyncio.ensure_future(team.root.resume(
        snapshot, answers, cancel_token=token,
        callbacks={"on_resume": on_resume, "on_failure": team.failed}))
    try:
        if cancel is not None:
            await _cancel_resume(team, task, announced, cancel, drawn.choice([0, 0.002, 0.01]))
        return await asyncio.wait_for(task, 20)
    finally:
        # a replay, after the resume (once it claimed the snapshot: a resume cancelled before
        # it did leaves the snapshot to be resumed)
        if rng.random() < 0.2 and announced.is_set():
            team.features.add("replay")
            ran = list(team.ran)
            try:
                await team.root.resume(snapshot, answers)
                team.problems.append("T7 a replayed snapshot was resumed again")
            except SnapshotConsumed:
                pass
            except Exception as exc:
                team.problems.append(f"T7 a replay raised {type(exc).__name__}: {exc}")
            if team.ran != ran:
                team.problems.append(f"T7 a replay ran {team.ran[len(ran):]}")


async def _cancel_resume(team: Team, task: asyncio.Future[Any], announced: asyncio.Event,
                         when: str, delay: float) -> None:
    """Cancel the resume's task as it is announced (before any paused member goes on), or
    soon after it started (anywhere in the resumed team)."""
    if when == "announced":
        waiting = asyncio.ensure_future(announced.wait())
        await asyncio.wait({task, waiting}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
    else:
        await asyncio.sleep(delay)
    if task.cancel():
        team.resume_cancelled = True
        team.features.add(f"resume_task_cancel_{when}")


def _check_paused(team: Team, paused: RunResult[Any]) -> None:
    """T8: the paused team waits on requests, each naming its run and the way to it."""
    requests = paused.pending_approvals
    if not requests or paused.snapshot is None:
        team.problems.append("T8 a paused result with nothing pending or no snapshot")
    waiting = {r.run_id for r in requests}
    for run in (paused, *paused.runs):
        if run.status == "paused" and not run.pending_approvals:
            team.problems.append(f"T8 {run.agent_name} paused on nothing")
    for request in requests:
        if request.run_id != paused.run_id and not request.via:
            team.problems.append(f"T8 {request.call_id} of run {request.run_id}: no via")
    if paused.run_id not in waiting and not any(r.via for r in requests):
        team.problems.append("T8 the paused run waits on no call of its own nor a member's")


def nested_usage(trace: Trace) -> Usage:
    """A run's own steps plus, recursively, the runs nested under its calls (T2)."""
    total = trace.own_usage
    for record in trace.tool_calls:
        if record.run is not None:
            total.add(nested_usage(record.run))
    return total


def check(team: Team, result: RunResult[Any] | None, error: BaseException | None
          ) -> list[str]:
    found: list[str] = []
    found = _check_dangers(team)
    if isinstance(error, TimeoutError):
        return [*found, "T4 the team's run did not end within 20 s"]
    if error is not None and not isinstance(error, AgentError | asyncio.CancelledError):
        return [*found, f"T4 undocumented exception {type(error).__name__}: {error}"]
    if isinstance(error, asyncio.CancelledError):
        if team.cancel_task_after is None and not team.resume_cancelled:
            found.append("T4 CancelledError although nobody cancelled the task")
        if not team.failures:  # cancelled before the run began (or once it had ended)
            return found
        result = team.failures[-1]  # what the root's on_failure was handed
    elif isinstance(error, AgentError):
        if error.result is None:
            return [f"T4 {error.code} carries no result"]
        result = error.result
    assert result is not None
    for run in (result, *result.runs):
        try:
            if run.status != "paused":  # (a paused run's last calls wait for their answers)
                HistoryChecker("both").check(run.messages)
        except Exception as exc:
            found.append(f"T1 {run.agent_name}: {exc}")
        if nested_usage(run.trace) != run.usage or run.trace.usage != run.usage:
            found.append(f"T2 {run.agent_name}: usage {run.usage} != its steps and members' "
                         f"{nested_usage(run.trace)}")
        if run.termination is None or run.trace.status == "running":
            found.append(f"T3 {run.agent_name} did not end")
    listed = [run.run_id for run in result.runs]
    if sorted(listed) != sorted(nested_ids(result.trace)):
        found.append(f"T9 result.runs {len(listed)} runs, the trace nests "
                     f"{len(nested_ids(result.trace))}")
    budget = team.limits.max_tool_calls
    used = len(team.ran) + len(team.members)
    if budget is not None and used > budget:
        found.append(f"T5 {used} tool runs under max_tool_calls={budget}: {team.ran}, "
                     f"{len(team.members)} members")
    return found


def nested_ids(trace: Trace) -> list[str]:
    """The run ids nested under a trace's calls, however deep (T9)."""
    found = []
    for record in trace.tool_calls:
        if record.run is not None:
            found += [record.run.run_id, *nested_ids(record.run)]
    return found


def _check_dangers(team: Team) -> list[str]:
    """T6 (and what the pauses and resumes found: T7, T8)."""
    found = list(team.problems)
    twice = [key for key, n in Counter(team.dangers).items() if n > 1]
    if twice:
        found.append(f"T6 approved side effects ran more than once: {twice}")
    unapproved = [key for key in team.dangers if key not in team.approved]
    if unapproved:
        found.append(f"T6 side effects ran without an approval: {unapproved}")
    return found


def run_seed(seed: int) -> tuple[list[str], set[str], str]:
    team = build(seed)
    result, error = asyncio.run(run_team(team))
    outcome = "returned" if error is None else getattr(error, "code", type(error).__name__)
    return check(team, result, error), team.features, str(outcome)


def run_many(seeds: list[int]) -> tuple[list[tuple[int, list[str]]], Counter[str]]:
    bad, seen = [], Counter[str]()
    for seed in seeds:
        violations, features, outcome = run_seed(seed)
        seen.update(features)
        seen[f"outcome:{outcome}"] += 1
        if violations:
            bad.append((seed, violations))
    return bad, seen


def _main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    bad, seen = run_many(list(range(args.seed, args.seed + args.runs)))
    print(dict(sorted(seen.items())))
    for seed, violations in bad:
        print(f"seed {seed}: {violations}")
        if args.show:
            team = build(seed)
            result, error = asyncio.run(run_team(team))
            trace: Trace | None = (result or getattr(error, "result", None) or _Nil).trace
            print(trace.render() if trace else error)
    sys.exit(1 if bad else 0)


class _Nil:
    trace = None


if __name__ == "__main__":
    _main()

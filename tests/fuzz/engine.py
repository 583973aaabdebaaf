"""The run engine's invariant fuzzer: generate a scenario per seed, run it, check invariants.

    python -m tests.fuzz.engine --runs 100000 [--seed 0] [--workers 2] [--show] [--team-approvals]

Drives only the public API (``Agent``, ``Limits``, ``CancelToken``, ``Output``, ``tool``,
``toolcycle.testing``), the way a user would, and prints what the runs exercised (scenario
features, termination reasons, error codes) and every violation with its seed. Reproduce one
with ``--seed S --runs 1 --show``. Scenarios are drawn in :mod:`tests.fuzz.scenario`, tools
live in :mod:`tests.fuzz.tools`, the checks in :mod:`tests.fuzz.invariants`. A fifth of the
seeds give the agent a team (:mod:`tests.fuzz.members`): other agents among its tools, a
handoff target, priced models and now and then a ``max_cost`` budget; every member's run is
checked too (M1-M3), and usage, cost included, adds up exactly across them. A team drawn with
approvals pauses inside its members too, and is resumed with answers bound to the run that
asked, now and then cancelled as it resumes, now and then replayed (M4, invariant 10).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import os
import random
import re
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from toolcycle import (
    Agent,
    AgentError,
    CancelToken,
    Limits,
    Message,
    Output,
    RunContext,
    ValidationFailed,
)
from toolcycle.events import AttemptEnd, FinalResult, RunFailure, RunSuccess

from . import members
from .approvals import (
    MAX_RESUMES,
    approval_setup,
    claimed,
    person_decisions,
    replay,
    replay_drawn,
    resume_cancel_drawn,
)
from .invariants import Observation, check
from .offers import FuzzOffer, first_call_drawn, head_start_drawn, offers_drawn
from .scenario import (
    HOOKS,
    Answer,
    FuzzModel,
    ModelBehaviour,
    Scenario,
    approval_of,
    generate,
)
from .tools import ACTIVE, ALL_TOOLS, ENTERED, STOPPED, add_measures, idle_threads_busy

#: The share of runs with grounding on (the local models' default): its re-asks, and its
#: refusal of a call over figures from nowhere, under random replies. Drawn from the seed
#: apart from the scenario, so every scenario stays what it was.
GROUNDING_SHARE = 0.25


def grounding_drawn(seed: int) -> bool:
    """Whether the agent of ``seed``'s scenario has grounding on."""
    return random.Random(f"grounding:{seed}").random() < GROUNDING_SHARE

HANG_S = 10.0
GRACE_S = 0.3  # a sync tool may block 20 ms; after this long its thread must be idle


@dataclass
class Report:
    """What one seed produced, small enough to send back from a worker process."""

    seed: int
    features: list[str]
    outcome: str  # "returned", an error code, or an exception's class name
    termination: str
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


# -- one run -------------------------------------------------------------------------------


def scenario_of(seed: int, offer_focus: bool = False) -> Scenario:
    """The scenario of ``seed`` (scenario.generate), with its team where one is drawn."""
    scenario = generate(seed, offer_focus)
    if (team := members.drawn(seed)) is not None:  # with approvals too: they pause in members
        count, handoff, budget = team
        scenario.members = tuple(f"helper_{i}" for i in range(count))
        if budget is not None:
            scenario.run_limits["max_cost"] = budget
            scenario.features.add("limit:max_cost")
        scenario.handoff = handoff
        scenario.parallel = False  # members' events must not interleave (members.own_events)
        scenario.features |= {"team", *(["handoff"] if handoff else [])}
        if scenario.approval is not None:
            scenario.resume_cancel = resume_cancel_drawn(seed)
            scenario.features.add("team:approval")
    return scenario


def team_with_approvals(seed: int) -> bool:
    """Whether ``seed``'s scenario gives the agent a team and approvals (``--team-approvals``)."""
    return approval_of(seed) is not None and members.drawn(seed) is not None


def run_seed(seed: int, offer_focus: bool = False) -> Report:
    """Generate, run and check the scenario of ``seed`` (:func:`scenario_of`)."""
    started = time.perf_counter()
    scenario = scenario_of(seed, offer_focus)
    try:
        obs = asyncio.run(_drive(scenario))
        violations = check(obs)
        final, error = obs.final, obs.error
        resumed = {"approval:resumed"} if obs.answers else set()
        resumed |= {"approval:replayed"} if obs.replayed else set()
        resumed |= obs.seen
        if obs.answers and scenario.resume_cancel is not None:
            resumed.add(f"team:resume_cancel:{scenario.resume_cancel}")
        if final is not None:  # what the team did, not only what was drawn
            resumed |= {"team:member_ran"} if final.runs else set()
            resumed |= {"team:handed_off"} if final.trace.handoffs else set()
        del obs
        if scenario.streaming or scenario.cancel is not None:
            gc.collect()  # a task dropped with its exception unread logs it now
        violations += [f"5 {line}" for line in _LOOP_ERRORS]
    except Exception as exc:  # the fuzzer's own failure: show it as a violation, loudly
        line = traceback.format_exc(limit=-3).strip().splitlines()[-1]
        return Report(seed, sorted(scenario.features), "fuzzer-crash", "-",
                      [f"0 the fuzzer itself failed: {type(exc).__name__}: {line}"])
    termination = (f"{final.termination.reason}/{final.termination.action}"
                   if final is not None and final.termination is not None else "-")
    return Report(seed, sorted(scenario.features | resumed), _outcome(error, violations),
                  termination, violations, time.perf_counter() - started)


def _outcome(error: BaseException | None, violations: list[str]) -> str:
    if any("did not end" in v for v in violations):
        return "hung"
    if error is None:
        return "returned"
    code = getattr(error, "code", None)
    return str(code) if code else type(error).__name__


#: What the event loop reported during the run (e.g. "Task exception was never retrieved").
_LOOP_ERRORS: list[str] = []


def _record_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    error = context.get("exception")
    what = f"{type(error).__name__}: {error}" if error is not None else ""
    _LOOP_ERRORS.append(" ".join(f"event loop reported: {context.get('message')} — {what}"
                                 .split())[:200])


async def _drive(s: Scenario) -> Observation:
    busy_before = idle_threads_busy()
    _LOOP_ERRORS.clear()
    asyncio.get_running_loop().set_exception_handler(_record_loop_error)
    obs = Observation(s)
    STOPPED.update(by=None, token=None)
    behaviour = ModelBehaviour(s)
    model = FuzzModel(behaviour, wire="both")
    if s.members:
        model.price = members.LEAD_PRICE
    model.latency_s = s.latency_ms / 1000.0
    history = await _prior_history(s, model, behaviour)
    ENTERED.clear()  # the earlier conversation's calls are not this run's
    uses_token = s.pass_token or (s.cancel is not None and s.cancel.how.startswith(
        ("token", "thread")))
    token = CancelToken() if uses_token else None
    behaviour.token = token
    holder: dict[str, Any] = {"task": None, "by": None}

    def cancel_task(from_callback: bool = False) -> None:
        task = holder["task"]
        if task is not None and task.cancel():
            obs.task_cancelled = True
            # From a sync callback (inside the run's task, or inside a stream's run task while
            # its consumer waits) the cancel lands at the next suspension; a run that finishes
            # without one keeps its outcome, as asyncio defines.
            # A stream's consumer is cancelled, not its run task: the run may finish first.
            # An async callback that raises before it awaits (the failing hook) acts as a
            # sync one: nothing suspends, so the cancel lands later.
            raises_first = s.failing_hook is not None and s.failing_hook == (
                s.cancel.hook if s.cancel is not None else None)
            sync_callback = from_callback and (not s.async_callbacks or raises_first)
            # Once the run's outcome is decided (an output accepted, or a failure being closed)
            # the cancel still propagates, but it does not rewrite the outcome: the trace says
            # success or failure, with its reason (docs/loop.md, "Cancellation").
            decided = any(_decides(event) for event in obs.events)
            obs.cancel_may_be_late = (obs.reported is not None or sync_callback or s.streaming
                                      or decided)

    def cancel_token(by: str) -> None:
        if token is not None and not token.cancelled:
            holder["by"] = holder["by"] or by
            token.cancel(f"fuzz cancel ({by})")

    # Each run has an id of its own, as real runs do: a seed runs in both campaigns and in
    # every invocation, and a reused id would find its pause already claimed in the ledger of
    # consumed snapshots (a member's pause uses the shared one) or another run's stored trace.
    run_id = obs.run_id = f"fuzz-{s.seed}-{uuid.uuid4().hex[:12]}"
    store_path = _store_path(s.seed) if s.trace_store else None
    tools, policy = approval_setup(s, obs.approved)
    grounded = grounding_drawn(s.seed)
    if grounded:  # its ``add`` takes measures: calls over figures from nowhere refused once
        tools = [add_measures if t is ALL_TOOLS.get("add") else t for t in tools]
    output = _output(s, obs)
    handoffs = []
    members.STAMPED.clear()
    if s.members or s.handoff:  # a team (tests/fuzz/members.py)
        tools += members.build(s.seed, len(s.members), s.approval is not None).tools
        if s.handoff:
            handoffs.append(members.handoff_target(model, tools, output, policy))
    # the library's own stand-ins refuse tools that need approval: offers only without it
    # the answer request: with the first call (as before the offers campaign), or in it
    first_call = first_call_drawn(s.seed)
    offer = (FuzzOffer(first_call, answer=first_call or s.offer_focus,
                       head_start=first_call and head_start_drawn(s.seed))
             if s.approval is None and offers_drawn(s.seed) else None)
    agent = Agent(
        model, "You are being fuzzed.", tools,
        output=output, limits=Limits(**s.agent_limits) if s.agent_limits else None,
        parallel_tools=s.parallel, trace_store=store_path or False, approval=policy,
        tool_selection=offer, handoffs=handoffs, grounding=grounded,
        # this process's own ledger of consumed snapshots, not the user's
        snapshot_ledger=_store_path(s.seed, "ledger"),
    )
    callbacks = _callbacks(s, obs, cancel_task, cancel_token)

    def resume_token() -> CancelToken | None:
        """A team drawn to resume cancelled ("token") resumes the first time so."""
        if s.resume_cancel != "token" or len(obs.answers) != 1:
            return token
        if token is not None:
            cancel_token("resume")
            return token
        holder["by"] = "resume"
        cancelled = CancelToken()
        cancelled.cancel("fuzz cancel (resume)")
        return cancelled

    async def replayed(snapshot: Any, answers: Any, error: BaseException | None) -> None:
        if replay_drawn(s.seed, len(obs.answers)) and claimed(error):
            obs.replayed += 1
            obs.replays += await replay(agent, snapshot, answers, members.STAMPED)

    options: dict[str, Any] = {
        "message_history": history, "limits": Limits(**s.run_limits), "cancel_token": token,
        "callbacks": callbacks, "run_id": run_id,
    }
    if s.cancel is not None and s.cancel.how == "token_before":
        cancel_token("loop")

    async def go() -> Any:
        if not s.streaming:
            result = await agent.run("fuzz the loop", **options)
        else:
            obs.stream_events = []
            result = await _streamed(agent.stream("fuzz the loop", **options), obs)
        # a paused run is resumed with the fuzzed person's answers, as often as it pauses
        while result is not None and result.paused and len(obs.answers) < MAX_RESUMES:
            answers, keyed = person_decisions(s.seed, len(obs.answers),
                                              result.pending_approvals)
            if any(r.via for r in result.pending_approvals):
                obs.seen.add("team:paused_in_member")
            obs.answers.append(keyed)
            # the snapshot goes through JSON every other time, as it would between processes
            snapshot = result.snapshot if len(obs.answers) % 2 else json.dumps(result.snapshot)
            extra = {"cancel_token": resume_token(), "callbacks": callbacks}
            try:
                if s.streaming:
                    result = await _streamed(agent.resume_stream(snapshot, answers, **extra),
                                             obs)
                else:
                    result = await agent.resume(snapshot, answers, **extra)
            except AgentError as error:  # (a replay after a resume, however it ended)
                await replayed(snapshot, answers, error)
                raise
            await replayed(snapshot, answers, None)
        return result

    loop = asyncio.get_running_loop()
    task = holder["task"] = asyncio.ensure_future(go())
    timer: threading.Timer | None = None
    handle = None
    if s.cancel is not None:
        delay = s.cancel.delay_ms / 1000.0
        if s.cancel.how == "task_after":
            handle = loop.call_later(delay, cancel_task)
        elif s.cancel.how == "token_after":
            handle = loop.call_later(delay, cancel_token, "loop")
        elif s.cancel.how == "thread_after":
            timer = threading.Timer(delay, cancel_token, args=("thread",))
            timer.start()
    done, _ = await asyncio.wait({task}, timeout=HANG_S)
    if not done:
        obs.hung = True
        task.cancel()
    else:
        try:
            obs.result = task.result()
        except BaseException as exc:  # every outcome is checked
            obs.error = exc
    _validator_bug_seen(obs)
    current = asyncio.current_task()
    obs.leftover_tasks = [repr(t.get_coro())[:80] for t in asyncio.all_tasks()
                          if t is not current and not t.done()]
    obs.async_bodies_after = ACTIVE["async"]
    if handle is not None:
        handle.cancel()
    if timer is not None:
        timer.cancel()
        timer.join()
    obs.token_cancelled_by = holder["by"] or STOPPED["by"]
    obs.requests_after_cancel = behaviour.requests_after_cancel
    # Threads busy before this run (a test run earlier in the same process may have left a
    # sync tool blocking) are not this run's: only the excess counts.
    deadline = time.monotonic() + GRACE_S
    while (ACTIVE["sync"] or idle_threads_busy() > busy_before) and time.monotonic() < deadline:
        await asyncio.sleep(0.002)
    obs.sync_bodies_after = ACTIVE["sync"]
    obs.entered = dict(ENTERED)
    obs.stamped = list(members.STAMPED)
    obs.pool_busy_after = max(0, idle_threads_busy() - busy_before)
    if store_path is not None:
        obs.stored_status = _stored_status(store_path, run_id)
    return obs


async def _streamed(stream: Any, obs: Observation) -> Any:
    async for event in stream:
        assert obs.stream_events is not None
        obs.stream_events.append(event)
    return stream.result


def _validator_bug_seen(obs: Observation) -> None:
    error = obs.error
    if isinstance(error, AgentError) and isinstance(error.__cause__, FuzzValidatorBug):
        obs.validator_bug_raised = True


# -- pieces of a run -----------------------------------------------------------------------


class FuzzValidatorBug(KeyError):
    """A validator that raises something other than ValidationFailed (a bug in user code)."""


def _output(s: Scenario, obs: Observation) -> Any:
    if s.output_mode == "text":
        return None
    if s.output_mode == "model":
        return Answer

    def not_multiple_of_3(answer: Answer, ctx: RunContext[Any]) -> None:
        if answer.value % 3 == 0:
            raise ValidationFailed(f"{answer.value} is a multiple of 3")

    async def small_enough(answer: Answer, ctx: RunContext[Any]) -> None:
        await asyncio.sleep(0)
        if answer.value > 900:
            raise ValidationFailed(f"{answer.value} is too large")

    def buggy(answer: Answer, ctx: RunContext[Any]) -> None:
        if answer.value % 50 == 13:
            obs.validator_bug_raised = True
            raise FuzzValidatorBug("validator bug")

    validators: list[Any] = [not_multiple_of_3, small_enough]
    if s.buggy_validator:
        validators.append(buggy)
    if s.output_mode == "validators":
        return Output(Answer, validators=validators)

    def preview(answer: Answer, ctx: RunContext[Any]) -> str:
        if answer.value % 10 == 7:
            raise RuntimeError("preview handler failed")
        return f"Answer: {answer.value} ({answer.note})"

    async def apreview(answer: Answer, ctx: RunContext[Any]) -> str:
        await asyncio.sleep(0)
        return preview(answer, ctx)

    return Output(Answer, validators=validators, reflect=apreview if s.async_preview else preview)


def _decides(event: Any) -> bool:
    """An event emitted only once the run's outcome is decided."""
    if isinstance(event, AttemptEnd):
        return event.error is not None  # the run failed inside this attempt
    return isinstance(event, FinalResult | RunSuccess | RunFailure)


def _callbacks(s: Scenario, obs: Observation, cancel_task: Any, cancel_token: Any) -> Any:
    seen: Counter[str] = Counter()

    def handle(hook: str, event: Any) -> None:
        obs.events.append(event)
        seen[hook] += 1
        if hook in ("on_success", "on_failure", "on_pause"):
            obs.reported = event.result
        plan = s.cancel
        if plan is not None and plan.hook == hook and seen[hook] == plan.nth:
            if plan.how == "token_event":
                cancel_token("loop")
            elif plan.how == "task_event":
                cancel_task(True)
        if (hook == "on_resume" and s.resume_cancel == "task" and seen[hook] == 1
                and event.run_id == obs.run_id):  # before a paused member goes on
            cancel_task(True)
        if hook == s.failing_hook and seen[hook] == 1:
            obs.callback_raises += 1
            raise RuntimeError(f"callback {hook} failed on purpose")

    def sync_callback(hook: str) -> Any:
        return lambda event: handle(hook, event)

    def async_callback(hook: str) -> Any:
        async def callback(event: Any) -> None:
            handle(hook, event)
            await asyncio.sleep(0)
        return callback

    make = async_callback if s.async_callbacks else sync_callback
    # (on_handoff outside HOOKS: drawn from, that list keeps every seed's scenario as it was)
    return {hook: make(hook) for hook in (*HOOKS, "on_pause", "on_resume", "on_handoff")}


async def _prior_history(s: Scenario, model: FuzzModel,
                         behaviour: ModelBehaviour) -> list[Message] | None:
    """The messages of an earlier run, for ``message_history`` (None: a fresh conversation)."""
    if s.prior is None:
        return None
    from toolcycle.testing import call

    from .tools import add, stopper

    if s.prior == "same_model":  # the fuzzed model answers the earlier run too
        replies: list[Any] = [call("add", {"a": 1, "b": 2}), "prior answer"]
        model.script = lambda m, st: replies[len([x for x in m if x.role == "assistant"]) % 2]
        runner = model
    else:
        script: list[Any] = [call("add", {"a": 1, "b": 2}), "prior answer"]
        if s.prior == "cancelled":
            script = [[call("add", {"a": 1, "b": 2}), call("stopper"),
                       call("add", {"a": 3, "b": 4})]]
        runner = FuzzModel(script, wire="both")
    limits = Limits(max_iterations=1, on_limit="error") if s.prior == "failed" else None
    agent = Agent(runner, "An earlier conversation.", [add, stopper], limits=limits)
    try:
        result = await agent.run("earlier question")
        messages = result.messages
    except AgentError as error:
        messages = error.result.messages if error.result is not None else []
    finally:
        model.script = behaviour
        STOPPED.update(by=None, token=None)
    return list(messages) or None


_STORE_DIR: list[str] = []


def _store_path(seed: int, what: str = "traces") -> str:
    if not _STORE_DIR:
        _STORE_DIR.append(tempfile.mkdtemp(prefix="toolcycle-fuzz-"))
    return os.path.join(_STORE_DIR[0], f"{what}-{os.getpid()}.sqlite")


def _stored_status(path: str, run_id: str) -> str:
    from toolcycle.tracing.store import TraceStore

    with TraceStore(path) as store:
        trace = store.get(run_id)
    return "missing" if trace is None else trace.status


# -- many runs -----------------------------------------------------------------------------


def run_many(seeds: Iterable[int], workers: int = 1, offer_focus: bool = False
             ) -> list[Report]:
    """Run every seed, in worker processes when ``workers > 1``."""
    seeds = list(seeds)
    if workers <= 1:
        # run_seed collects garbage after many runs; in a pytest process the heap already holds
        # every earlier test's objects (the BFCL data among them), which made each collection
        # ~100 ms. Frozen, they are left out: a collection sees only what the fuzz made.
        gc.collect()
        gc.freeze()
        try:
            return [run_seed(seed, offer_focus) for seed in seeds]
        finally:
            gc.unfreeze()
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        return list(pool.imap_unordered(partial(run_seed, offer_focus=offer_focus), seeds,
                                        chunksize=64))


def violation_class(reason: str) -> str:
    """A reason without its ids, numbers and quoted details: the class it belongs to.

    Reasons put run-specific details after " — ", which the class leaves out."""
    number, _, text = reason.partition(" ")
    text = text.split(" — ")[0]
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\[[^\]]*\]|\{[^}]*\}", "[…]", text)
    text = re.sub(r"\d+", "N", text)
    return f"{number} {text[:150]}"


def summary(reports: list[Report], elapsed: float, show_all: bool = True) -> str:
    lines = [f"{len(reports)} runs in {elapsed:.1f} s "
             f"({len(reports) / max(elapsed, 1e-9):.0f} runs/s)"]
    sections = [
        ("scenario features", Counter(f for r in reports for f in r.features)),
        ("outcomes", Counter(r.outcome for r in reports)),
        ("terminations", Counter(r.termination for r in reports)),
    ]
    for title, counts in sections:
        lines.append(f"\n{title}:")
        lines.extend(f"  {count:7d}  {name}" for name, count in sorted(counts.items()))
    classes: dict[str, list[int]] = defaultdict(list)
    for report in reports:
        for reason in dict.fromkeys(violation_class(v) for v in report.violations):
            classes[reason].append(report.seed)
    bad = [r for r in reports if r.violations]
    lines.append(f"\nviolations: {len(bad)} of {len(reports)} runs, {len(classes)} classes")
    for reason, seeds in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(seeds):6d}  {reason}  seeds {sorted(seeds)[:6]}")
    if show_all and bad:
        lines.append("\nevery violation:")
        for report in sorted(bad, key=lambda r: r.seed):
            lines.extend(f"  seed {report.seed}: {v}" for v in report.violations)
    return "\n".join(lines)


def explain(seed: int, offer_focus: bool = False) -> str:
    """One seed in full: its scenario, outcome, history, events and trace, then violations."""
    scenario = scenario_of(seed, offer_focus)
    obs = asyncio.run(_drive(scenario))
    lines = [f"scenario: {asdict(scenario)}", f"error: {obs.error!r}",
             f"playbook offers: {scenario.approval is None and offers_drawn(seed)}",
             f"task cancelled by the test: {obs.task_cancelled}; token cancelled by: "
             f"{obs.token_cancelled_by}"]
    final = obs.final
    if final is not None:
        lines.append(f"termination: {final.termination}; new messages from "
                     f"{final.new_message_index}")
        for index, message in enumerate(final.messages):
            parts = ", ".join(_part(p) for p in message.parts)
            lines.append(f"  [{index}] {message.role}: {parts}")
        lines.append("trace steps:")
        for step in final.trace.steps:
            calls = ", ".join(f"{r.name}[{r.call_id}]" for r in step.tool_calls)
            lines.append(f"  attempt {step.attempt} iteration {step.iteration}: {calls}")
    lines.append("events: " + " ".join(type(e).__name__ for e in obs.events))
    lines.extend(f"VIOLATION {v}" for v in check(obs))
    return "\n".join(lines)


def _part(part: Any) -> str:
    kind = type(part).__name__
    if hasattr(part, "call_id"):
        return f"{kind}({part.call_id}, error={part.is_error}, {part.content[:70]!r})"
    if hasattr(part, "raw_arguments"):
        return f"{kind}({part.id}, {part.name!r}, {part.raw_arguments[:40]!r})"
    return f"{kind}({part.text[:40]!r})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.engine", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--show", action="store_true", help="print each scenario first")
    parser.add_argument("--classes-only", action="store_true",
                        help="list violation classes, not every violation")
    parser.add_argument("--explain", type=int, metavar="SEED",
                        help="run one seed and print its history, events and trace")
    parser.add_argument("--team-approvals", action="store_true",
                        help="run only the seeds of the range that draw a team with approvals "
                        "(pauses inside members, cancelled resumes, replays)")
    parser.add_argument("--offer-focus", action="store_true",
                        help="the offers campaign: where the agent gets the playbook's offers, "
                        "the model calls them under a tool-call budget")
    args = parser.parse_args(argv)
    if args.explain is not None:
        print(explain(args.explain, args.offer_focus))
        return 0
    seeds: Any = range(args.seed, args.seed + args.runs)
    if args.team_approvals:
        seeds = [seed for seed in seeds if team_with_approvals(seed)]
    if args.show:
        for seed in seeds:
            print(f"seed {seed}: {asdict(scenario_of(seed, args.offer_focus))}")
    started = time.perf_counter()
    reports = run_many(seeds, 1 if len(seeds) < 200 else args.workers, args.offer_focus)
    print(summary(reports, time.perf_counter() - started, not args.classes_only))
    return 1 if any(r.violations for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())

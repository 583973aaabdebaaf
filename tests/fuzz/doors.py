"""The approval doors under fuzzing: random answers, replays, concurrent and second-process
resumes (issue 63). Invariants, numbered 20:

- 20a every call id is answered exactly once in every history a run ends with (the scripted
  model also refuses a request whose history breaks that);
- 20b an approved call runs at most once, and exactly once when a resume of its run succeeded;
- 20c a denied call, or a call of a run no resume continued, never runs;
- 20d a replayed answer (another run's, or for other arguments) is refused and runs nothing;
- 20e of the resumes of one snapshot, exactly one continues it; every other raises
  ``SnapshotConsumed`` (``ApprovalMismatch`` for replays), in this process or another.

Each seed draws one paused run A of one to four calls (tools that require approval, sync or
async, and a free one; sequential or ``parallel_tools``; signed or not), a twin run B paused on
the same call ids with other arguments, the person's answers (approve or deny, per call), and
a random order of attacks on A: B's answers replayed onto A, forged digests, concurrent
resumes, sequential replays, and (every ``--child-every``th seed) a resume in a second process.

    python -m tests.fuzz.doors --runs 3000 [--child-every 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcycle import (
    Agent,
    Approval,
    ApprovalMismatch,
    RunResult,
    SnapshotConsumed,
    tool,
)
from toolcycle.testing import ScriptedModel, call

#: Every side effect of this process: the ``ref`` of each call that ran.
EFFECTS: list[str] = []


@tool(requires_approval=True)
async def pay(amount: int, ref: str) -> str:
    """Pay an amount (a side effect a person approves)."""
    await asyncio.sleep(0)
    EFFECTS.append(ref)
    return f"paid {amount}"


@tool(requires_approval=True)
def send(to: str, ref: str) -> str:
    """Send a message (a side effect a person approves)."""
    EFFECTS.append(ref)
    return f"sent to {to}"


@tool
def look(query: str, ref: str) -> str:
    """Look something up (needs no approval)."""
    EFFECTS.append(ref)
    return "found"


KEY = "fuzz-key-" + "k" * 24


def make_agent(ledger: str, signed: bool, parallel: bool, script: list[Any]) -> Agent:
    return Agent(ScriptedModel(script), tools=[pay, send, look], name="doors",
                 parallel_tools=parallel, snapshot_key=KEY if signed else None,
                 snapshot_ledger=ledger)


@dataclass
class Case:
    """One seed's draw."""

    seed: int
    signed: bool
    parallel: bool
    calls: list[tuple[str, dict[str, Any]]]
    approve: dict[int, bool]  # by call index, for the calls that wait
    attacks: list[str]
    violations: list[str] = field(default_factory=list)


def draw(seed: int, child: bool) -> Case:
    rng = random.Random(seed)
    calls = []
    for index in range(rng.randint(1, 4)):
        name = rng.choice(["pay", "send", "look"])
        ref = f"{seed}:A:{index}"
        arguments: dict[str, Any] = ({"amount": rng.randint(1, 9), "ref": ref} if name == "pay"
                                     else {"to": "x", "ref": ref} if name == "send"
                                     else {"query": "q", "ref": ref})
        calls.append((name, arguments))
    attacks = rng.sample(["replay_b", "forge", "concurrent", "replay_after", "bare"],
                         k=rng.randint(1, 5))
    if child:
        attacks.append("child")
    rng.shuffle(attacks)
    return Case(seed, rng.random() < 0.5, rng.random() < 0.5, calls,
                {i: rng.random() < 0.6 for i in range(len(calls))}, attacks)


def _twin(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """Run B: the same tools and call ids, other arguments (another person's calls)."""
    return [(name, {**arguments, "ref": arguments["ref"].replace(":A:", ":B:")})
            for name, arguments in case.calls]


def _answers(result: RunResult[Any], approve: dict[int, bool], index_of: dict[str, int]
             ) -> list[Approval]:
    return [request.approve() if approve[index_of[str(request.call_id)]]
            else request.deny(f"no to {request.call_id}")
            for request in result.pending_approvals]


async def run_case(case: Case, ledger: str, workdir: Path) -> Case:
    EFFECTS.clear()
    script_a = [[call(name, arguments) for name, arguments in case.calls], "done"]
    paused_a = await make_agent(ledger, case.signed, case.parallel, script_a).run("a")
    script_b = [[call(name, arguments) for name, arguments in _twin(case)], "done"]
    paused_b = await make_agent(ledger, case.signed, case.parallel, script_b).run("b")
    index_of = {f"call_{i + 1}": i for i in range(len(case.calls))}
    free = {arguments["ref"] for name, arguments in case.calls if name == "look"}
    if not paused_a.paused:  # nothing waited (only free calls): nothing to attack
        _check_history(case, paused_a)
        return case
    snapshot = json.loads(json.dumps(paused_a.snapshot))
    mine = _answers(paused_a, case.approve, index_of)
    ran_before = set(EFFECTS)  # free calls before the first deferred one ran already
    continued: list[RunResult[Any]] = []

    def resumer() -> Agent:
        return make_agent(ledger, case.signed, case.parallel, ["done"])

    async def attempt(answers: Any, expect: type[Exception] | None) -> None:
        try:
            continued.append(await resumer().resume(snapshot, answers))
        except (SnapshotConsumed, ApprovalMismatch) as exc:
            if expect is not None and not isinstance(exc, expect) and continued == []:
                case.violations.append(f"20d/e {type(exc).__name__} where {expect.__name__} "
                                       "was due")

    for attack in [*case.attacks, "legit", "replay_after"]:
        before = list(EFFECTS)
        if attack == "replay_b" and paused_b.paused:
            await attempt(_answers(paused_b, dict.fromkeys(range(len(case.calls)), True),
                                   index_of), ApprovalMismatch)
            _no_new_effects(case, before, "20d another run's answers ran a call")
        elif attack == "forge":
            forged = [Approval(a.run_id, a.call_id, "0" * 64, True) for a in mine]
            await attempt(forged, ApprovalMismatch)
            _no_new_effects(case, before, "20d answers for other arguments ran a call")
        elif attack == "bare":
            bare = {str(a.call_id): True for a in mine}
            if case.signed:
                await attempt(bare, ApprovalMismatch)
                _no_new_effects(case, before, "20d a bare answer ran a call of a signed run")
        elif attack == "concurrent":
            await asyncio.gather(*(attempt(mine, None) for _ in range(3)))
        elif attack == "child":
            _child_resume(case, snapshot, mine, ledger, workdir)
        else:  # "legit", "replay_after": a resume with the person's own answers
            await attempt(mine, SnapshotConsumed if continued else None)
    winners = len(continued) + _child_outcomes(workdir).count(True)
    if winners != 1:
        case.violations.append(f"20e {winners} resumes continued one snapshot")
    for result in continued:
        _check_history(case, result)
    effects = Counter(EFFECTS) + Counter(_child_effects(workdir))
    for index, (name, arguments) in enumerate(case.calls):
        ref, count = arguments["ref"], effects[arguments["ref"]]
        if count > 1:
            case.violations.append(f"20b {name} [{ref}] ran {count} times")
        needs_yes = name != "look"
        if needs_yes and not case.approve[index] and count:
            case.violations.append(f"20c denied {name} [{ref}] ran")
        if needs_yes and case.approve[index] and count != 1 and _ends_in_success(continued):
            case.violations.append(f"20b approved {name} [{ref}] ran {count} times")
        if ref in free and ref not in ran_before and count != 1 and _ends_in_success(continued):
            case.violations.append(f"20b free {name} [{ref}] ran {count} times")
    for name, arguments in _twin(case):
        if name != "look" and effects[arguments["ref"]]:
            case.violations.append(f"20c {name} of run B, never resumed, ran")
    return case


def _ends_in_success(continued: list[RunResult[Any]]) -> bool:
    return bool(continued) and continued[0].status == "success"


def _no_new_effects(case: Case, before: list[str], what: str) -> None:
    if before != EFFECTS:
        case.violations.append(what)


def _check_history(case: Case, result: RunResult[Any]) -> None:
    calls = Counter(c.id for m in result.messages for c in m.tool_calls)
    answers = Counter(r.call_id for m in result.messages for r in m.results)
    if calls != answers or any(n != 1 for n in answers.values()):
        case.violations.append(f"20a calls {dict(calls)} answered {dict(answers)}")


def _child_resume(case: Case, snapshot: dict[str, Any], answers: list[Approval], ledger: str,
                  workdir: Path) -> None:
    """The same resume in a second interpreter sharing the ledger; its effects go to a file."""
    request = workdir / f"{case.seed}.json"
    request.write_text(json.dumps({"snapshot": snapshot, "signed": case.signed,
                                   "parallel": case.parallel, "ledger": ledger,
                                   "answers": [a.to_dict() for a in answers]}))
    subprocess.run([sys.executable, "-m", "tests.fuzz.doors", "--child", str(request)],
                   check=True, timeout=120, capture_output=True)


def _child_reports(workdir: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in workdir.glob("*.outcome")]


def _child_effects(workdir: Path) -> list[str]:
    return [ref for report in _child_reports(workdir) for ref in report["effects"]]


def _child_outcomes(workdir: Path) -> list[bool]:
    return [bool(report["continued"]) for report in _child_reports(workdir)]


def child(request_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    agent = make_agent(request["ledger"], request["signed"], request["parallel"], ["done"])
    try:
        agent.resume_sync(request["snapshot"],
                          [Approval.from_dict(a) for a in request["answers"]])
        continued = True
    except SnapshotConsumed:
        continued = False
    Path(request_path).with_suffix(".outcome").write_text(json.dumps(
        {"continued": continued, "effects": EFFECTS}))
    return 0


def run_campaign(runs: int, child_every: int, first: int = 0) -> tuple[list[Case], float]:
    started = time.perf_counter()
    cases = []
    with tempfile.TemporaryDirectory(prefix="toolcycle-doors-") as tmp:
        ledger = str(Path(tmp) / "ledger.db")
        for seed in range(first, first + runs):
            workdir = Path(tmp) / str(seed)
            workdir.mkdir()
            case = draw(seed, child_every > 0 and seed % child_every == 0)
            cases.append(asyncio.run(run_case(case, ledger, workdir)))
    return cases, time.perf_counter() - started


def summary(cases: list[Case], elapsed: float) -> str:
    attacks = Counter(a for c in cases for a in c.attacks)
    bad = [c for c in cases if c.violations]
    return (f"{len(cases)} runs in {elapsed:.1f} s, {len(bad)} with violations; attacks: "
            + ", ".join(f"{name} {n}" for name, n in sorted(attacks.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.doors", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--child-every", type=int, default=100,
                        help="every Nth seed also resumes in a second process (0: never)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child)
    cases, elapsed = run_campaign(args.runs, args.child_every, args.seed)
    print(summary(cases, elapsed))
    for case in cases:
        for violation in case.violations:
            print(f"seed {case.seed}: {violation}")
    return 1 if any(c.violations for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())

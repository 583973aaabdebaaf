"""MCP servers that misbehave at random: the MCP client's promises under fuzzing.

Each seed draws one or two hostile servers (tests/fuzz/mcp_server.py, a plan each: hangs on
``initialize``, ``tools/list`` or a call, slow starts, crashes at start-up or mid-call,
duplicate names, names taken by the agent's own tool, schemas that are not objects, huge and
unreadable outputs, an endless line, stderr floods, children and grandchildren, a server that
ignores its stdin closing and SIGTERM), the agent's own tool or not, a model that calls the
listed tools (and one that does not exist) over a few turns, a run timeout or none, and a
cancel token fired at a random moment or not. Invariants, checked on every seed:

1. the run returns a result or raises an ``AgentError`` (never another exception) and ends
   within its limits: its timeout or cancel plus a slack, else a bound made of the servers'
   start-up and call timeouts;
2. every tool call id in the history is answered exactly once (``HistoryChecker``);
3. ``agent.close()`` returns, and raises nothing;
4. no process is left behind: no child of this process, and none of the servers' children
   or grandchildren, is alive after the close;
5. no thread is left behind once the run's event loop has closed;
6. nothing is logged as never retrieved, and no object complains as it is collected
   (asyncio's exception handler and ``sys.unraisablehook``).

    python -m tests.fuzz.mcp --runs 300 --seed 0        # the campaign (make fuzz)
    python -m tests.fuzz.mcp --explain 17               # one seed's scenario and outcome
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcycle import Agent, AgentError, CancelToken, Limits, tool
from toolcycle.mcp import MCPTools
from toolcycle.models.protocol import HistoryChecker, ProtocolViolation
from toolcycle.testing import ScriptedModel, call

SERVER = str(Path(__file__).with_name("mcp_server.py"))
NAMES = ["alpha", "beta", "gamma", "dotted.name", "local_tool"]
CALLS = ["ok", "ok", "ok", "hang", "crash", "slow", "error", "is_error", "huge", "garbage",
         "changed", "stderr", "endless_line"]
#: Seconds a run may overrun its timeout or cancel (the final answer, cancelling the calls in
#: flight, a loaded 2-core host).
SLACK = 8.0


@tool
async def local_tool() -> str:
    """The agent's own tool (an MCP server may list the same name); async, so that no tool
    thread of the engine's (kept for reuse by design) reads as a thread left behind."""
    return "local"


@dataclass
class Scenario:
    seed: int
    plans: list[dict[str, Any]]
    options: list[dict[str, Any]]
    own_tool: bool
    turns: list[list[str]]
    timeout: float | None
    on_limit: str
    cancel_at: float | None

    def bound(self) -> float:
        """The longest the run may take."""
        ends = [t + SLACK for t in (self.timeout, self.cancel_at) if t is not None]
        if ends:
            return min(ends)
        per_server = sum((o["max_restarts"] + 2) * o["startup_timeout"] for o in self.options)
        calls = sum(len(turn) for turn in self.turns)
        return per_server + calls * max(o["call_timeout"] for o in self.options) + SLACK


@dataclass
class Report:
    seed: int
    violations: list[str] = field(default_factory=list)
    outcome: str = ""
    seconds: float = 0.0


def draw(seed: int, pidfile: str) -> Scenario:
    rng = random.Random(seed)
    plans, options = [], []
    for _ in range(rng.choice([1, 1, 2])):
        names = rng.sample(NAMES, rng.randint(1, 3))
        if rng.random() < 0.2:
            names.append(names[0])  # listed twice
        tools = [[n, rng.choice(["object"] * 8 + ["string", "junk"])] for n in names]
        plan: dict[str, Any] = {
            "tools": tools,
            "calls": {n: rng.choice(CALLS) for n in names},
            "init": rng.choice(["ok"] * 18 + ["hang", "crash"]),
            "list": rng.choice(["ok"] * 14 + ["hang", "crash", "hang_later", "hang_later"]),
            "start_delay": rng.choice([0, 0, 0, 0.2, 1.5]),
            "stderr_bytes": rng.choice([0, 0, 0, 2_000_000]),
            "children": rng.choice([0, 0, 1, 2]),
            "grandchildren": rng.random() < 0.5,
            "ignore_stdin_close": rng.random() < 0.1,
            "pidfile": pidfile,
        }
        plans.append(plan)
        options.append({"startup_timeout": rng.choice([0.5, 1.0, 3.0]),
                        "call_timeout": rng.choice([0.5, 1.0]),
                        "max_restarts": rng.choice([0, 1, 2]),
                        "prefix": f"s{len(plans)}_" if rng.random() < 0.2 else ""})
    callable_names = sorted({(o["prefix"] + n).replace(".", "_")
                             for p, o in zip(plans, options, strict=True)
                             for n, _ in p["tools"]} | {"local_tool", "nope"})
    turns = [rng.sample(callable_names, rng.randint(1, min(3, len(callable_names))))
             for _ in range(rng.randint(0, 3))]
    return Scenario(
        seed, plans, options, own_tool=rng.random() < 0.5, turns=turns,
        timeout=rng.choice([None, None, 1.0, 2.0, 4.0]),
        on_limit=rng.choice(["error", "partial", "final_answer"]),
        cancel_at=rng.choice([None, None, None, 0.1, 0.7, 1.5]))


def _script(turns: list[list[str]]) -> Any:
    position = [0]

    def reply(messages: Any, settings: Any) -> Any:
        if position[0] < len(turns):
            position[0] += 1
            return [call(name, {}) for name in turns[position[0] - 1]]
        return "done"
    return reply


async def _run(scenario: Scenario, report: Report) -> None:
    asyncio.get_running_loop().set_exception_handler(
        lambda _, context: report.violations.append(f"6 asyncio: {context.get('message')}"))
    servers = [MCPTools.stdio(sys.executable, SERVER, env={"FUZZ_MCP_PLAN": json.dumps(p)}, **o)
               for p, o in zip(scenario.plans, scenario.options, strict=True)]
    tools: list[Any] = [*servers, local_tool] if scenario.own_tool else servers
    agent = Agent(ScriptedModel(_script(scenario.turns)), tools=tools,
                  limits=Limits(timeout=scenario.timeout, on_limit=scenario.on_limit))  # type: ignore[arg-type]
    token = CancelToken()
    if scenario.cancel_at is not None:
        asyncio.get_running_loop().call_later(scenario.cancel_at, token.cancel)
    started = time.monotonic()
    result = None
    try:
        result = await asyncio.wait_for(agent.run("go", cancel_token=token), scenario.bound())
        report.outcome = f"{result.status}/{result.termination.reason}"
    except AgentError as error:
        result = error.result
        report.outcome = error.code
    except TimeoutError:
        report.violations.append(f"1 the run did not end within {scenario.bound():.1f} s")
    except Exception as exc:  # (that is the violation)
        report.violations.append(f"1 the run raised {type(exc).__name__}, not an AgentError: "
                                 f"{str(exc)[:120]}")
    report.seconds = time.monotonic() - started
    if result is not None:
        try:
            HistoryChecker().check(result.messages)
        except ProtocolViolation as exc:
            report.violations.append(f"2 history: {exc}")
    try:
        await asyncio.wait_for(agent.close(), 30)
    except Exception as exc:
        report.violations.append(f"3 close raised {type(exc).__name__}: {str(exc)[:120]}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children() -> list[int]:
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                found.append(int(entry))
    return found


def run_seed(seed: int) -> Report:
    report = Report(seed)
    with tempfile.TemporaryDirectory() as work:
        pidfile = os.path.join(work, "children")
        scenario = draw(seed, pidfile)
        threads = set(threading.enumerate())
        # children this process had before the run (a test session's PostgreSQL server, a Ray
        # node, an earlier test file's server in the same xdist worker) are not the run's
        before = set(_children())
        hook = sys.unraisablehook
        sys.unraisablehook = lambda raised: report.violations.append(
            f"6 unraisable: {raised.exc_type.__name__}: {raised.exc_value} in {raised.object!r}")
        try:
            asyncio.run(_run(scenario, report))
            gc.collect()  # what was left unretrieved or unclosed says so now
        finally:
            sys.unraisablehook = hook
        spawned = ([int(p) for p in Path(pidfile).read_text().split()]
                   if os.path.exists(pidfile) else [])
        deadline = time.monotonic() + 2.0  # orphans are reaped by init, not by us
        while (left := [p for p in [*spawned, *_children()]
                        if p not in before and _alive(p)]) and (
                time.monotonic() < deadline):
            time.sleep(0.05)
        if left:
            report.violations.append(f"4 processes left behind: {left}")
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
        extra = [t.name for t in threading.enumerate() if t not in threads and t.is_alive()]
        if extra:
            report.violations.append(f"5 threads left behind: {extra}")
    return report


def run_many(seeds: list[int], workers: int = 1) -> list[Report]:
    if workers <= 1:
        return [run_seed(seed) for seed in seeds]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(run_seed, seeds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.mcp", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--explain", type=int, metavar="SEED")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the left-out tools' warnings are expected
    if args.explain is not None:
        print(json.dumps(draw(args.explain, "PIDFILE").__dict__, indent=1, default=str))
        report = run_seed(args.explain)
        print(report.outcome, f"{report.seconds:.1f} s", report.violations or "no violation")
        return 1 if report.violations else 0
    started = time.monotonic()
    reports = run_many(list(range(args.seed, args.seed + args.runs)), args.workers)
    bad = [r for r in reports if r.violations]
    for report in bad:
        print(f"seed {report.seed}: {'; '.join(report.violations)}")
    outcomes: dict[str, int] = {}
    for report in reports:
        outcomes[report.outcome or "-"] = outcomes.get(report.outcome or "-", 0) + 1
    print(f"{len(reports)} seeds ({args.seed}..{args.seed + args.runs - 1}), "
          f"{len(bad)} with violations, {time.monotonic() - started:.0f} s; outcomes: "
          f"{dict(sorted(outcomes.items()))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
